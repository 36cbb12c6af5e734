"""Worlds as plugins: what a config's ``[world] kind`` names, and what a runner needs to know about it.

A world makes executors, and says how it may be run: in the worker's own process (the
simulator: many episodes per chunk, no memory to reserve) or beside it (Minecraft: a server
and bots, one episode per chunk, memory reserved on a Ray node); whether its episodes must
not run in parallel (bots of one name on one shared server); and the settings it reads, a
model of its own (Minecraft's ``host``, ``port``, ``version``, ``origin`` and ``view_port``;
the simulator reads none). gencoord's two are built in; a package adds one through the
``gencoord.worlds`` entry-point group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from gencoord._registry import Registry

if TYPE_CHECKING:
    from gencoord.worlds.choice import WorldChoice
    from gencoord.worlds.executor import Executor


class NoSettings(BaseModel):
    """A world that reads no settings: a config's ``[world]`` table holds its ``kind`` alone."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class MinecraftSettings(NoSettings):
    """Where real Minecraft runs, as ``[world]`` or the command line's options say."""

    host: str | None = None  # a server you run; None starts our embedded one
    port: int = Field(default=25565, ge=1, le=65535)
    version: str = "1.21.4"
    origin: tuple[int, int, int] = (0, 0, 0)  # where the task data's (0, 0, 0) lies in that world
    view_port: int | None = Field(default=None, ge=1, le=65535)  # a live browser view on this port


class World:
    """A kind of world: its name, how a runner treats it, and the executors it makes."""

    name: ClassVar[str]
    settings: ClassVar[type[NoSettings]] = NoSettings
    """The settings it reads, a pydantic model beside ``kind`` in a config's ``[world]`` table."""
    in_process: ClassVar[bool] = True
    """Runs inside the worker's process: a chunk holds many episodes and a Ray worker reserves no memory."""
    compared_with_simulator: ClassVar[bool] = False
    """Gate episodes run the simulator alongside and record where the two disagree, action by action."""

    def one_worker(self, choice: WorldChoice) -> bool:
        """Whether this choice's episodes must not run in parallel."""
        return False

    def make(self, choice: WorldChoice) -> Executor:
        """A new executor for this choice (the runner keeps one per process and closes it at exit)."""
        raise NotImplementedError


class SimWorld(World):
    name = "sim"

    def make(self, choice: WorldChoice) -> Executor:
        from gencoord.worlds.sim import SimExecutor  # noqa: PLC0415 - the game data loads when a world is made

        return SimExecutor()


class MinecraftWorld(World):
    name = "minecraft"
    settings = MinecraftSettings
    in_process = False
    compared_with_simulator = True

    def one_worker(self, choice: WorldChoice) -> bool:
        """Bots of one name fit on a shared server once, and a view serves one world on its port."""
        settings = choice.settings_as(MinecraftSettings)
        return settings.host is not None or settings.view_port is not None

    def make(self, choice: WorldChoice) -> Executor:
        from gencoord.worlds.mineflayer import MinecraftExecutor, ServerOptions  # noqa: PLC0415 - when asked for

        settings = choice.settings_as(MinecraftSettings)
        options = ServerOptions(settings.host, settings.port, settings.version, settings.origin, settings.view_port)
        return MinecraftExecutor(options)


SIM = SimWorld()
MINECRAFT = MinecraftWorld()
WORLDS: Registry[World] = Registry(
    "world",
    "gencoord.worlds",
    World,
    {"sim": "gencoord.worlds.registry:SIM", "minecraft": "gencoord.worlds.registry:MINECRAFT"},
)


def register_world(world: World) -> World:
    """Make ``world`` available to configs' ``[world] kind`` and ``--world`` under ``world.name``."""
    return WORLDS.register(world)
