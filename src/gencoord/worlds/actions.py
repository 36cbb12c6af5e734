"""Executor actions: the closed set of things a compiled plan asks an agent's body to do.

Every action names its actor and the plan task it serves, so an execution trace can be
read back against the dispatch plan (which task failed, which action was the handoff).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from gencoord.dsl.cells import Cell


@dataclass(frozen=True, slots=True)
class GoTo:
    name: ClassVar[str] = "go_to"
    agent: str
    task: str
    target: str  # a ref, or another agent
    target_kind: Literal["ref", "agent"]
    detour: bool = False  # take the long way round a blocked route


@dataclass(frozen=True, slots=True)
class ObtainBlock:
    """Break one block of the resource area ``source`` and pick up what it drops."""

    name: ClassVar[str] = "obtain_block"
    agent: str
    task: str
    source: str
    block: str


@dataclass(frozen=True, slots=True)
class Hunt:
    """Kill animals of the herd ``herd`` and pick up their drops until ``count`` more ``item`` are held.

    One action, not one per animal: an animal drops a random amount (a rabbit may drop no
    meat), so how many kills a task takes is known only in the world.
    """

    name: ClassVar[str] = "hunt"
    agent: str
    task: str
    herd: str
    animal: str
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class Withdraw:
    name: ClassVar[str] = "withdraw"
    agent: str
    task: str
    container: str
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class GiveItem:
    name: ClassVar[str] = "give_item"
    agent: str
    task: str
    to: str
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class Deposit:
    name: ClassVar[str] = "deposit"
    agent: str
    task: str
    container: str
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class CraftItem:
    """Run a recipe ``runs`` times; ``station`` None means the inventory's 2x2 grid."""

    name: ClassVar[str] = "craft_item"
    agent: str
    task: str
    item: str
    runs: int
    material: str | None
    station: str | None


@dataclass(frozen=True, slots=True)
class PlaceBlock:
    name: ClassVar[str] = "place_block"
    agent: str
    task: str
    site: str
    item: str


@dataclass(frozen=True, slots=True)
class PlaceAt:
    """Place one ``block`` from the bag at ``cell`` (an offset of build site ``site``), walking within reach first."""

    name: ClassVar[str] = "place_at"
    agent: str
    task: str
    site: str
    cell: Cell
    block: str
    stand: Cell | None = None  # where to stand (feet, site offsets), as the compiler planned it; None: the nearest


@dataclass(frozen=True, slots=True)
class BreakAt:
    """Break the ``block`` standing at ``cell`` of build site ``site`` (scaffolding), walking within reach first.

    The block drops what vanilla drops where it stood; nobody is counted as picking it up.
    """

    name: ClassVar[str] = "break_at"
    agent: str
    task: str
    site: str
    cell: Cell
    block: str
    stand: Cell | None = None  # where to stand (feet, site offsets), as the compiler planned it; None: the nearest


@dataclass(frozen=True, slots=True)
class StepAside:
    """Walk to ``feet`` (site offsets of build site ``site``): out of the way before a teammate closes a wall."""

    name: ClassVar[str] = "step_aside"
    agent: str
    task: str
    site: str
    feet: Cell


@dataclass(frozen=True, slots=True)
class Pillar:
    """Stand in ``cell`` of build site ``site``, jump, and place ``block`` under the feet: one step up a tower."""

    name: ClassVar[str] = "pillar"
    agent: str
    task: str
    site: str
    cell: Cell
    block: str


@dataclass(frozen=True, slots=True)
class DigDown:
    """Break the ``block`` at ``cell`` under the feet (a tower's top) and drop onto what is below."""

    name: ClassVar[str] = "dig_down"
    agent: str
    task: str
    site: str
    cell: Cell
    block: str


@dataclass(frozen=True, slots=True)
class PlaceStation:
    """Put a held station block (a crafting table) down at the station spot ``station``."""

    name: ClassVar[str] = "place_station"
    agent: str
    task: str
    station: str
    item: str


@dataclass(frozen=True, slots=True)
class FurnaceLoad:
    name: ClassVar[str] = "furnace_load"
    agent: str
    task: str
    station: str
    slot: Literal["input", "fuel"]
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class FurnaceCollect:
    """Take ``count`` smelted items out, waiting while the furnace still works on them."""

    name: ClassVar[str] = "furnace_collect"
    agent: str
    task: str
    station: str
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class Wait:
    name: ClassVar[str] = "wait"
    agent: str
    task: str
    ticks: int


Action = (
    GoTo
    | ObtainBlock
    | Hunt
    | Withdraw
    | GiveItem
    | Deposit
    | CraftItem
    | PlaceBlock
    | PlaceAt
    | BreakAt
    | StepAside
    | Pillar
    | DigDown
    | PlaceStation
    | FurnaceLoad
    | FurnaceCollect
    | Wait
)
"""One executor action: what ``compile`` emits and every world carries out (the union of the action types above)."""

ACTION_NAMES = frozenset(
    kind.name
    for kind in (
        GoTo,
        ObtainBlock,
        Hunt,
        Withdraw,
        GiveItem,
        Deposit,
        CraftItem,
        PlaceBlock,
        PlaceAt,
        BreakAt,
        StepAside,
        Pillar,
        DigDown,
        PlaceStation,
        FurnaceLoad,
        FurnaceCollect,
        Wait,
    )
)


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled plan: actions in a valid execution order, with cross-task dependencies.

    ``deps[i]`` lists the actions that must finish before action ``i`` may start (the
    same agent's earlier actions are implied). ``handoffs`` are the indexes of the
    actions that carry the committed hand-overs, in program order; the hand-over check
    H runs after each.
    """

    actions: tuple[Action, ...]
    deps: tuple[tuple[int, ...], ...]
    handoffs: tuple[int, ...]
