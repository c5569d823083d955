"""Rendering results for people: terminal tables (and later HTML and CSV), from result documents only."""
