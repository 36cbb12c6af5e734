"""The choices a team task runs under, in a module of their own: the command line shows them in ``--help``
without loading the planner and the worlds that carry them out."""

from __future__ import annotations

from enum import StrEnum


class TeamMode(StrEnum):
    PRIVATE = "private"  # each agent knows its own bag; the rest crosses the wire
    CENTRALIZED = "centralized"  # the reference: the lead's planner sees every bag


class TeamSurface(StrEnum):
    """The wire forms team messages take (the JSON surface of the paper's records is not one of them)."""

    DSL = "dsl"  # the Short DSL
    FREEFORM = "freeform"  # controlled free-form sentences, read by the shared extractor
