"""Rendering results for people, from result files only: terminal tables, the HTML report, CSV, comparisons."""
