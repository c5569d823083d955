"""Serialization formats for the compression lab: each encodes a row to bytes and decodes it back."""
