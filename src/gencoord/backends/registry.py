"""Backend sets by name: what an experiment config's ``backends = [...]`` refers to.

A set maps an episode to one backend per agent. ``rule`` is the deterministic team
(zero model calls); learned and API sets register here under their own names. A name may
end in ``@full``, ``@skeleton`` or ``@node``: every agent of the set is then shown that
projection of the task structure (paper S9) whatever its backend was trained on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path

from gencoord.backends.base import Backend
from gencoord.backends.rule import (
    BranchGuesser,
    DirectoryLookup,
    FactorizedRule,
    RequestRealizer,
    RuleRequester,
    RuleSender,
)
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.extras import API_MODULES, SELECTOR_MODULES, require_learn
from gencoord.models.manifest import MANIFEST, CheckpointManifest
from gencoord.models.spec import Horizon, Records, Target
from gencoord.prior.prior import Prior
from gencoord.prior.views import PriorView
from gencoord.protocol.generation import GenerationRequest, Reply
from gencoord.tasks.context import LocalContext
from gencoord.tasks.episode import EpisodeSpec
from gencoord.tasks.spec import SuiteDocument

BackendSet = Callable[[EpisodeSpec, bool, Prior, SuiteDocument], Mapping[str, Backend]]
"""(episode, request withheld?, prior, suites) → backend per agent."""


def rule_set(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
    """The deterministic team: rule sender or requester, request realizer or branch guesser."""
    if spec.feedback:
        return {spec.sender: RuleRequester(prior, suites), spec.receiver: RequestRealizer(prior)}
    receiver: Backend = BranchGuesser(prior, spec.seed) if withheld else RequestRealizer(prior)
    return {spec.sender: RuleSender(prior), spec.receiver: receiver}


def factorized_rule_set(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
    """The structure-visibility reference (S9): the rule team, its sender reading paths from its view."""
    team = rule_set(spec, withheld, prior, suites)
    if not spec.feedback:
        team[spec.sender] = FactorizedRule(prior)
    return team


FACTORIZED_RULE = "factorized-rule"
BACKEND_SETS: dict[str, BackendSet] = {"rule": rule_set, FACTORIZED_RULE: factorized_rule_set}
VIEW_SEPARATOR = "@"


def split_view(name: str) -> tuple[str, PriorView | None]:
    """A backend-set name → (the set, the task-structure view its agents are shown, if one is named)."""
    base, separator, view = name.rpartition(VIEW_SEPARATOR)
    if not separator or view not in {v.value for v in PriorView}:
        return name, None
    return base, PriorView(view)


class ShownView:
    """``backend`` as an agent shown ``view`` of the task structure sees it."""

    def __init__(self, backend: Backend, view: PriorView) -> None:
        self.backend = backend
        self.view = view
        self.name = backend.name

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return self.backend.generate(replace(context, prior_view=self.view), request)


def _with_view(make: BackendSet, view: PriorView) -> BackendSet:
    def shown(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> Mapping[str, Backend]:
        return {agent: ShownView(backend, view) for agent, backend in make(spec, withheld, prior, suites).items()}

    return shown


RECEIVER_SEPARATOR = "+"
RECEIVERS: dict[str, Callable[[Prior], Backend]] = {"realizer": RequestRealizer, "directory": DirectoryLookup}
"""``<set>+realizer`` or ``<set>+directory``: the set's sender with a deterministic receiver (v2 Table S26)."""


def split_receiver(name: str) -> tuple[str, str | None]:
    """A backend-set name → (the set, the deterministic receiver that replaces its own, if one is named)."""
    base, separator, receiver = name.rpartition(RECEIVER_SEPARATOR)
    if not separator or receiver not in RECEIVERS:
        return name, None
    return base, receiver


