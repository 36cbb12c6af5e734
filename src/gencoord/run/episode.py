"""run_episode: EpisodeSpec → protocol → compile → execute → verify, as one pure function.

The condition decides what crosses the boundary (the request, none, a legal
alternative; correct, counterfactual or no feedback; full information), the fault
what goes wrong on purpose, the backends who writes the records, the executor where
the work happens. The handoff is checked the moment it happens: when H fails the
episode stops there, as the paper's runtime does, and T is never reached.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from gencoord.backends.base import Backend, bind
from gencoord.backends.registry import rule_set
from gencoord.backends.rule import composed
from gencoord.dsl.ast import Path, Task
from gencoord.dsl.serialize import format_path
from gencoord.dsl.surface import Surface, SurfaceName, surface
from gencoord.errors import CompileError, ConfigError, FailureCode, WorldError
from gencoord.models.variant import Records
from gencoord.planning.delivery import beyond_handover
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.protocol.delivery import CacheSetting, Delivery, DeliveryKind
from gencoord.protocol.generation import Generator
from gencoord.protocol.plan import DispatchPlan
from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success
from gencoord.reasons import Reason
from gencoord.run.execution import run_checked
from gencoord.run.faults import TEXT_FAULTS, Fault, faulty_generator, faulty_program, faulty_world
from gencoord.run.lifecycle import (
    Channel,
    policy_responder,
    run_dialogue,
    run_feedback,
    run_forward,
    run_requester_plan,
    run_single_step,
    run_without_request,
)
from gencoord.run.private import run_private_delivery
from gencoord.run.stepwise import FirstStep
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.verify import Execution, Outcome, judge, not_formed
from gencoord.tasks.context import LocalContext, after_step, merged_view
from gencoord.tasks.instances import EpisodeSpec, privatize
from gencoord.tasks.suites import SuiteDocument, default_suites
from gencoord.worlds.executor import Executor
from gencoord.worlds.sim.executor import SimExecutor


class Condition(StrEnum):
    """What an episode withholds, swaps or delivers: the paper's interventions, one per condition."""

    REQUEST = "request"  # forward: the sender's REQ is delivered
    NO_REQUEST = "no_request"  # forward: the REQ is withheld
    ALTERNATIVE_REQUEST = "alternative_request"  # forward: the REQ is replaced by the template's other branch
    SINGLE_STEP = "single_step"  # forward: commit one step, carry it out, decide the rest there (S7)
    FEEDBACK = "feedback"  # Goal×Capability: the peer's own bounded response
    COUNTERFACTUAL_FEEDBACK = "counterfactual_feedback"  # the response of the paired workcell mode
    LOCAL_ONLY = "local_only"  # one call: the requester's local plan is final, the peer sends nothing back
    CENTRALIZED = "centralized"  # one call on the merged local views (the peer's view is uploaded)
    PATH_DELIVERY = "path_delivery"  # private task structure: the receiver's PATH is delivered
    SLICE_DELIVERY = "slice_delivery"  # ... a SLICE of the sender's graph
    GOAL_DELIVERY = "goal_delivery"  # ... only the GOAL: the receiver plans its own path
    COMPATIBLE_ALTERNATIVE = "compatible_alternative"  # ... the PATH of the template's other branch arrives
    INCOMPATIBLE_ALTERNATIVE = "incompatible_alternative"  # ... that PATH, asking for more than is handed over


DELIVERY_KINDS = {
    Condition.PATH_DELIVERY: DeliveryKind.PATH,
    Condition.SLICE_DELIVERY: DeliveryKind.SLICE,
    Condition.GOAL_DELIVERY: DeliveryKind.GOAL,
    Condition.COMPATIBLE_ALTERNATIVE: DeliveryKind.PATH,
    Condition.INCOMPATIBLE_ALTERNATIVE: DeliveryKind.PATH,
}
"""Private-task-structure conditions and the kind of delivery each sends."""
CACHED_CONDITIONS = (Condition.PATH_DELIVERY, Condition.SLICE_DELIVERY, Condition.GOAL_DELIVERY)
"""The delivery conditions a cache setting applies to (the interventions run with the cache off)."""
FORWARD_CONDITIONS = (
    Condition.REQUEST,
    Condition.NO_REQUEST,
    Condition.ALTERNATIVE_REQUEST,
    Condition.SINGLE_STEP,
    *DELIVERY_KINDS,
)
FEEDBACK_CONDITIONS = (
    Condition.FEEDBACK,
    Condition.COUNTERFACTUAL_FEEDBACK,
    Condition.LOCAL_ONLY,
    Condition.CENTRALIZED,
)


