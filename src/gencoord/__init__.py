"""gencoord: executable skill-path commitments for embodied agent teams (GenCoord)."""

__version__ = "0.1.0"
