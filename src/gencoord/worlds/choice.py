"""Which world runs an episode's actions, as a config value that can cross process boundaries.

Experiment configs, the command line and worker processes all name a world with a
WorldChoice: a registered world's name (``worlds/registry.py``) and the settings that
world reads; ``executor_for`` turns it into an executor once per process and keeps it, so
a Minecraft server and its bots stay warm from one episode to the next.
"""

from __future__ import annotations

import atexit
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from gencoord._config import validation_message
from gencoord.errors import ConfigError, did_you_mean
from gencoord.reasons import Reason
from gencoord.worlds.executor import Executor, OrderEnforcing
from gencoord.worlds.registry import WORLDS, NoSettings, World

SettingsT = TypeVar("SettingsT", bound=NoSettings)

LEGACY_DEFAULTS: dict[str, Any] = {"host": None, "port": 25565, "version": "1.21.4", "origin": [0, 0, 0]}
"""Minecraft's settings at their defaults, as every ``[world]`` table and run manifest wrote them for every
world before each world owned its settings: read still (and dropped) for a world that does not take them,
and put back in a config's digest, so that a run folder made before keeps its identity."""


def _world(name: object) -> World:
    try:
        return WORLDS.get(str(name))
    except ConfigError as error:
        raise ValueError(error.message) from None


def _legacy_default(key: str, value: object) -> bool:
    """Whether ``key: value`` is one of Minecraft's settings at its default (the view's port: unset)."""
    if key == "view_port":
        return value is None
    if key == "origin":
        return isinstance(value, list | tuple) and list(value) == LEGACY_DEFAULTS["origin"]
    return key in LEGACY_DEFAULTS and value == LEGACY_DEFAULTS[key]


class WorldChoice(BaseModel):
    """A world by name (``kind``: sim, minecraft, or an installed plugin's world) and the settings it reads.

    The settings sit beside ``kind``, flat, as configs have always written them; each world
    validates its own (:attr:`World.settings`), so a plugin world can take settings of its
    own and refuses another world's.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    kind: str = "sim"

    @model_validator(mode="before")
    @classmethod
    def _its_own_settings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kind = str(data.get("kind", "sim"))
        model = _world(kind).settings
        given = {
            key: value
            for key, value in data.items()
            if key != "kind" and (key in model.model_fields or not _legacy_default(key, value))
        }
        foreign = sorted(key for key in given if key not in model.model_fields)
        if foreign:
            takes = ", ".join(model.model_fields) or "none"
            hint = did_you_mean(foreign[0], model.model_fields)
            raise ValueError(f"the {kind} world takes no {', '.join(foreign)} (its settings: {takes}){hint}")
        try:
            settings = model.model_validate(given)
        except ValidationError as error:
            raise ValueError(f"the {kind} world's settings: {validation_message(error)}") from None
        return {"kind": kind, **settings.model_dump()}

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """Its ``kind`` and settings, flat; for a config's digest, Minecraft's defaults put back as before."""
        data: dict[str, Any] = handler(self)
        if info.context and info.context.get("digest"):
            own = {key: value for key, value in data.items() if key not in ("kind", "view_port")}
            legacy = {key: value for key, value in LEGACY_DEFAULTS.items() if key not in own}
            data = {"kind": self.kind, **legacy, **own}
        return data

    @property
    def world(self) -> World:
        return WORLDS.get(self.kind)

    @property
    def settings(self) -> NoSettings:
        """The world's own settings, typed by its model."""
        return self.world.settings.model_validate(self.model_extra or {})

    def settings_as(self, model: type[SettingsT]) -> SettingsT:
        """The settings as ``model`` (the world's own): what a world reads its choice with."""
        settings = self.settings
        if not isinstance(settings, model):
            raise ConfigError(Reason.BAD_WORLD, f"the {self.kind} world's settings are not {model.__name__}")
        return settings

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
