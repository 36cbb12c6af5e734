"""Which world runs an episode's actions, as a config value that can cross process boundaries.

Experiment configs, the command line and worker processes all name a world with a
WorldChoice: a registered world's name (``worlds/registry.py``) and the settings that
world reads; ``executor_for`` turns it into an executor once per process and keeps it, so
a Minecraft server and its bots stay warm from one episode to the next.
"""

from __future__ import annotations

import atexit
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from gencoord.errors import ConfigError
from gencoord.worlds.executor import Executor, OrderEnforcing
from gencoord.worlds.registry import WORLDS, World


def _registered(name: str) -> str:
    try:
        WORLDS.get(name)
    except ConfigError as error:
        raise ValueError(error.message) from None
    return name


class WorldChoice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Annotated[str, AfterValidator(_registered)] = "sim"  # sim, minecraft, or an installed plugin's world
    # Minecraft's settings (kept flat, as configs and run manifests have always written them):
    host: str | None = None  # a server you run; None starts our embedded one
    port: int = Field(default=25565, ge=1, le=65535)
    version: str = "1.21.4"
    origin: tuple[int, int, int] = (0, 0, 0)  # where the task data's (0, 0, 0) lies in that world
    view_port: int | None = Field(default=None, ge=1, le=65535)  # a live browser view on this port

    @model_validator(mode="after")
    def _only_its_own_settings(self) -> WorldChoice:
        foreign = [
            name
            for name, field in type(self).model_fields.items()
            if name != "kind" and name not in self.world.settings and getattr(self, name) != field.default
        ]
        if foreign:
            takes = ", ".join(sorted(self.world.settings)) or "none"
            raise ValueError(f"the {self.kind} world takes no {', '.join(foreign)} (its settings: {takes})")
        return self

    @property
    def world(self) -> World:
        return WORLDS.get(self.kind)

    @property
    def one_worker(self) -> bool:
        """Episodes must not run in parallel (the world says when: Minecraft on a shared server, or watched)."""
        return self.world.one_worker(self)


DEFAULT_VIEW_PORT = 3007  # prismarine-viewer's own default

_EXECUTORS: dict[WorldChoice, Executor] = {}


def make_executor(choice: WorldChoice) -> Executor:
    """A new executor of the chosen world, behind the one order-enforcing guard every world gets."""
    return OrderEnforcing(choice.world.make(choice))


def executor_for(choice: WorldChoice) -> Executor:
    """This process's executor for ``choice``, started on first use and closed at exit."""
    executor = _EXECUTORS.get(choice)
    if executor is None:
        executor = make_executor(choice)
        atexit.register(executor.close)
        _EXECUTORS[choice] = executor
    return executor


def close_executors() -> None:
    """Close this process's worlds now (a Ray worker is ended without running ``atexit``)."""
    while _EXECUTORS:
        _, executor = _EXECUTORS.popitem()
        executor.close()
