"""What every kind of simulated action reads and changes: the world's state, and the refusals of an action.

:class:`SimState` declares the state :class:`~gencoord.worlds.sim.executor.SimExecutor` sets
up at ``reset`` and the helpers every action handler shares; the handlers of building
(``building.py``) and of furnaces (``furnaces.py``) extend it, and the executor is all of them.
"""

from __future__ import annotations

import math
import random

from gencoord.dsl.cells import Cell
from gencoord.prior.gamedata import GameData
from gencoord.prior.loot import LootTable
from gencoord.reasons import Reason
from gencoord.worlds.executor import ActionFailure, Items
from gencoord.worlds.sim.physics import TICKS_PER_S, Physics
from gencoord.worlds.spec import Position, WorldSpec
from gencoord.worlds.standing import Terrain


class RefusedError(Exception):
    """An action the simulated world refuses, with its declared reason (the bridge's failures use the same)."""

    def __init__(self, code: Reason, message: str, retry_after_s: float | None = None) -> None:
        self.failure = ActionFailure(code, message, retry_after_s)


def distance(a: Position, b: Position) -> float:
    """Blocks between two positions, as the crow flies."""
    return math.dist(a, b)


def take(items: Items, item: str, count: int, holder: str) -> None:
    """``count`` of ``item`` out of ``holder``'s ``items``, or a refusal naming what is missing."""
    have = items.get(item, 0)
    if count <= 0:
        return
    if have < count:
        raise RefusedError(Reason.MISSING_ITEMS, f"{holder} has {have} {item}, needs {count}")
    if have == count:
        del items[item]
    else:
        items[item] = have - count


def add(items: Items, item: str, count: int) -> None:
    """``count`` of ``item`` into ``items``."""
    if count:
        items[item] = items.get(item, 0) + count


class SimState:
    """The simulated world's state (set at ``reset``) and the checks every action handler shares."""

    game: GameData
    physics: Physics
    loot: LootTable
    _world: WorldSpec | None
    positions: dict[str, Position]
    inventories: dict[str, Items]
    containers: dict[str, Items]
    sites: dict[str, Items]
    blocks: dict[str, dict[Cell, str]]
    terrains: dict[str, Terrain]
    credits: dict[str, dict[str, Items]]
    crafted: dict[str, Items]
    deposits: dict[str, int]
    rng: random.Random
    unplaced: set[str]
    blocked: set[str]
    busy_until: dict[str, float]
    clocks: dict[str, float]
    losing: set[str]

    def _ref(self, name: str, kind: str) -> Position:
        assert self._world is not None
        ref = self._world.refs.get(name)
        if ref is None:
            raise RefusedError(Reason.UNKNOWN_REF, f"{name} does not exist in this world")
        if ref.kind != kind:
            raise RefusedError(Reason.WRONG_REF_KIND, f"{name} is a {ref.kind}, not a {kind}")
        return tuple(float(c) for c in ref.position)  # type: ignore[return-value]

    def _within_reach(self, agent: str, where: Position, what: str) -> None:
        gap = distance(self.positions[agent], where)
        if gap > self.physics.reach_blocks:
            raise RefusedError(
                Reason.OUT_OF_REACH, f"{agent} is {gap:.1f} blocks from {what} (reach {self.physics.reach_blocks})"
            )

    def _slots(self, items: Items) -> int:
        return sum(math.ceil(n / self.game.stack_sizes.get(item, 64)) for item, n in items.items())

    def _make_room(
        self, items: Items, item: str, count: int, holder: str, slots: int, freed: Items | None = None
    ) -> None:
        """Refuse, before anything moves, a transfer the receiving holder has no slots for.

        ``freed`` is what leaves the same holder in the same action (a craft's ingredients).
        """
        after = dict(items)
        for gone, n in (freed or {}).items():
            take(after, gone, n, holder)
        add(after, item, count)
        if self._slots(after) > slots:
            raise RefusedError(Reason.NO_SPACE, f"{holder} has no free slot for {count} {item}")

    def _credit(self, holder: str, agent: str, item: str, count: int) -> None:
        add(self.credits.setdefault(holder, {}).setdefault(agent, {}), item, count)

    @staticmethod
    def _ticks(ticks: float) -> float:
        return ticks / TICKS_PER_S

    def _transfer_ticks(self, item: str, count: int) -> float:
        stacks = math.ceil(count / self.game.stack_sizes.get(item, 64))
        return self._ticks(self.physics.open_window_ticks + stacks * self.physics.click_ticks)