def records_of(condition: Condition) -> Records:
    """The record set a condition's generations come from (what a model must have trained on)."""
    if condition is Condition.CENTRALIZED:
        return Records.CENTRALIZED
    if condition is Condition.NO_REQUEST:
        return Records.SELF_PLAN
    return Records.REQUESTER if condition in FEEDBACK_CONDITIONS else Records.ALL


@dataclass(frozen=True)
class EpisodeResult:
    """Everything one pair episode produced, from the messages to the verdict: what ``episode_record`` writes."""

    spec: EpisodeSpec
    condition: Condition
    fault: Fault
    backends: Mapping[str, str]  # agent → backend name
    protocol: ProtocolResult
    execution: Execution | None
    outcome: Outcome
    seconds: Mapping[str, float] = field(default_factory=dict)  # measured: protocol, world, verify


def default_condition(spec: EpisodeSpec) -> Condition:
    return Condition.FEEDBACK if spec.feedback else Condition.REQUEST


def _alternative(spec: EpisodeSpec, prior: Prior, spoken: Surface) -> tuple[Channel, Path | None]:
    """The legal-alternative intervention: the other branch's REQ on the wire, and its SELF
    for the sender where that branch gives the sender other work (the Allocation family)."""
    assert spec.binding is not None  # forward episodes (the only ones with this condition) have a true binding
    others = sorted(set(prior.templates[spec.cluster.template].bindings) - {spec.binding})
    true = composed(prior, spec.binding, spec.sender, spec.receiver, spec.params)
    alternative = composed(prior, others[0], spec.sender, spec.receiver, spec.params)
    assert alternative.request is not None  # every binding has a receiver path
    line = spoken.request(alternative.request)
    swapped = alternative.self_plan if alternative.self_plan != true.self_plan else None
    return (lambda _delivered: line), swapped


def _private_delivery(
    spec: EpisodeSpec,
    condition: Condition,
    cache: CacheSetting,
    generate: Generator,
    prior: Prior,
    spoken: Surface,
    receiver_answers: bool,
) -> ProtocolResult:
    """A private-structure exchange; ``spec`` is already privatized, ``generate`` bound to its contexts."""
    assert spec.binding is not None  # privatize admits forward clusters only
    other = sorted(set(prior.templates[spec.cluster.template].bindings) - {spec.binding})[0]
    true = composed(prior, spec.binding, spec.sender, spec.receiver, spec.params)
    earlier = composed(prior, other, spec.sender, spec.receiver, spec.params)
    assert earlier.request is not None  # every binding has a receiver path
    substitute = None
    if condition in (Condition.COMPATIBLE_ALTERNATIVE, Condition.INCOMPATIBLE_ALTERNATIVE):
        body = format_path(earlier.request.plan)
        scale = condition is Condition.INCOMPATIBLE_ALTERNATIVE

        def substitute(delivery: Delivery) -> Delivery:
            swapped = replace(delivery, body=body)
            return beyond_handover(swapped, prior) if scale else swapped

    holdings = {agent.name: dict(agent.inventory) for agent in spec.world.agents}
    return run_private_delivery(
        generate,
        spec.sender,
        spec.receiver,
        prior,
        spec.public,
        holdings,
        DELIVERY_KINDS[condition],
        cache,
        complete=true,
        earlier=earlier,
        substitute=substitute,
        surface=spoken,
        receiver_answers=receiver_answers,
    )


