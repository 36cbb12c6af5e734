"""Backend names, parsed once into a typed spec, and the families they name.

A backend is written ``<family>`` or ``<family>:<target>`` (``rule``, ``planner``,
``model:<checkpoint>``, ``constrained:<checkpoint>``, ``checked:<checkpoint>``, ``api:<base url>#<model>``,
``prompted:<base>``, ``selector:<name>``), then optionally ``+realizer`` or ``+directory`` (a deterministic
receiver in place of the family's own) and ``@full``, ``@skeleton`` or ``@node`` (the
task-structure view every agent is shown). ``{seed}`` anywhere stands for the episode's
seed (one trained model per seed).

A :class:`BackendSpec` is that name as a string (records, job keys and tables keep the
name as written) that also carries its parsed parts, so nothing downstream parses it
again. Families are plugins: gencoord's own, ``register_backend``, or an entry point in
the ``gencoord.backends`` group of the user's own package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema

from gencoord._registry import Registry
from gencoord.errors import ConfigError, did_you_mean
from gencoord.models.variant import Records
from gencoord.prior.views import PriorView
from gencoord.reasons import Reason

if TYPE_CHECKING:
    from gencoord.backends.base import Backend
    from gencoord.dsl.surface import SurfaceName
    from gencoord.prior.prior import Prior
    from gencoord.tasks.instances import EpisodeSpec
    from gencoord.tasks.suites import SuiteDocument

BackendSet = Callable[["EpisodeSpec", bool, "Prior", "SuiteDocument"], Mapping[str, "Backend"]]
"""(episode, request withheld?, prior, suites) → backend per agent: who plays a two-agent episode."""

ENTRY_POINTS = "gencoord.backends"
SEED = "{seed}"
VIEW_SEPARATOR = "@"
RECEIVER_SEPARATOR = "+"
RECEIVERS = ("realizer", "directory")
"""``<name>+realizer`` or ``<name>+directory``: the family's sender with a deterministic receiver (v2 Table S26;
built in ``registry.RECEIVER_BACKENDS``)."""


class BackendFamily:
    """A family of backends: what a name starting ``<name>`` or ``<name>:`` builds, in each role it can play.

    Every method has a default (a family that does not play a role refuses it by name): a
    family overrides the roles it plays and sets ``plays_pairs`` or ``leads_teams`` to say so.
    """

    name: ClassVar[str]
    target: ClassVar[str | None] = None
    """How the part after ``<name>:`` is written (``<checkpoint>``); None: the family is written bare."""
    checkpoint: ClassVar[bool] = False
    """The target is a checkpoint folder (a config's relative path is read against the config's folder)."""
    calls_api: ClassVar[bool] = False
    """Its backends call a model endpoint: a run caps its workers at the endpoint's concurrency."""
    plays_pairs: ClassVar[bool] = False
    leads_teams: ClassVar[bool] = False
    commitments: ClassVar[frozenset[str] | None] = frozenset({"crafting"})
    """As a team lead, the task kinds whose commitments it writes: a language model writes crafting's n-party
    SELF+REQ. None: every kind's, each through that kind's own planner (the planner family)."""
    answers_teams: ClassVar[bool] = False
    """It plays a team peer: answers a supply question (HAVE) and decides on a proposal (ACCEPT, COUNTER, REJECT)."""

    def check_target(self, target: str) -> None:
        """Raise a ConfigError when ``target`` is not written as this family's targets are."""

    def pair_set(self, target: str | None) -> BackendSet:
        """The backends of a two-agent episode of the paper's suites."""
        raise ConfigError(Reason.UNSUPPORTED_BACKEND, f"{self.name} does not play the paper's two-agent episodes")

    def team_lead(self, target: str | None, prior: Prior) -> Backend:
        """The backend that leads a team task."""
        raise ConfigError(Reason.UNSUPPORTED_BACKEND, f"{self.name} cannot lead a team task")

    def team_peer(self, target: str | None, prior: Prior) -> Backend:
        """The backend that answers for a team task's peers."""
        raise ConfigError(Reason.UNSUPPORTED_BACKEND, f"{self.name} cannot answer as a team peer")

    def fits(self, target: str | None, single_step: bool, surface: SurfaceName, records: Records) -> bool:
        """Whether this family can write the records an episode needs (a trained model writes what it learned)."""
        return True

    def written(self) -> str:
        return self.name if self.target is None else f"{self.name}:{self.target}"

    def label(self, target: str | None) -> str:
        """A short name for people (report rows, figure axes); a checkpoint family names the model, not its path."""
        name = self.name.replace("-", " ")
        if target is None:
            return name
        if self.checkpoint:
            return checkpoint_label(target) + ("" if self.name == "model" else f", {name}")
        return f"{name} {target}"


