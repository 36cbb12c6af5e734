"""Which Minecraft server a run uses, and the player each agent logs in as."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gencoord.worlds.mineflayer.layout import Cell

_PLAYER_NAME = re.compile(r"[A-Za-z0-9_]{3,16}")
_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class ServerOptions:
    """Which server: our embedded one (``host`` None), or one a user runs."""

    host: str | None = None
    port: int = 25565
    version: str = "1.21.4"
    origin: Cell = (0, 0, 0)  # where the task data's (0, 0, 0) is in that world
    view_port: int | None = None  # serve a live browser view (prismarine-viewer) on this local port

    @property
    def embedded(self) -> bool:
        return self.host is None


def player_names(agents: Sequence[str]) -> dict[str, str]:
    """Agent → the Minecraft player that plays it: any task's names log in.

    A valid player name (3-16 letters, digits or _) is kept; another is made one (other
    characters become _, a short name is padded with _, a long one cut), unique ignoring
    case as the server's are.
    """
    players: dict[str, str] = {}
    taken: set[str] = set()
    for name in agents:
        if _PLAYER_NAME.fullmatch(name) and name.lower() not in taken:
            players[name] = name
            taken.add(name.lower())
    for name in agents:
        if name in players:
            continue
        base = _NOT_IN_NAMES.sub("_", name)[:16].ljust(3, "_")
        candidate, number = base, 1
        while candidate.lower() in taken:
            suffix = f"_{number}"
            candidate, number = base[: 16 - len(suffix)] + suffix, number + 1
        players[name] = candidate
        taken.add(candidate.lower())
    return {name: players[name] for name in agents}
