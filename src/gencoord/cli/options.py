"""Options several commands share: where actions run, and which surface a message speaks."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from gencoord.errors import ConfigError
from gencoord.worlds.choice import WorldChoice


class WorldKind(StrEnum):
    SIM = "sim"
    MINECRAFT = "minecraft"


WorldOption = Annotated[
    WorldKind | None, typer.Option(help="Where actions run: the embedded simulator, or real Minecraft.")
]
HostOption = Annotated[
    str | None, typer.Option(help="Minecraft: a server you run (default: start our embedded server).")
]
PortOption = Annotated[int, typer.Option(min=1, max=65535, help="Minecraft: the port of --host.")]
VersionOption = Annotated[str, typer.Option("--mc-version", help="Minecraft: the game version of --host.")]
OriginOption = Annotated[
    str, typer.Option(help="Minecraft: x,y,z of the task data's origin in that world (a flat, empty area).")
]


def world_choice(world: WorldKind | None, host: str | None, port: int, version: str, origin: str) -> WorldChoice | None:
    """The world the options ask for; None when they leave it to the config."""
    if world is None:
        if host is not None:
            raise ConfigError("HOST_WITHOUT_WORLD", "--host names a Minecraft server: add --world minecraft")
        return None
    try:
        x, y, z = (int(part) for part in origin.split(","))
    except ValueError:
        raise ConfigError("BAD_ORIGIN", f"--origin must be three integers x,y,z, not {origin!r}") from None
    return WorldChoice(kind=world.value, host=host, port=port, version=version, origin=(x, y, z))
