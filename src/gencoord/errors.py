"""Typed errors shared by every pipeline stage.

Every boundary (wire, parser, contract, resolver, materializer, prior loader) raises a
subclass of :class:`GencoordError` that carries the protocol failure code, the stage,
a stable machine-readable reason and a location, so that a model, a peer or a user
gets a message they can act on and a caller can branch on codes, never on prose.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from gencoord.reasons import Reason


class FailureCode(StrEnum):
    """The paper's seven protocol failure codes (Table S3)."""

    PARSE_FAILURE = "PARSE_FAILURE"
    CONTRACT_REJECT = "CONTRACT_REJECT"
    RESOLUTION_CONFLICT = "RESOLUTION_CONFLICT"
    MATERIALIZATION_FAILURE = "MATERIALIZATION_FAILURE"
    EXECUTION_FAILURE = "EXECUTION_FAILURE"
    HANDOFF_FAILURE = "HANDOFF_FAILURE"
    TERMINAL_FAILURE = "TERMINAL_FAILURE"


class OperationalCode(StrEnum):
    """Codes of errors that are no protocol outcome: bad input files, dead backends, a caller's misuse.

    A :class:`FailureCode` is what an episode can end in (a record counts it); one of these
    stops a command or a run before an episode could be judged.
    """

    PRIOR_INVALID = "PRIOR_INVALID"
    CONFIG_INVALID = "CONFIG_INVALID"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    CONFORMANCE = "CONFORMANCE"
    CALL_ORDER = "CALL_ORDER"


@dataclass(frozen=True, slots=True)
class Location:
    """Where in a message a problem sits; every field is optional.

    ``task_index`` is 1-based, as a person counts tasks in a path.
    """

    line: int | None = None
    column: int | None = None
    section: str | None = None  # "SELF", "REQ", "RESPONSE", "JSON", ...
    task_index: int | None = None
    skill: str | None = None
    key: str | None = None

    def describe(self) -> str:
        parts: list[str] = []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.column is not None:
            parts.append(f"column {self.column}")
        if self.section is not None and self.task_index is not None:
            task = f"{self.section} task {self.task_index}"
            parts.append(f"{task} ({self.skill})" if self.skill else task)
        elif self.section is not None:
            parts.append(self.section)
        return ", ".join(parts)

    def as_dict(self) -> dict[str, int | str]:
        return {
            name: value
            for name in ("line", "column", "section", "task_index", "skill", "key")
            if (value := getattr(self, name)) is not None
        }


class GencoordError(Exception):
    """Base error: ``code`` is a :class:`FailureCode` (the paper's protocol outcomes) or an
    :class:`OperationalCode`; ``reason`` a stable sub-code (``docs/errors.md`` lists them all).

    gencoord's own reasons are :class:`~gencoord.reasons.Reason` members (the catalogue's check refuses
    a string there); a plugin outside the package may give its own as a plain string.
    """

    code: str = "ERROR"
    stage: str = "unknown"

    def __init__(self, reason: Reason | str, message: str, location: Location | None = None) -> None:
        self.reason = reason
        self.message = message
        self.location = location or Location()
        super().__init__(self.__str__())

    def __reduce__(self) -> tuple[type[GencoordError], tuple[str, str, Location]]:
        """Rebuild from the three fields: errors cross process boundaries (worker pools)."""
        return (self.__class__, (self.reason, self.message, self.location))

    def __str__(self) -> str:
        where = self.location.describe()
        return f"{self.code} at {where}: {self.message}" if where else f"{self.code}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": False,
            "code": self.code,
            "stage": self.stage,
            "reason": self.reason,
            "location": self.location.as_dict(),
            "message": self.message,
        }


class ProtocolFailureError(GencoordError):
    """What a model or a peer can cause in the exchange: an outcome with a :class:`FailureCode`, recorded, never
    a crash. Catch it to tell a team's failure from the tooling's (:class:`OperationalError`)."""


class OperationalError(GencoordError):
    """The tooling failing, not the team: a file or setting that does not load, a backend or world that cannot
    answer, an API used out of order. Its code is an :class:`OperationalCode` (a world's, the execution failure
    it ends an episode with); the run stops or refuses, with a message that says what to fix."""

    @property
    def outage(self) -> bool:
        """Whether the infrastructure went down (:data:`OUTAGES`): the task is run again, never failed for it."""
        return self.reason in OUTAGES


class ParseError(ProtocolFailureError):
    code = FailureCode.PARSE_FAILURE.value
    stage = "parse"


class WireError(ParseError):
    """A message rejected before parsing: too large or not UTF-8."""

    stage = "wire"


class ContractError(ProtocolFailureError):
    code = FailureCode.CONTRACT_REJECT.value
    stage = "contract"


class ResolutionError(ProtocolFailureError):
    code = FailureCode.RESOLUTION_CONFLICT.value
    stage = "resolve"


class MaterializationError(ProtocolFailureError):
    code = FailureCode.MATERIALIZATION_FAILURE.value
    stage = "materialize"


class PriorError(OperationalError):
    """A prior file (skills, keys, grounding, templates) that does not load or validate."""

    code = OperationalCode.PRIOR_INVALID.value
    stage = "prior"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' did you mean ...?' suffix for the closest choice, or ''."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


class CompileError(ProtocolFailureError):
    """A dispatch plan that cannot become executor actions in this world (e.g. no source of an item)."""

    code = FailureCode.EXECUTION_FAILURE.value
    stage = "compile"


class ConfigError(OperationalError):
    """A task suite, world or episode description that does not load or validate."""

    code = OperationalCode.CONFIG_INVALID.value
    stage = "config"


class BackendError(OperationalError):
    """A backend that cannot answer at all (a dead API, a broken checkpoint): the run stops, resumably."""

    code = OperationalCode.BACKEND_UNAVAILABLE.value
    stage = "backend"


class ConformanceError(OperationalError):
    """An executor or backend that breaks the shared contract; the message lists each broken check."""

    code = OperationalCode.CONFORMANCE.value
    stage = "conformance"


class CallOrderError(OperationalError):
    """An API used out of order (an executor's ``run`` or ``snapshot`` before ``reset``): a caller's bug."""

    code = OperationalCode.CALL_ORDER.value
    stage = "world"


WORLD_OUTAGES = frozenset(
    {
        Reason.SERVER_DIED,
        Reason.SERVER_TIMEOUT,
        Reason.BRIDGE_DIED,
        Reason.BRIDGE_TIMEOUT,
        Reason.NODE_UNAVAILABLE,
        Reason.BOT_DISCONNECTED,
    }
)
"""World reasons that are the infrastructure failing (a server, bridge or bot connection that died or
stopped answering), not the world refusing an action: a task they end did not run, it did not fail."""

OUTAGES = WORLD_OUTAGES | {Reason.API_UNAVAILABLE}
"""Every outage: the world's, and a model endpoint that stopped answering through its retries."""


class WorldError(OperationalError):
    """A world that cannot run an episode: a dead server or bridge, a set-up that never took hold.

    One whose reason is in :data:`WORLD_OUTAGES` is an outage: the task is run again from its start,
    and if the world stays down the run stops so that it can resume. Any other ends the episode as an
    execution failure with this reason, and the run goes on.
    """

    code = FailureCode.EXECUTION_FAILURE.value
    stage = "world"
