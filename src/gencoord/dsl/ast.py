"""The commitment object as plain, immutable data.

A proposal is ``(self_plan, peer_requests)``; a path is a tuple of tasks; a task is a
skill with typed arguments. Arguments are kept in canonical key order with aliases
already folded (the codec guarantees it), so structural equality *is* the paper's
semantic equality: argument order and alias spelling never matter.
"""

from __future__ import annotations

from dataclasses import dataclass

Value = str | int | float | bool | None
"""A primitive JSON value: what a Short DSL argument can hold."""

Args = tuple[tuple[str, Value], ...]


def _typed(args: Args) -> tuple[tuple[str, type, Value], ...]:
    # Python treats True == 1 == 1.0; the protocol must not (q=true is not q=1).
    return tuple((key, type(value), value) for key, value in args)


@dataclass(frozen=True, slots=True, eq=False)
class Task:
    """One skill invocation, e.g. ``craft.item(q=1,input=oak_planks,item=crafting_table)``."""

    skill: str
    args: Args = ()

    def get(self, key: str) -> Value:
        for name, value in self.args:
            if name == key:
                return value
        return None

    def has(self, key: str) -> bool:
        return any(name == key for name, _ in self.args)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Task):
            return NotImplemented
        return self.skill == other.skill and _typed(self.args) == _typed(other.args)

    def __hash__(self) -> int:
        return hash((self.skill, _typed(self.args)))


Path = tuple[Task, ...]


@dataclass(frozen=True, slots=True)
class PeerRequest:
    """``REQ <target> <plan>``: the path the sender asks ``target`` to carry out."""

    target: str
    plan: Path


@dataclass(frozen=True, slots=True)
class Proposal:
    """A SELF+REQ record. ``REQ -`` is an empty ``peer_requests``; ``SELF -`` an empty ``self_plan``."""

    self_plan: Path
    peer_requests: tuple[PeerRequest, ...] = ()

    @property
    def request(self) -> PeerRequest | None:
        """The single peer request of a bilateral proposal, if there is exactly one."""
        return self.peer_requests[0] if len(self.peer_requests) == 1 else None
