"""Pair-episode experiments (the papers' tables): the kind, its rows, tables and figures."""