_SEED_SUFFIX = re.compile(r"-s(\{seed\}|\d+)$")
_ACRONYMS = {"dsl": "DSL", "json": "JSON", "api": "API", "cpu": "CPU", "gpu": "GPU"}


def checkpoint_label(target: str) -> str:
    """``checkpoints/tiny-dsl-copy-s{seed}`` → ``tiny DSL copy model``; a fixed seed stays: ``…, seed 2``.

    ``{seed}`` (a model per episode seed) is left out: every row of such a backend mixes its seeds.
    """
    folder = PurePath(target.rstrip("/")).name or target
    seed = _SEED_SUFFIX.search(folder)
    stem = folder[: seed.start()] if seed else folder
    words = " ".join(_ACRONYMS.get(word.lower(), word) for word in re.split(r"[-_]+", stem) if word)
    fixed = f", seed {seed.group(1)}" if seed and seed.group(1) != SEED else ""
    return f"{words} model{fixed}"


_BUILT_IN = {
    name: f"gencoord.backends.registry:{name.upper().replace('-', '_')}"
    for name in (
        *("rule", "factorized-rule", "planner", "model", "constrained", "checked"),
        *("api", "served", "prompted", "selector"),
    )
}

FAMILIES: Registry[BackendFamily] = Registry("backend", ENTRY_POINTS, BackendFamily, _BUILT_IN)


def register_backend(family: BackendFamily) -> BackendFamily:
    """Make ``family`` available to configs and the command line under ``family.name``."""
    return FAMILIES.register(family)


class BackendSpec(str):
    """A backend name as written, with its parts: family, target, deterministic receiver, view."""

    family: BackendFamily
    target: str | None
    receiver: str | None
    view: PriorView | None

    @property
    def base(self) -> str:
        """The name without its receiver and view: ``<family>`` or ``<family>:<target>``."""
        return self.family.name if self.target is None else f"{self.family.name}:{self.target}"

    @property
    def label(self) -> str:
        """A short name for people: ``tiny DSL copy model · full view``, never a path or a placeholder."""
        parts = [self.family.label(self.target)]
        if self.receiver:
            parts.append(f"{self.receiver} receiver")
        if self.view is not None:
            parts.append(f"{self.view.value} view")
        return " · ".join(parts)

    def for_seed(self, seed: int) -> BackendSpec:
        """The backend an episode of ``seed`` uses (the paper trains one model per seed)."""
        return parse_backend(self.replace(SEED, str(seed)))

    def __reduce__(self) -> tuple[Any, ...]:
        return parse_backend, (str(self),)


def _suffix(name: str, separator: str, allowed: set[str]) -> tuple[str, str | None]:
    base, found, suffix = name.rpartition(separator)
    return (base, suffix) if found and suffix in allowed else (name, None)


def parse_backend(name: str) -> BackendSpec:
    """``name`` as a typed spec, or a ConfigError naming what is wrong and what is known."""
    if isinstance(name, BackendSpec):
        return name
    rest, view = _suffix(name, VIEW_SEPARATOR, {v.value for v in PriorView})
    rest, receiver = _suffix(rest, RECEIVER_SEPARATOR, set(RECEIVERS))
    family_name, colon, target = rest.partition(":")
    try:
        family = FAMILIES.get(family_name)
    except ConfigError as error:
        if error.reason != Reason.UNKNOWN_NAME:
            raise
        known = [FAMILIES.get(known).written() for known in FAMILIES.names()]
        suffixes = [f"<name>{RECEIVER_SEPARATOR}{'|'.join(RECEIVERS)}", f"<name>{VIEW_SEPARATOR}<full|skeleton|node>"]
        hint = did_you_mean(family_name, FAMILIES.names())
        raise ConfigError(
            Reason.UNKNOWN_BACKEND, f"unknown backend {name!r}{hint}; known: {', '.join(known + suffixes)}"
        ) from None
    if family.target is None and colon:
        raise ConfigError(Reason.UNKNOWN_BACKEND, f"backend {family.name} takes no target, got {name!r}")
    if family.target is not None and not target:
        raise ConfigError(Reason.UNKNOWN_BACKEND, f"backend {family.name} is written {family.written()}, got {name!r}")
    family.check_target(target)
    spec = BackendSpec(name)
    spec.family, spec.target, spec.view = family, target if colon else None, PriorView(view) if view else None
    spec.receiver = receiver
    return spec


def recorded_label(name: str) -> str:
    """The short label of a backend name (or team roles) read from a record; the name as recorded when it no
    longer parses (a plugin family that is not installed where the report is written)."""
    try:
        return parse_team_roles(name).label if ROLE_SEPARATOR in name else parse_backend(name).label
    except ConfigError:
        return name


