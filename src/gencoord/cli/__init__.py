"""The ``gencoord`` command line; every command registers itself on :data:`app`, in the order help lists them."""

from gencoord.cli import messages, episodes, experiments, team, training  # noqa: I001  (registration order)
from gencoord.cli.common import app, main

__all__ = ["app", "episodes", "experiments", "main", "messages", "team", "training"]
