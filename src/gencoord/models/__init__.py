"""Trained commitment models at inference time: what a checkpoint is, how to load it, how to decode.

Serving a model imports this package only; the training loop (``gencoord.train``) sits
above it and writes the checkpoints it reads.
"""