def _validated(value: Any) -> BackendSpec:
    if not isinstance(value, str):
        raise ValueError(f"a backend is a name such as rule or model:<checkpoint>, not {value!r}")
    try:
        return parse_backend(value)
    except ConfigError as error:
        raise ValueError(error.message) from None


def _in_role(plays: Callable[[BackendFamily], bool], refusal: str) -> Callable[[Any], BackendSpec]:
    def validated(value: Any) -> BackendSpec:
        spec = _validated(value)
        if not plays(spec.family):
            raise ValueError(f"{spec} {refusal}")
        return spec

    return validated


_AS_NAME = (PlainSerializer(str, return_type=str), WithJsonSchema({"type": "string"}))

BackendName = Annotated[BackendSpec, PlainValidator(_validated), *_AS_NAME]
"""The field type of a backend in a config: validated and parsed on load, written back as its name."""

PairBackendName = Annotated[
    BackendSpec,
    PlainValidator(_in_role(lambda family: family.plays_pairs, "does not play the paper's two-agent episodes")),
    *_AS_NAME,
]
"""A backend that plays the two agents of the paper's episodes."""

PeerBackendName = Annotated[
    BackendSpec,
    PlainValidator(_in_role(lambda family: family.answers_teams, "cannot answer as a team peer")),
    *_AS_NAME,
]
"""A backend that answers as a team peer (and as the gate's helper)."""

ROLE_SEPARATOR = "="
ROLES = ("lead", "peers")
DEFAULT_PEERS = "rule"
_ROLE = re.compile(r",(?=(?:" + "|".join(ROLES) + r")=)")


class TeamRoles(str):
    """Who plays a team task, as written: ``<lead backend>`` (rule peers), or ``lead=<backend>,peers=<backend>``.

    The name stays as written (records, job keys and table rows keep it); ``lead`` and ``peers``
    are its parsed parts. A role left out keeps its default: the planner leads, rule peers answer.
    """

    lead: BackendSpec
    peers: BackendSpec

    @property
    def label(self) -> str:
        """``planner``; ``tiny team model · tiny team model peers`` when the peers are not the rule."""
        if self.peers.base == DEFAULT_PEERS:
            return self.lead.label
        return f"{self.lead.label} · {self.peers.label} peers"

    @property
    def calls_api(self) -> bool:
        return self.lead.family.calls_api or self.peers.family.calls_api

    def __reduce__(self) -> tuple[Any, ...]:
        return parse_team_roles, (str(self),)


def role_parts(name: str) -> dict[str, str] | None:
    """``lead=a,peers=b`` → {lead: a, peers: b}; None for a bare backend name. A backend name may hold
    commas (an API URL's query): only a comma followed by a role name separates roles."""
    head = name.split(ROLE_SEPARATOR, 1)[0]
    if ROLE_SEPARATOR not in name or (head not in ROLES and ":" in head):
        return None
    parts: dict[str, str] = {}
    for part in _ROLE.split(name):
        role, _, backend = part.partition(ROLE_SEPARATOR)
        if role not in ROLES:
            raise ConfigError(Reason.UNKNOWN_ROLE, f"{part[:60]!r} names no role; team roles are {', '.join(ROLES)}")
        if role in parts:
            raise ConfigError(Reason.UNKNOWN_ROLE, f"the role {role} is given twice in {name[:80]!r}")
        parts[role] = backend
    return parts


def parse_team_roles(name: str) -> TeamRoles:
    """``name`` as team roles, or a ConfigError naming the role a backend cannot play."""
    if isinstance(name, TeamRoles):
        return name
    parts = role_parts(name) or {"lead": name}
    try:
        lead = parse_backend(parts.get("lead", "planner"))
        peers = parse_backend(parts.get("peers", DEFAULT_PEERS))
    except ConfigError as error:
        if not re.search(r",[a-z_]+=", name):
            raise
        raise ConfigError(error.reason, f"{error.message} (team roles are {' and '.join(ROLES)})") from None
    if not lead.family.leads_teams:
        raise ConfigError(Reason.UNSUPPORTED_BACKEND, f"{lead} cannot lead a team task")
    if not peers.family.answers_teams:
        raise ConfigError(Reason.UNSUPPORTED_BACKEND, f"{peers} cannot answer as a team peer")
    roles = TeamRoles(name)
    roles.lead, roles.peers = lead, peers
    return roles


def _team_roles(value: Any) -> TeamRoles:
    if not isinstance(value, str):
        raise ValueError(f"team roles are a backend name or lead=<backend>,peers=<backend>, not {value!r}")
    try:
        return parse_team_roles(value)
    except ConfigError as error:
        raise ValueError(error.message) from None


TeamRolesName = Annotated[TeamRoles, PlainValidator(_team_roles), *_AS_NAME]
"""Who plays a team task: a lead backend, or ``lead=<backend>,peers=<backend>``."""
