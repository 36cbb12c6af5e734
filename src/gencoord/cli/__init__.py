"""The ``gencoord`` command line; every command registers itself on :data:`app`, in the order help lists them."""

from gencoord.cli import messages, episodes, experiments, tasks, training  # noqa: I001  (registration order)
from gencoord.cli.application import app, main

__all__ = ["app", "episodes", "experiments", "main", "messages", "tasks", "training"]
