"""The backend families gencoord ships, and what a backend name builds in each role.

``rule`` is the deterministic team (zero model calls); ``factorized-rule`` the
structure-visibility reference; ``planner`` the team planner's lead; ``model:`` and
``constrained:`` a trained checkpoint (grammar-constrained or not); ``api:`` any
OpenAI-compatible endpoint; ``selector:`` a description selector. A name's receiver and
view suffixes apply to every family (``backends/families.py`` says how names are written).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from gencoord.backends.base import Backend
from gencoord.backends.families import (
    BackendFamily,
    BackendSet,
    BackendSpec,
    TeamRoles,
    parse_backend,
    parse_team_roles,
)
from gencoord.backends.peer import RulePeer
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
from gencoord.models.variant import Horizon, Records, Target
from gencoord.prior.prior import Prior
from gencoord.prior.views import PriorView
from gencoord.protocol.generation import GenerationRequest, Reply
from gencoord.reasons import Reason
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.context import LocalContext
from gencoord.tasks.instances import EpisodeSpec
from gencoord.tasks.suites import SuiteDocument


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


RECEIVER_BACKENDS: dict[str, Callable[[Prior], Backend]] = {"realizer": RequestRealizer, "directory": DirectoryLookup}
"""The deterministic receivers a name's ``+realizer`` or ``+directory`` puts in place of its family's own."""


def _with_receiver(make: BackendSet, receiver: str) -> BackendSet:
    """``make``'s team with its receiver swapped for a deterministic one, which reads the same delivered REQ."""

    def swapped(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> Mapping[str, Backend]:
        team = dict(make(spec, withheld, prior, suites))
        team[spec.receiver] = RECEIVER_BACKENDS[receiver](prior)
        return team

    return swapped


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
        raise ConfigError(Reason.UNKNOWN_BACKEND, f"an API backend is api:<base url>#<model>, got api:{target}")
    return base_url, model


def _api_set(target: str, timeout_s: float | None = None) -> BackendSet:
    """Every agent asks the OpenAI-compatible API ``<base url>#<model>`` (key: $GENCOORD_API_KEY)."""
    base_url, model = api_target(target)

    def make(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415  (openai loads only when an API is used)

        backend = ApiBackend(base_url, model, prior, timeout_s=timeout_s)
        return {agent: backend for agent in spec.contexts}

    return make


def _selector_set(selector_name: str) -> BackendSet:
    """The sender reads a description and a selector picks the code; the receiver realizes the REQ."""

    def make(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
        from gencoord.backends.selectors import SelectorSender, fitted  # noqa: PLC0415  (scikit-learn loads lazily)

        return {spec.sender: SelectorSender(fitted(selector_name), prior), spec.receiver: RequestRealizer(prior)}

    return make


@cache
def _manifest(checkpoint: Path) -> CheckpointManifest | None:
    return CheckpointManifest.read(checkpoint) if (checkpoint / MANIFEST).exists() else None


def _trained(target: str | None) -> Path:
    """The checkpoint folder a model family's target names, which must hold a trained model."""
    checkpoint = Path(str(target))
    if not (checkpoint / MANIFEST).exists():
        raise ConfigError(Reason.UNKNOWN_BACKEND, f"{checkpoint} holds no trained model ({MANIFEST})")
    return checkpoint


class RuleFamily(BackendFamily):
    name = "rule"
    plays_pairs = True
    answers_teams = True

    def pair_set(self, target: str | None) -> BackendSet:
        return rule_set

    def team_peer(self, target: str | None, prior: Prior) -> Backend:
        return RulePeer(prior)


class FactorizedRuleFamily(BackendFamily):
    name = "factorized-rule"
    plays_pairs = True

    def pair_set(self, target: str | None) -> BackendSet:
        return factorized_rule_set

    def fits(self, target: str | None, single_step: bool, surface: SurfaceName, records: Records) -> bool:
        return surface != SurfaceName.FREEFORM  # the paper's symbolic reference writes records, not dialogue


class PlannerFamily(BackendFamily):
    name = "planner"
    leads_teams = True
    commitments = None  # each kind's planner writes its commitment

    def team_lead(self, target: str | None, prior: Prior) -> Backend:
        from gencoord.backends.planner import PlannerBackend  # noqa: PLC0415  (scipy's solver loads when planning)

        return PlannerBackend(prior)


class ModelFamily(BackendFamily):
    """A trained checkpoint, decoded freely."""

    name = "model"
    target = "<checkpoint>"
    checkpoint = True
    plays_pairs = True
    leads_teams = True
    answers_teams = True
    constrained = False
    drafts = 1

    def pair_set(self, target: str | None) -> BackendSet:
        require_learn(f"backend {self.name}:{target}")
        return _model_set(_trained(target), self.constrained)

    def team_lead(self, target: str | None, prior: Prior) -> Backend:
        require_learn(f"backend {self.name}:{target}")
        from gencoord.backends.local import LocalModelBackend  # noqa: PLC0415

        return LocalModelBackend(_trained(target), prior, self.constrained, self.drafts)

    def team_peer(self, target: str | None, prior: Prior) -> Backend:
        require_learn(f"backend {self.name}:{target}")
        from gencoord.backends.local import LocalModelBackend  # noqa: PLC0415

        return LocalModelBackend(_trained(target), prior, self.constrained)  # a peer answers once: no drafts

    def fits(self, target: str | None, single_step: bool, surface: SurfaceName, records: Records) -> bool:
        """A direct model writes its own surface and horizon; a factor model a binding code, which the
        composer renders in any record surface and at any horizon; a model trained on one record set
        only that set's records (one trained on all writes the requester's too)."""
        manifest = _manifest(Path(str(target)).resolve())
        if manifest is None:
            return True
        if manifest.records is not records and not (manifest.records is Records.ALL and records is Records.REQUESTER):
            return False
        if manifest.target is Target.FACTOR:
            return surface != SurfaceName.FREEFORM
        return manifest.surface == surface and (manifest.horizon is Horizon.SINGLE) == single_step


class ConstrainedFamily(ModelFamily):
    """A trained checkpoint, decoded under the grammar of what it may write (it never writes an unparseable one)."""

    name = "constrained"
    constrained = True


class CheckedFamily(ConstrainedFamily):
    """A trained checkpoint under its grammars (a model of the dialogue's words has none); as a team lead it drafts up
    to 16 proposals a round and sends the first its own dry run carries to the goal (``backends/local.py``). Team
    tasks only: a pair episode has no such check."""

    name = "checked"
    plays_pairs = False
    drafts = 16

    def pair_set(self, target: str | None) -> BackendSet:
        return BackendFamily.pair_set(self, target)


class ApiFamily(BackendFamily):
    name = "api"
    target = "<url>#<model>"
    calls_api = True
    plays_pairs = True
    leads_teams = True
    answers_teams = True

    def check_target(self, target: str) -> None:
        api_target(target)

    def label(self, target: str | None) -> str:
        """The model's name and the host that serves it (``qwen3 via API at localhost:8000``)."""
        base_url, model = api_target(str(target))
        host = base_url.split("://", 1)[-1].split("/", 1)[0]
        return f"{model} via API at {host}"

    timeout_s: float | None = None
    """How long one call may take before it is retried (None: the API backend's own)."""

    def endpoint(self, target: str | None) -> str:
        """``<base url>#<model>`` of the endpoint ``target`` names."""
        return str(target)

    def pair_set(self, target: str | None) -> BackendSet:
        require_learn(f"backend {self.name}:{target}", API_MODULES)
        return _api_set(self.endpoint(target), self.timeout_s)

    def team_lead(self, target: str | None, prior: Prior) -> Backend:
        require_learn(f"backend {self.name}:{target}", API_MODULES)
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415

        return ApiBackend(*api_target(self.endpoint(target)), prior, timeout_s=self.timeout_s)

    def team_peer(self, target: str | None, prior: Prior) -> Backend:
        return self.team_lead(target, prior)


class ServedFamily(ApiFamily):
    """A team model ``gencoord finetune`` tuned, exported (``gencoord export``) and served by an OpenAI-compatible
    server (``transformers serve``, vLLM, llama.cpp): it is sent the messages it was trained on, in every team
    role. Team tasks only: it was never trained on pair episodes."""

    name = "served"
    plays_pairs = False

    def pair_set(self, target: str | None) -> BackendSet:
        return BackendFamily.pair_set(self, target)

    def team_lead(self, target: str | None, prior: Prior) -> Backend:
        require_learn(f"backend served:{target}", API_MODULES)
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415

        return ApiBackend(*api_target(str(target)), prior, tuned=True)


class PromptedFamily(ApiFamily):
    """A pretrained base, not fine-tuned, prompted over the API as the paper prompts DeepSeek (the rules and worked
    examples ``backends/api.py`` sends any endpoint): served by ``transformers serve`` from this process, started
    at its first use (``models/serving.serving``). ``prompted:smollm2-135m-instruct`` is the shipped base; a local
    model folder or ``.gguf`` file serves the same way (an unknown name is refused when the server would start). A
    local server charges nothing. A call may take 600 s: a CPU writes a few hundred tokens in tens of seconds, and
    retrying a call the server is still working on only queues another behind it."""

    name = "prompted"
    target = "<base>"
    timeout_s = 600.0

    def check_target(self, target: str) -> None:
        """Any name: a shipped base's or a local path, looked up when its server would start."""

    def label(self, target: str | None) -> str:
        return f"{target}, prompted, via a local API"

    def endpoint(self, target: str | None) -> str:
        from gencoord.models.serving import serving  # noqa: PLC0415  (transformers loads only to serve)

        return serving(str(target))


class SelectorFamily(BackendFamily):
    name = "selector"
    target = "<name>"
    plays_pairs = True

    def pair_set(self, target: str | None) -> BackendSet:
        require_learn(f"backend selector:{target}", SELECTOR_MODULES + (API_MODULES if "api:" in str(target) else ()))
        return _selector_set(str(target))


RULE = RuleFamily()
FACTORIZED_RULE = FactorizedRuleFamily()
PLANNER = PlannerFamily()
MODEL = ModelFamily()
CONSTRAINED = ConstrainedFamily()
CHECKED = CheckedFamily()
API = ApiFamily()
SERVED = ServedFamily()
PROMPTED = PromptedFamily()
SELECTOR = SelectorFamily()


def backend_set(name: str | BackendSpec) -> BackendSet:
    """Who plays a two-agent episode under that backend name, its receiver and view applied."""
    spec = parse_backend(name)
    made = spec.family.pair_set(spec.target)
    if spec.receiver is not None:
        made = _with_receiver(made, spec.receiver)
    return made if spec.view is None else _with_view(made, spec.view)


@dataclass(frozen=True, slots=True)
class TeamPlayers:
    """The backends of a team task's roles: the lead's, and the one every peer answers through."""

    lead: Backend
    peers: Backend
    thinking: Thinking = field(default_factory=Thinking)  # how long their messages take in the world
    commitments: frozenset[str] | None = None  # the task kinds whose commitments the lead writes (None: every kind)


def team_players(name: str | TeamRoles, prior: Prior, thinking: Thinking | None = None) -> TeamPlayers:
    """Who plays a team task under those roles (``planner``; ``lead=model:<checkpoint>,peers=api:<url>#<model>``)."""
    roles = parse_team_roles(name)
    lead, peers = roles.lead, roles.peers
    return TeamPlayers(
        lead.family.team_lead(lead.target, prior),
        peers.family.team_peer(peers.target, prior),
        thinking or Thinking(),
        lead.family.commitments,
    )


def backend_fits(
    name: str | BackendSpec, single_step: bool, surface: SurfaceName, records: Records = Records.ALL
) -> bool:
    """Whether a backend can write the records an episode needs.

    Rules, APIs and selectors write any surface under any horizon; a trained model writes
    what it learned (``ModelFamily.fits``). A deterministic receiver realizes a delivered
    request, so a name with one fits only the forward conditions with a request. An
    experiment crossing backends with surfaces and conditions runs only the combinations
    that fit, so every row is a backend doing its own job.
    """
    spec = parse_backend(name)
    if spec.receiver is not None and records is not Records.ALL:
        return False
    return spec.family.fits(spec.target, single_step, surface, records)
