"""Running episodes: the protocol algorithms (S1/S2) and the whole episode pipeline."""
