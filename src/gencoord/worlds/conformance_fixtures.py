"""What the executor conformance checks stand on: a small world, its programs, and a failed expectation.

Public so that a test of a world can run the same programs (``conformance_world``,
``conformance_program``) outside the checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gencoord.prior.prior import Prior
from gencoord.worlds.actions import (
    Action,
    CraftItem,
    GiveItem,
    GoTo,
    ObtainBlock,
    Program,
)
from gencoord.worlds.executor import ActionRecord
from gencoord.worlds.spec import AgentSpec, WorldSpec

A, B = "agent_a", "agent_b"


class ExpectationError(Exception):
    """One broken expectation inside a check."""


def expect(holds: bool, what: str) -> None:
    if not holds:
        raise ExpectationError(what)


def conformance_world(
    prior: Prior,
    inventories: Mapping[str, Mapping[str, int]] | None = None,
    forbidden: Mapping[str, frozenset[str]] | None = None,
    contents: Mapping[str, Mapping[str, int]] | None = None,
) -> WorldSpec:
    """The prior's default grounding with its agents at the origin, holding ``inventories``."""
    inventories = inventories or {}
    forbidden = forbidden or {}
    agents = tuple(
        AgentSpec(name, (float(i), 64.0, 0.0), dict(inventories.get(name, {})), forbidden.get(name, frozenset()))
        for i, name in enumerate(prior.default_episode.agents)
    )
    return WorldSpec(agents, dict(prior.default_episode.refs), contents or {})


def conformance_program(
    actions: Sequence[Action], deps: Mapping[int, tuple[int, ...]] | None = None, handoffs: tuple[int, ...] = ()
) -> Program:
    """A program of ``actions`` with the given dependencies (index → predecessor indices)."""
    deps = deps or {}
    return Program(tuple(actions), tuple(deps.get(i, ()) for i in range(len(actions))), handoffs)


def handoff_actions() -> list[Action]:
    """The paper's recorded episode, written as actions: B gathers 8 planks, hands them over, A crafts."""
    return [
        GoTo(B, "b#1", "lumber_yard", "ref"),
        *(ObtainBlock(B, "b#1", "lumber_yard", "oak_planks") for _ in range(8)),
        GoTo(B, "b#2", A, "agent"),
        GiveItem(B, "b#2", A, "oak_planks", 8),
        GoTo(A, "a#1", "crafting_station", "ref"),
        CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station"),
    ]


def failure_code(record: ActionRecord) -> str | None:
    return None if record.failure is None else record.failure.code