def _with_receiver(make: BackendSet, receiver: str) -> BackendSet:
    """``make``'s team with its receiver swapped for a deterministic one, which reads the same delivered REQ."""

    def swapped(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> Mapping[str, Backend]:
        team = dict(make(spec, withheld, prior, suites))
        team[spec.receiver] = RECEIVERS[receiver](prior)
        return team

    return swapped


MODEL_PREFIX = "model:"
CONSTRAINED_PREFIX = "constrained:"
API_PREFIX = "api:"
SELECTOR_PREFIX = "selector:"


def _model_set(checkpoint: Path, constrained: bool = False) -> BackendSet:
    """Every agent generates with the trained model at ``checkpoint`` (two model calls per forward episode)."""

    def make(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
        from gencoord.backends.local import LocalModelBackend  # noqa: PLC0415  (torch loads only when a model is used)

        backend = LocalModelBackend(checkpoint, prior, constrained)
        return {agent: backend for agent in spec.contexts}

    return make


def api_target(target: str) -> tuple[str, str]:
    """``<base url>#<model>`` → (base url, model)."""
    base_url, _, model = target.partition("#")
    if not base_url or not model:
        raise ConfigError("UNKNOWN_BACKEND", f"an API backend is api:<base url>#<model>, got api:{target}")
    return base_url, model


def _api_set(target: str) -> BackendSet:
    """Every agent asks the OpenAI-compatible API ``<base url>#<model>`` (key: $GENCOORD_API_KEY)."""
    base_url, model = api_target(target)

    def make(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415  (openai loads only when an API is used)

        backend = ApiBackend(base_url, model, prior)
        return {agent: backend for agent in spec.contexts}

    return make


def _selector_set(selector_name: str) -> BackendSet:
    """The sender reads a description and a selector picks the code; the receiver realizes the REQ."""

    def make(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
        from gencoord.backends.selectors import SelectorSender, fitted  # noqa: PLC0415  (scikit-learn loads lazily)

        return {spec.sender: SelectorSender(fitted(selector_name), prior), spec.receiver: RequestRealizer(prior)}

    return make


TEAM_BACKENDS = (
    "planner",
    f"{MODEL_PREFIX}<checkpoint>",
    f"{CONSTRAINED_PREFIX}<checkpoint>",
    f"{API_PREFIX}<url>#<model>",
)


def team_backend(name: str, prior: Prior) -> Backend:
    """The backend that leads a team task: the planner, a trained model (optionally grammar-constrained), or an API."""
    if name == "planner":
        from gencoord.backends.planner import PlannerBackend  # noqa: PLC0415  (scipy's solver loads when planning)

        return PlannerBackend(prior)
    if name.startswith(API_PREFIX):
        require_learn(f"backend {name}", API_MODULES)
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415

        return ApiBackend(*api_target(name.removeprefix(API_PREFIX)), prior)
    checkpoint = checkpoint_of(name)
    if checkpoint is None:
        raise ConfigError("UNKNOWN_BACKEND", f"unknown team backend {name!r}; known: {', '.join(TEAM_BACKENDS)}")
    require_learn(f"backend {name}")
    if not (checkpoint / MANIFEST).exists():
        raise ConfigError("UNKNOWN_BACKEND", f"{checkpoint} holds no trained model ({MANIFEST})")
    from gencoord.backends.local import LocalModelBackend  # noqa: PLC0415

    return LocalModelBackend(checkpoint, prior, name.startswith(CONSTRAINED_PREFIX))


SEED = "{seed}"
"""In a backend name, the episode's seed: ``model:ckpt/dsl-s{seed}`` gives each seed its own trained model."""


def for_seed(name: str, seed: int) -> str:
    """The backend name an episode of ``seed`` uses (the paper trains one model per seed)."""
    return name.replace(SEED, str(seed))


def checkpoint_of(name: str) -> Path | None:
    """The checkpoint folder a ``model:`` or ``constrained:`` name points at, else None."""
    if name.startswith((MODEL_PREFIX, CONSTRAINED_PREFIX)):
        return Path(name.removeprefix(CONSTRAINED_PREFIX if name.startswith(CONSTRAINED_PREFIX) else MODEL_PREFIX))
    return None


@cache
def _manifest(checkpoint: Path) -> CheckpointManifest | None:
    return CheckpointManifest.read(checkpoint) if (checkpoint / MANIFEST).exists() else None


def backend_fits(name: str, single_step: bool, surface: SurfaceName, records: Records = Records.ALL) -> bool:
    """Whether a backend set can write the records an episode needs.

    Rules, APIs and selectors write any surface under any horizon. A trained model writes
    what it learned: a direct model its own surface and horizon; a factor model a binding
    code, which the composer renders in any record surface and at any horizon; a model
    trained on one record set (``records``: the requester's, the centralized planner's from
    merged views, or the request-removed receiver's own path) only that set's records. A
    model trained on all records writes the requester's too, but has never seen a merged
    view or a receiver without a request. An experiment crossing models with surfaces and
    conditions runs only the combinations that fit, so every row is a model doing its own job.
    """
    name, receiver = split_receiver(split_view(name)[0])
    if receiver is not None and records is not Records.ALL:
        return False  # a deterministic receiver realizes a delivered request: forward conditions with one
    if name == FACTORIZED_RULE:
        return surface != SurfaceName.FREEFORM  # the paper's symbolic reference writes records, not dialogue
    checkpoint = checkpoint_of(name)
    manifest = None if checkpoint is None else _manifest(checkpoint.resolve())
    if manifest is None:
        return True
    if manifest.records is not records and not (manifest.records is Records.ALL and records is Records.REQUESTER):
        return False
    if manifest.target is Target.FACTOR:
        return surface != SurfaceName.FREEFORM
    return manifest.surface == surface and (manifest.horizon is Horizon.SINGLE) == single_step


def backend_set(name: str) -> BackendSet:
    """A registered set, ``model:<checkpoint>``, ``api:<url>#<model>`` or ``selector:<name>``, optionally
    with ``+realizer`` or ``+directory`` for a deterministic receiver in place of the set's own,
    and ``@<view>`` for the task-structure view its agents are shown."""
    name, view = split_view(name)
    if view is not None:
        return _with_view(backend_set(name), view)
    base, receiver = split_receiver(name)
    if receiver is not None:
        return _with_receiver(_named_set(base), receiver)
    return _named_set(name)


def _named_set(name: str) -> BackendSet:
    if name.startswith(SELECTOR_PREFIX):
        require_learn(f"backend {name}", SELECTOR_MODULES + (API_MODULES if "api:" in name else ()))
        return _selector_set(name.removeprefix(SELECTOR_PREFIX))
    if name.startswith(API_PREFIX):
        require_learn(f"backend {name}", API_MODULES)
        return _api_set(name.removeprefix(API_PREFIX))
    checkpoint = checkpoint_of(name)
    if checkpoint is not None:
        require_learn(f"backend {name}")
        if not (checkpoint / MANIFEST).exists():
            raise ConfigError("UNKNOWN_BACKEND", f"{checkpoint} holds no trained model ({MANIFEST})")
        return _model_set(checkpoint, name.startswith(CONSTRAINED_PREFIX))
    found = BACKEND_SETS.get(name)
    if found is None:
        known = ", ".join(
            [
                *sorted(BACKEND_SETS),
                f"{MODEL_PREFIX}<checkpoint>",
                f"{API_PREFIX}<url>#<model>",
                f"{SELECTOR_PREFIX}<name>",
                *(f"<set>{RECEIVER_SEPARATOR}{receiver}" for receiver in RECEIVERS),
                f"<set>{VIEW_SEPARATOR}<full|skeleton|node>",
            ]
        )
        raise ConfigError("UNKNOWN_BACKEND", f"unknown backend set {name!r}; known: {known}")
    return found