def _advance(contexts: dict[str, LocalContext], prior: Prior) -> Callable[[str, Task], None]:
    """Carry a committed step out for the agent's view.

    The world later runs the whole resolved path from the start, which takes that same
    step first; what the single-step sender decides from is the state that step leaves.
    """

    def advance(agent: str, step: Task) -> None:
        contexts[agent] = after_step(contexts[agent], step, prior)

    return advance


def _other_mode(spec: EpisodeSpec, suites: SuiteDocument) -> str:
    modes = sorted(suites.goal_capability.modes)
    return modes[(modes.index(spec.cluster.mode or "") + 1) % len(modes)]


def check_dialogue(condition: Condition, fault: Fault) -> None:
    """Free-form dialogue is the representation comparator: the forward request condition, no text fault."""
    if condition is not Condition.REQUEST:
        raise ConfigError(
            Reason.CONDITION_SURFACE, f"the free-form surface runs the request condition, not {condition.value!r}"
        )
    if fault in TEXT_FAULTS:
        raise ConfigError(Reason.FAULT_SURFACE, f"fault {fault.value!r} rewrites a record; free-form turns have none")


def coordinate(
    spec: EpisodeSpec,
    condition: Condition | None = None,
    *,
    backends: Mapping[str, Backend] | None = None,
    fault: Fault = Fault.CLEAN,
    prior: Prior | None = None,
    suites: SuiteDocument | None = None,
    first_step: FirstStep | None = None,
    cache: CacheSetting = CacheSetting.OFF,
    receiver_answers: bool = False,
) -> ProtocolResult:
    """The protocol half of an episode: from the agents' contexts to a dispatch plan (or why not).

    ``first_step`` carries a single-step sender's first step out in its world; without it the
    step is carried out for the sender's view only (the protocol alone, no world).
    ``receiver_answers``: under a delivery condition, the receiver's backend writes its path
    from the delivery; otherwise the shared delivery processing realizes it.
    """
    prior = prior or default_prior()
    suites = suites or default_suites()
    condition = condition or default_condition(spec)
    backends = backends or rule_set(spec, condition is Condition.NO_REQUEST, prior, suites)
    allowed = FEEDBACK_CONDITIONS if spec.feedback else FORWARD_CONDITIONS
    if condition not in allowed:
        suite = spec.cluster.suite
        raise ConfigError(Reason.CONDITION_SUITE, f"condition {condition.value!r} does not apply to the {suite} suite")
    if cache is not CacheSetting.OFF and condition not in CACHED_CONDITIONS:
        raise ConfigError(
            Reason.CONDITION_CACHE, f"a cache setting applies to delivery conditions, not {condition.value!r}"
        )
    if receiver_answers and condition not in DELIVERY_KINDS:
        raise ConfigError(
            Reason.CONDITION_RECEIVER, f"a receiver answers deliveries, and {condition.value!r} sends none"
        )
    if condition in DELIVERY_KINDS:
        spec = privatize(spec, prior)
    contexts = dict(spec.contexts)
    if condition is Condition.CENTRALIZED:
        contexts[spec.sender] = merged_view(contexts[spec.sender], contexts[spec.receiver])
    sender, receiver, public = spec.sender, spec.receiver, spec.public
    if spec.surface == SurfaceName.FREEFORM:
        check_dialogue(condition, fault)
        return run_dialogue(bind(backends, contexts), sender, receiver, prior, public)
    spoken = surface(spec.surface, prior.vocab)
    generate = faulty_generator(bind(backends, contexts), fault, spoken)
    if condition is Condition.NO_REQUEST:
        return run_without_request(generate, sender, receiver, prior, public, spoken)
    if condition in DELIVERY_KINDS:
        return _private_delivery(spec, condition, cache, generate, prior, spoken, receiver_answers)
    if condition is Condition.SINGLE_STEP:
        advance = _advance(contexts, prior) if first_step is None else first_step.advancer(contexts)
        return run_single_step(generate, sender, receiver, prior, public, advance, spoken)
    if condition is Condition.ALTERNATIVE_REQUEST:
        channel, sender_path = _alternative(spec, prior, spoken)
        return run_forward(generate, sender, receiver, prior, public, channel, spoken, sender_path)
    if condition is Condition.REQUEST:
        return run_forward(generate, sender, receiver, prior, public, surface=spoken)
    if condition in (Condition.LOCAL_ONLY, Condition.CENTRALIZED):
        state = spec.contexts[receiver].render() if condition is Condition.CENTRALIZED else None
        return run_requester_plan(generate, sender, receiver, prior, public, spoken, state)
    mode = spec.cluster.mode or ""
    if condition is Condition.COUNTERFACTUAL_FEEDBACK:
        mode = _other_mode(spec, suites)
    respond = policy_responder(mode, sender, prior, spoken)
    return run_feedback(generate, respond, sender, receiver, prior, public, spoken)


