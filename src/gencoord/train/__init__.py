"""Training data and training for learned commitment backends (checkpoints are read by ``gencoord.models``)."""
