"""Which world runs an episode's actions, as a config value that can cross process boundaries.

Experiment configs, the CLI and worker processes all name a world with a WorldChoice;
``executor_for`` turns it into an executor once per process and keeps it, so a Minecraft
server and its bots stay warm from one episode to the next.
"""

from __future__ import annotations

import atexit
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gencoord.worlds.executor import Executor
from gencoord.worlds.sim import SimExecutor


class WorldChoice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["sim", "minecraft"] = "sim"
    host: str | None = None  # minecraft: a server you run; None starts our embedded one
    port: int = Field(default=25565, ge=1, le=65535)
    version: str = "1.21.4"
    origin: tuple[int, int, int] = (0, 0, 0)  # where the task data's (0, 0, 0) lies in that world
    view_port: int | None = Field(default=None, ge=1, le=65535)  # minecraft: a live browser view on this port

    @property
    def one_worker(self) -> bool:
        """Episodes must not run in parallel: bots of one name fit on a shared server once, and a
        view serves one world on its port."""
        return self.kind == "minecraft" and (self.host is not None or self.view_port is not None)


DEFAULT_VIEW_PORT = 3007  # prismarine-viewer's own default

_EXECUTORS: dict[WorldChoice, Executor] = {}


def executor_for(choice: WorldChoice) -> Executor:
    """This process's executor for ``choice``, started on first use and closed at exit."""
    executor = _EXECUTORS.get(choice)
    if executor is None:
        if choice.kind == "sim":
            executor = SimExecutor()
        else:
            from gencoord.worlds.mineflayer import MinecraftExecutor, ServerOptions  # noqa: PLC0415 - when asked for

            options = ServerOptions(choice.host, choice.port, choice.version, choice.origin, choice.view_port)
            executor = MinecraftExecutor(options)
            atexit.register(executor.close)
        _EXECUTORS[choice] = executor
    return executor


def close_executors() -> None:
    """Close this process's worlds now (a Ray worker is ended without running ``atexit``)."""
    while _EXECUTORS:
        _, executor = _EXECUTORS.popitem()
        executor.close()
