"""The runtime world state ω an episode starts from (visible to executors and verifiers only).

The public refs (containers, sites, stations, resource areas) are the ones messages may
name; ``contents`` and ``deposits`` add what agents do not see in their contexts: what a
chest already holds, how many blocks a resource area has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gencoord.dsl.cells import Cell
from gencoord.prior.public import Ref

Position = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class AgentSpec:
    name: str
    position: Position
    inventory: Mapping[str, int] = field(default_factory=dict)
    forbidden_actions: frozenset[str] = frozenset()  # what this agent's workcell cannot do


@dataclass(frozen=True, slots=True)
class BuildSite:
    """A box of cells where blocks are placed at exact cells: a construction task's site.

    ``origin`` is the world position of site offset (0, 0, 0), on the ground (level 0 rests on
    it); ``size`` is (x, levels, z). Executors clear the box before an episode and report
    every block standing in it.
    """

    origin: tuple[int, int, int]
    size: tuple[int, int, int]
    filled: frozenset[Cell] = frozenset()  # where blocks will stand: a builder on a real body keeps off them
    blueprint: tuple[tuple[Cell, str], ...] = ()  # the plan every agent holds, by cell; empty when it is private

    def plan(self) -> dict[Cell, str]:
        """The shared blueprint's blocks by cell (what a commitment's share counts in)."""
        return dict(self.blueprint)

    def contains(self, cell: Cell) -> bool:
        return all(0 <= c < n for c, n in zip(cell, self.size, strict=True))

    def world(self, cell: Cell) -> tuple[int, int, int]:
        return (self.origin[0] + cell[0], self.origin[1] + cell[1], self.origin[2] + cell[2])

    def cells(self) -> list[Cell]:
        w, h, d = self.size
        return [(x, y, z) for y in range(h) for z in range(d) for x in range(w)]


@dataclass(frozen=True, slots=True)
class WorldSpec:
    """The world an executor is reset to: agents with their bags and spawns, places, container contents,
    deposits and blocked routes. Worlds are built from it, so every world starts from the same facts."""

    agents: tuple[AgentSpec, ...]
    refs: Mapping[str, Ref]
    contents: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # container ref → items
    deposits: Mapping[str, int] = field(default_factory=dict)  # resource ref → blocks available
    blocked: frozenset[str] = frozenset()  # refs whose direct route is blocked: reach them by a detour
    busy_until: Mapping[str, float] = field(default_factory=dict)  # station ref → seconds it stays occupied
    unplaced: frozenset[str] = frozenset()  # station spots with no block until an agent places one there
    builds: Mapping[str, BuildSite] = field(default_factory=dict)  # site ref → its box of exact cells
    fuel: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # furnace or smoker ref → its fuel slot
    seed: int = 0  # what random drops (ripe crops, animals) are rolled from, so an episode replays

    def agent(self, name: str) -> AgentSpec:
        return next(agent for agent in self.agents if agent.name == name)

    def position_of(self, name: str) -> Position:
        return tuple(float(c) for c in self.refs[name].position)  # type: ignore[return-value]
