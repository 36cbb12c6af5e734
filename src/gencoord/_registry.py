"""Named plugins, the one way gencoord is extended: experiment kinds, backend families, worlds, task formats.

A registry holds objects under their ``name``: gencoord's own, imported on first use so
that start-up stays light, ones registered in-process, and ones that other installed
packages declare as Python entry points in the registry's group (the shape of
Gymnasium's ``register``/``make``). Callers look a name up and never branch on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import Generic, TypeVar, cast

from gencoord.errors import ConfigError, did_you_mean
from gencoord.reasons import Reason

T = TypeVar("T")


@cache
def _declared(group: str) -> dict[str, str]:
    """What installed packages declare in an entry-point group (name → ``module:attribute``), read once."""
    return {point.name: point.value for point in entry_points(group=group)}


class Registry(Generic[T]):
    """Objects of type ``kind`` (abstract classes included) by name; ``what`` names them in errors.

    A name comes from a config or the command line, so every refusal is a ConfigError:
    ``UNKNOWN_NAME`` (with the near miss and every known name), ``BAD_PLUGIN``, ``DUPLICATE_PLUGIN``.
    """

    def __init__(
        self,
        what: str,
        group: str,
        kind: type,
        built_in: Mapping[str, str],
    ) -> None:
        self.what, self.group, self.kind = what, group, kind
        self._built_in = dict(built_in)
        self._registered: dict[str, T] = {}
        self.version = 0
        """Bumped by each registration: caches built over the registry (a config union) key on it."""

    def register(self, item: T) -> T:
        """Make ``item`` available under its ``name``. A name is registered once."""
        if not isinstance(item, self.kind):
            raise ConfigError(Reason.BAD_PLUGIN, f"{item!r} is not a {self.kind.__name__}")
        name = str(getattr(item, "name", ""))
        if self._registered.get(name, item) is not item:
            raise ConfigError(Reason.DUPLICATE_PLUGIN, f"a {self.what} named {name!r} is already registered")
        if name not in self._registered:
            self._registered[name] = item
            self.version += 1
        return item

    def names(self) -> list[str]:
        """Every name a user may write: gencoord's, registered ones, and installed plugins'."""
        return sorted({*self._built_in, *self._registered, *_declared(self.group)})

    def get(self, name: str, origin: str | None = None) -> T:
        """The object of that name, loaded (built in, or a plugin's entry point) on first use."""
        found = self._registered.get(name)
        if found is not None:
            return found
        target = self._built_in.get(name) or _declared(self.group).get(name)
        if target is None:
            where = f"{origin}: " if origin else ""
            hint = did_you_mean(name, self.names()) or ""
            raise ConfigError(
                Reason.UNKNOWN_NAME, f"{where}unknown {self.what} {name!r}{hint}; known: {', '.join(self.names())}"
            )
        module, _, attribute = target.partition(":")
        try:
            loaded = getattr(import_module(module), attribute)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(Reason.BAD_PLUGIN, f"{self.what} {name!r} ({target}) cannot be loaded: {exc}") from None
        if not isinstance(loaded, self.kind) or getattr(loaded, "name", None) != name:
            raise ConfigError(Reason.BAD_PLUGIN, f"{target} is not a {self.kind.__name__} named {name!r}")
        return self.register(cast(T, loaded))
