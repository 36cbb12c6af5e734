"""Changes to a running world that nobody's action causes: what the gate's mid-run anomalies do.

A world that can apply them implements :class:`Changeable`; an episode that schedules one
in a world that cannot refuses to start (``UNSUPPORTED_WORLD``) instead of running a
different experiment than the one asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class DepleteSource:
    """A resource area runs dry: no block is left to break."""

    source: str


@dataclass(frozen=True, slots=True)
class BlockRoute:
    """The direct route to a place is walled off: only a detour reaches it."""

    ref: str


@dataclass(frozen=True, slots=True)
class OccupyStation:
    """Someone else works at a station for a while, from now."""

    station: str
    seconds: float


@dataclass(frozen=True, slots=True)
class RemoveItems:
    """Items vanish from an agent's inventory (dropped, despawned, ``/clear``)."""

    agent: str
    item: str
    count: int


@dataclass(frozen=True, slots=True)
class LoseThrow:
    """The giver's next hand-over is lost in flight: the stack leaves its bag and never lands."""

    giver: str


WorldChange = DepleteSource | BlockRoute | OccupyStation | RemoveItems | LoseThrow


@runtime_checkable
class Changeable(Protocol):
    def change(self, change: WorldChange) -> None:
        """Apply ``change`` to the running world at its current time."""
        ...
