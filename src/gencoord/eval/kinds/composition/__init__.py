"""Composition experiments: longer chains composed from held-out segments (the kind and its tables)."""
