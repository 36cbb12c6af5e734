"""Training data and training for learned commitment backends."""

MANIFEST = "gencoord-model.json"
"""What every trained checkpoint folder holds beside the weights (light: read without torch)."""
