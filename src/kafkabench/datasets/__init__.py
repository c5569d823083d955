"""Data for the compression lab: rows that behave like real data (never random letters, never one
repeated record), the user's own CSV, or files that are already compressed (images)."""
