"""EpisodeSpec: one cluster under one role permutation and seed, fully instantiated.

Building it is a pure function of (cluster, role, seed): the public episode (agents,
refs with this variant's positions, template), the runtime world ω (spawns, tools,
chest contents, workcell limits), the original-task goal G, and each agent's
LocalContext. Nothing here runs a model or a world.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.prior.compose import compose
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode, Ref
from gencoord.protocol.response import respond
from gencoord.reasons import Reason
from gencoord.runtime.verify import Requirement
from gencoord.tasks.cluster import Cluster
from gencoord.tasks.context import LocalContext
from gencoord.tasks.descriptions import describe
from gencoord.tasks.suites import GoalSpec, SuiteDocument
from gencoord.worlds.spec import AgentSpec, WorldSpec

ROLE_PERMUTATIONS = 2


@dataclass(frozen=True)
class EpisodeSpec:
    """One pair episode, fully determined (cluster, role permutation, seed): hand it to ``run_episode``."""

    cluster: Cluster
    role: int
    seed: int
    sender: str  # the requester, for Goal×Capability
    receiver: str  # the peer, for Goal×Capability
    binding: str | None  # the binding whose execution achieves the original task; None: no binding can
    params: Mapping[str, int]
    public: PublicEpisode
    world: WorldSpec
    goal: tuple[Requirement, ...]
    contexts: Mapping[str, LocalContext]
    surface: SurfaceName = SurfaceName.DSL

    @property
    def id(self) -> str:
        return f"{self.cluster.id}/r{self.role}/s{self.seed}/{self.surface.value}"

    @property
    def feedback(self) -> bool:
        return self.cluster.suite == "goal_capability"


def _refs(cluster: Cluster, prior: Prior, suites: SuiteDocument) -> dict[str, Ref]:
    variant = cluster.variant
    refs: dict[str, Ref] = {}
    for name, ref in prior.default_episode.refs.items():
        dx, dz = variant.offsets.get(name, (0, 0))
        x, y, z = ref.position
        refs[name] = ref.model_copy(update={"position": (x + dx, y, z + dz)})
    chosen = {d.name: d for d in suites.variants.distractors if d.name in variant.distractors}
    for index, (name, distractor) in enumerate(sorted(chosen.items())):
        dx, dz = variant.offsets.get(name, (0, 0))
        position = (-20 + 6 * index + dx, 64, 20 + dz)  # a corner no template uses
        refs[name] = Ref(kind=distractor.kind, block=distractor.block, position=position)
    return refs


def _goal(specs: list[GoalSpec], params: Mapping[str, int], roles: dict[str, str]) -> tuple[Requirement, ...]:
    return tuple(spec.requirement(dict(params), roles) for spec in specs)


def _correct_capability_binding(
    cluster: Cluster, sender: str, receiver: str, prior: Prior, suites: SuiteDocument
) -> str | None:
    """The binding the original task needs under the peer's mode (what correct feedback leads to).

    None when the mode admits no alternative: the correct feedback is then a REJECT.
    """
    goal = suites.goal_capability.goals[cluster.template]
    initial = compose(prior, cluster.template, goal.initial, sender=sender, receiver=receiver, params=goal.params)
    assert initial.request is not None and cluster.mode is not None
    response = respond(initial.request, sender, cluster.mode, prior)
    if response.decision == "ACCEPT":
        return goal.initial
    if response.decision == "COUNTER" and response.counter_offer_id is not None:
        return prior.counter_offers[response.counter_offer_id].moves[goal.initial]
    return None


def build_episode(
    cluster: Cluster,
    role: int,
    seed: int,
    prior: Prior,
    suites: SuiteDocument,
    surface: SurfaceName = SurfaceName.DSL,
    described: str | None = None,
) -> EpisodeSpec:
    """The episode of ``cluster`` under role permutation ``role`` and ``seed``: what ``run_episode`` runs.

    Use it to run one cluster of a pool outside an experiment. ``described`` (C1/C2/C3): the
    sender's private fact is a natural-language description, not a code.
    """
    if role not in range(ROLE_PERMUTATIONS):
        raise ConfigError(Reason.BAD_ROLE, f"role permutation must be 0 or 1, got {role}")
    agents = prior.default_episode.agents[:2]
    sender, receiver = (agents[0], agents[1]) if role == 0 else (agents[1], agents[0])
    roles = {"sender": sender, "receiver": receiver}
    variant = cluster.variant
    refs = _refs(cluster, prior, suites)
    public = PublicEpisode(tuple(agents), refs, cluster.template)
    slots = {name: index for index, name in enumerate(agents)}
    forbidden: dict[str, frozenset[str]] = {}
    if cluster.suite == "goal_capability":
        spec = suites.goal_capability.goals[cluster.template]
        assert cluster.mode is not None
        forbidden[receiver] = frozenset(suites.goal_capability.modes[cluster.mode].forbids)
        params: Mapping[str, int] = spec.params
        goal = _goal(spec.goal + spec.mode_goal.get(cluster.mode, []), params, roles)
        binding = _correct_capability_binding(cluster, sender, receiver, prior, suites)
    else:
        assert cluster.binding is not None
        params = variant.params
        goal = _goal(suites.forward.templates[cluster.template].goals[cluster.binding], params, roles)
        binding = cluster.binding
    world = WorldSpec(
        agents=tuple(
            AgentSpec(
                name,
                tuple(float(c) for c in variant.spawns[slots[name]]),  # type: ignore[arg-type]
                dict.fromkeys(variant.tools[slots[name]], 1),
                forbidden.get(name, frozenset()),
            )
            for name in agents
        ),
        refs=refs,
        contents={d.name: d.contents for d in suites.variants.distractors if d.name in refs},
    )
    contexts = {
        agent: replace(context, surface=surface)
        for agent, context in _contexts(cluster, sender, receiver, params, world, refs, prior).items()
    }
    if described is not None:
        if cluster.binding is None:
            raise ConfigError(Reason.NOT_DESCRIBABLE, "only forward clusters carry a private binding to describe")
        try:
            text = describe(cluster.binding, described, f"{cluster.variant.key}:{role}")
        except KeyError as exc:
            raise ConfigError(Reason.NO_DESCRIPTION, str(exc.args[0])) from None
        contexts[sender] = replace(contexts[sender], private={"description": text})
    return EpisodeSpec(
        cluster, role, seed, sender, receiver, binding, dict(params), public, world, goal, contexts, surface
    )


def _contexts(
    cluster: Cluster,
    sender: str,
    receiver: str,
    params: Mapping[str, int],
    world: WorldSpec,
    refs: Mapping[str, Ref],
    prior: Prior,
) -> dict[str, LocalContext]:
    branches = tuple(sorted(prior.templates[cluster.template].bindings))

    def context(
        agent: str, role: str, peer: str, template: str | None, private: dict[str, str], quantities: Mapping[str, int]
    ) -> LocalContext:
        visible = branches if template is not None else ()
        inventory = world.agent(agent).inventory
        return LocalContext(agent, role, peer, template, visible, dict(quantities), inventory, refs, private)

    if cluster.suite == "goal_capability":  # the goal and its quantities are the requester's alone
        assert cluster.mode is not None
        return {
            sender: context(sender, "requester", receiver, None, {"goal": cluster.template}, params),
            receiver: context(receiver, "peer", sender, None, {"workcell_mode": cluster.mode}, {}),
        }
    assert cluster.binding is not None
    return {
        sender: context(sender, "sender", receiver, cluster.template, {"binding": cluster.binding}, params),
        receiver: context(receiver, "receiver", sender, cluster.template, {}, params),
    }


def privatize(spec: EpisodeSpec, prior: Prior) -> EpisodeSpec:
    """The episode with its task structure private to the sender (v2 S20–S23).

    Nobody's public view names the template any more; the sender keeps its graph (every
    branch's two role paths) among its private fields, beside its binding. The receiver
    learns only what a delivery tells it.
    """
    if spec.binding is None or spec.feedback:
        raise ConfigError(
            Reason.NOT_PRIVATE_STRUCTURE, "only forward clusters have a sender task graph to keep private"
        )
    graph = {
        f"task_graph.{binding}": f"SELF {paths.sender} | REQ {paths.receiver}"
        for binding, paths in sorted(prior.templates[spec.cluster.template].bindings.items())
    }
    contexts = {agent: replace(context, template=None, branches=()) for agent, context in spec.contexts.items()}
    sender = contexts[spec.sender]
    contexts[spec.sender] = replace(sender, private={**sender.private, **graph})
    return replace(spec, public=replace(spec.public, template=None), contexts=contexts)