def execute(
    plan: DispatchPlan, spec: EpisodeSpec, executor: Executor, prior: Prior, fault: Fault = Fault.CLEAN
) -> Execution:
    """Compile and run the program; stop when an action fails or a hand-over is not verified.

    Raises CompileError when the plan cannot become actions in this world.
    """
    program = compile_plan(plan, spec.world, prior.game)
    world = faulty_world(spec.world, program, fault)
    program = faulty_program(program, fault)
    return run_checked(plan, program, world, executor)


def run_episode(
    spec: EpisodeSpec,
    condition: Condition | None = None,
    *,
    fault: Fault = Fault.CLEAN,
    backends: Mapping[str, Backend] | None = None,
    executor: Executor | None = None,
    prior: Prior | None = None,
    suites: SuiteDocument | None = None,
    cache: CacheSetting = CacheSetting.OFF,
    receiver_answers: bool = False,
) -> EpisodeResult:
    """One episode end to end: generate, resolve, materialize, compile, execute, verify (rules on the simulator
    unless ``backends`` and ``executor`` say otherwise). Never raises for a protocol failure: the result says it."""
    prior = prior or default_prior()
    suites = suites or default_suites()
    condition = condition or default_condition(spec)
    team = backends or rule_set(spec, condition is Condition.NO_REQUEST, prior, suites)
    executor = executor or SimExecutor(prior.game)
    first = None
    if condition is Condition.SINGLE_STEP:
        if fault is not Fault.CLEAN and fault not in TEXT_FAULTS:
            raise ConfigError(
                Reason.CONDITION_FAULT, f"the single-step condition runs clean or text faults, not {fault.value!r}"
            )
        first = FirstStep(spec, executor, prior)
    clock = time.perf_counter()
    protocol = coordinate(
        spec,
        condition,
        backends=team,
        fault=fault,
        prior=prior,
        suites=suites,
        first_step=first,
        cache=cache,
        receiver_answers=receiver_answers,
    )
    seconds = {"protocol": time.perf_counter() - clock - (first.seconds if first else 0.0)}
    names = {agent: backend.name for agent, backend in team.items()}
    if isinstance(protocol, Fail):
        outcome = not_formed(protocol.code, protocol.error.reason, protocol.error.message)
        return EpisodeResult(spec, condition, fault, names, protocol, None, outcome, seconds)
    if isinstance(protocol, NoCommitment):
        outcome = not_formed(None, protocol.reason, "the peer rejected the request: no commitment")
        return EpisodeResult(spec, condition, fault, names, protocol, None, outcome, seconds)
    assert isinstance(protocol, Success)
    clock = time.perf_counter()
    try:
        if first is not None:
            execution = first.finish(protocol.plan)
        else:
            execution = execute(protocol.plan, spec, executor, prior, fault)
    except (CompileError, WorldError) as error:  # no plan for this world, or a world that broke down
        seconds["world"] = time.perf_counter() - clock + (first.seconds if first else 0.0)
        outcome = Outcome(True, None, None, False, False, FailureCode.EXECUTION_FAILURE, error.reason, error.message)
        return EpisodeResult(spec, condition, fault, names, protocol, None, outcome, seconds)
    seconds["world"] = time.perf_counter() - clock + (first.seconds if first else 0.0)
    clock = time.perf_counter()
    outcome = judge(protocol.plan, spec.goal, execution)
    seconds["verify"] = time.perf_counter() - clock
    return EpisodeResult(spec, condition, fault, names, protocol, execution, outcome, seconds)
