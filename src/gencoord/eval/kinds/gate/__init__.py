"""Gate experiments: when to coordinate, with local recovery, cooldown and fallback (the kind, its cells and tables)."""
