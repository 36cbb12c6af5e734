"""Training data and training for learned commitment backends."""
