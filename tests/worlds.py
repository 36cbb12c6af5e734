"""Small hand-built worlds and programs shared by the executor tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gencoord.prior import Prior
from gencoord.worlds.actions import Action, Program
from gencoord.worlds.spec import AgentSpec, WorldSpec


def world(
    prior: Prior,
    inventories: Mapping[str, Mapping[str, int]] | None = None,
    forbidden: Mapping[str, frozenset[str]] | None = None,
    contents: Mapping[str, Mapping[str, int]] | None = None,
) -> WorldSpec:
    """The default grounding, agents a and b at the origin."""
    inventories = inventories or {}
    forbidden = forbidden or {}
    agents = tuple(
        AgentSpec(name, (float(i), 64.0, 0.0), dict(inventories.get(name, {})), forbidden.get(name, frozenset()))
        for i, name in enumerate(prior.default_episode.agents)
    )
    return WorldSpec(agents, dict(prior.default_episode.refs), contents or {})


def program(actions: Sequence[Action], deps: Mapping[int, tuple[int, ...]] | None = None, handoff: int = 0) -> Program:
    deps = deps or {}
    return Program(tuple(actions), tuple(deps.get(i, ()) for i in range(len(actions))), handoff)
