"""Deterministic backends: no model call, the same text for the same context.

- :class:`BindingComposer` expands a binding code through the shared task structure
  into canonical Short DSL (the backbone a learned factor-code backend reuses: the
  model picks the code, the composer writes the path).
- :class:`RuleSender` is the zero-call correct-binding rule: the code is the sender's
  private binding. It speaks every surface and horizon: the whole record, one step and
  then the rest (single-step), or the turns of the controlled dialogue.
- :class:`FactorizedRule` is the structure-visibility reference (S9): the private binding
  is the factor, and the paths are what a symbolic reader recovers from the agent's view
  of the task structure (``gencoord.prior.views``), so its success measures the view.
- :class:`RequestRealizer` is the v2 deterministic receiver: it adopts a delivered REQ, or
  in a dialogue takes on exactly the steps each sender turn asks of it.
- :class:`DirectoryLookup` is the v2 directory-lookup receiver: the delivered REQ's binding
  code alone selects a stored receiver path, which it instantiates with its own quantities.
- :class:`BranchGuesser` is a receiver without a request: it can only pick one of the
  public branches, so it is right half the time by construction.
- :class:`RuleRequester` is the Goal×Capability requester: its local plan first, then
  the revision a bounded response calls for.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from functools import lru_cache

from gencoord.dsl.ast import Proposal
from gencoord.dsl.dialogue import parse_line, receiver_turn, requested_steps, sender_done, sender_turn, turns_said
from gencoord.dsl.surface import Surface, SurfaceName, surface
from gencoord.errors import ConfigError
from gencoord.planning.delivery import realized_path, received
from gencoord.prior.branches import realize_alternative
from gencoord.prior.compose import compose, compose_paths
from gencoord.prior.prior import Prior
from gencoord.prior.views import PriorView, projected_paths
from gencoord.protocol.delivery import Delivery, parse_delivery
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.response import parse_response, respond
from gencoord.reasons import Reason
from gencoord.tasks.context import LocalContext
from gencoord.tasks.suites import SuiteDocument, default_suites


@lru_cache(maxsize=4096)
def _composed(prior: Prior, binding: str, sender: str, receiver: str, params: tuple[tuple[str, int], ...]) -> Proposal:
    return compose(prior, prior.codebook[binding], binding, sender=sender, receiver=receiver, params=dict(params))


def composed(prior: Prior, binding: str, sender: str, receiver: str, params: Mapping[str, int]) -> Proposal:
    """The canonical proposal of ``binding`` (cached: composing is pure)."""
    return _composed(prior, binding, sender, receiver, tuple(sorted(params.items())))


@lru_cache(maxsize=8)
def _surface(prior: Prior, name: SurfaceName) -> Surface:
    return surface(name, prior.vocab)


@lru_cache(maxsize=4096)
def _text(prior: Prior, name: SurfaceName, proposal: Proposal) -> str:
    return _surface(prior, name).serialize(proposal)


@lru_cache(maxsize=4096)
def _adopted(prior: Prior, name: SurfaceName, delivered: str) -> str | None:
    """The receiver record that adopts a delivered REQ, or None if it holds no request."""
    request = _surface(prior, name).delivered(delivered).request
    return None if request is None else _text(prior, name, Proposal(request.plan, ()))


def forget_memoized() -> None:
    """Drop the memoized compositions and renderings, so that the next call does all its work (benchmarks)."""
    for memo in (_composed, _text, _adopted):
        memo.cache_clear()


def at_stage(proposal: Proposal, request: GenerationRequest, prior: Prior, name: SurfaceName) -> Proposal:
    """The part of a sender's record it commits at this stage.

    Under the single-step horizon the sender first commits only its next step, then — with
    that step carried out — the rest of its path and the request; otherwise the whole record.
    """
    if request.stage is Stage.SENDER_STEP:
        return Proposal(proposal.self_plan[:1], ())
    if request.stage is Stage.SENDER_AFTER_OBTAIN and request.executed is not None:
        done = len(_surface(prior, name).parse(request.executed).self_plan)
        return Proposal(proposal.self_plan[done:], proposal.peer_requests)
    return proposal


SENDER_STAGES = (Stage.SENDER_INITIAL, Stage.SENDER_STEP, Stage.SENDER_AFTER_OBTAIN, Stage.DIALOGUE_SENDER)


def _private(context: LocalContext, key: str, backend: str) -> str:
    value = context.private.get(key)
    if value is None:
        raise ConfigError(
            Reason.CONTEXT_LACKS_FIELD, f"{backend} needs the private field {key!r} in {context.agent}'s context"
        )
    return value


class BindingComposer:
    """SELF+REQ for the binding ``select`` picks from the sender's context (zero model calls)."""

    def __init__(self, prior: Prior, select: Callable[[LocalContext], str], name: str = "composer") -> None:
        self.prior = prior
        self.select = select
        self.name = name

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if request.stage not in SENDER_STAGES:
            raise ConfigError(Reason.WRONG_STAGE, f"{self.name} writes sender proposals, not {request.stage.value}")
        proposal = self.proposal(context)
        if request.stage is Stage.DIALOGUE_SENDER:
            spoken = len(turns_said(request.dialogue, context.agent))
            return Reply(sender_turn(proposal, context.agent, spoken + 1), model_calls=0)
        staged = at_stage(proposal, request, self.prior, context.surface)
        return Reply(_text(self.prior, context.surface, staged), model_calls=0)

    def binding(self, context: LocalContext) -> str:
        binding = self.select(context)
        if binding not in self.prior.codebook:
            raise ConfigError(Reason.UNKNOWN_BINDING, f"{self.name} selected {binding!r}, which no template defines")
        return binding

    def proposal(self, context: LocalContext) -> Proposal:
        """The sender's whole record: the selected binding's canonical paths."""
        return composed(self.prior, self.binding(context), context.agent, context.peer, context.params)


class RuleSender(BindingComposer):
    """The zero-call correct-binding rule: compose the sender's private binding."""

    def __init__(self, prior: Prior) -> None:
        super().__init__(prior, lambda context: _private(context, "binding", "rule sender"), "rule-sender")


class FactorizedRule(BindingComposer):
    """The private binding, with the paths read back from the sender's view of the task structure.

    Under the full view that is the canonical record; under the skeleton and node views it
    is what their orderings let a symbolic reader recover (``projected_paths``), which the
    contract check and the world then judge like any other record.
    """

    def __init__(self, prior: Prior) -> None:
        super().__init__(prior, lambda context: _private(context, "binding", "factorized rule"), "factorized-rule")

    def proposal(self, context: LocalContext) -> Proposal:
        binding, template = self.binding(context), context.template
        if template is None:
            raise ConfigError(Reason.CONTEXT_LACKS_FIELD, "the factorized rule reads paths from a public task template")
        view = context.prior_view or PriorView.FULL
        if view is PriorView.NONE:
            raise ConfigError(Reason.NO_TASK_VIEW, "the factorized rule needs a view of the task structure, not none")
        paths = projected_paths(self.prior.templates[template].bindings[binding], view)
        return compose_paths(
            self.prior, template, paths, sender=context.agent, receiver=context.peer, params=context.params
        )


class RequestRealizer:
    """The deterministic receiver: its SELF is exactly the delivered request's path.

    Asked for a private-structure delivery (``receiver_delivery``), it takes on what the
    shared delivery processing would: the PATH, the SLICE linearized, the GOAL planned.
    """

    name = "request-realizer"

    def __init__(self, prior: Prior) -> None:
        self.prior = prior

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if request.stage is Stage.DIALOGUE_RECEIVER:
            return Reply(self._reply(context, request), model_calls=0)
        if request.stage is Stage.RECEIVER_DELIVERY and request.delivered_request is not None:
            delivery = parse_delivery(request.delivered_request)
            if not isinstance(delivery, Delivery):
                raise ConfigError(Reason.NO_REQUEST, "a delivery receiver is asked with the content, not a reference")
            path = realized_path(delivery, received(delivery, context.inventory), self.prior)
            spoken = surface(context.surface, self.prior.vocab)
            return Reply(spoken.serialize(Proposal(path, ())), model_calls=0)
        if request.delivered_request is None:
            raise ConfigError(
                Reason.NO_REQUEST, "the request realizer needs a delivered REQ; use a branch guesser without one"
            )
        adopted = _adopted(self.prior, context.surface, request.delivered_request)
        if adopted is None:  # the protocol delivers exactly one REQ line
            raise ConfigError(Reason.NO_REQUEST, "the delivered message holds no request")
        return Reply(adopted, model_calls=0)

    def _reply(self, context: LocalContext, request: GenerationRequest) -> str:
        """Take on exactly the steps the sender's latest turn asked of this agent."""
        latest = [line for line in request.dialogue if parse_line(line).speaker == context.peer][-1:]
        heard = requested_steps(latest, context.peer, self.prior.vocab)
        asked = tuple(step for target, steps in heard if target == context.agent for step in steps)
        if not asked:
            return f"Sorry {context.peer}, I heard no request for me."
        return receiver_turn(asked, context.peer, sender_done(parse_line(latest[0]).text))


class DirectoryLookup:
    """The directory-lookup receiver: the binding code in the delivered REQ keys the receiver path.

    It reads one field of what it received (``bind``) and none of the path: the shared task
    structure is the directory. A request without a known code gets an empty answer, which
    the protocol reports as a parse failure, as it would any unusable record.
    """

    name = "directory-lookup"

    def __init__(self, prior: Prior) -> None:
        self.prior = prior

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if request.delivered_request is None:
            raise ConfigError(
                Reason.NO_REQUEST, "the directory lookup needs a delivered REQ to read a binding code from"
            )
        delivered = _surface(self.prior, context.surface).delivered(request.delivered_request).request
        codes = [value for task in delivered.plan for key, value in task.args if key == "bind"] if delivered else []
        if not codes or codes[0] not in self.prior.codebook:
            return Reply("", model_calls=0)
        looked_up = composed(self.prior, str(codes[0]), context.peer, context.agent, context.params)
        assert looked_up.request is not None  # every template binding has a receiver path
        return Reply(_text(self.prior, context.surface, Proposal(looked_up.request.plan, ())), model_calls=0)


class BranchGuesser:
    """A receiver without the request: picks one public branch, seeded, and realizes it."""

    name = "branch-guesser"

    def __init__(self, prior: Prior, seed: int) -> None:
        self.prior = prior
        self.seed = seed

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if not context.branches:
            raise ConfigError(Reason.NO_BRANCHES, f"{context.agent}'s context names no public branches to choose from")
        binding = random.Random(f"{self.seed}:{context.agent}").choice(sorted(context.branches))
        proposal = composed(self.prior, binding, context.peer, context.agent, context.params)
        assert proposal.request is not None  # every template binding has a receiver path
        return Reply(_text(self.prior, context.surface, Proposal(proposal.request.plan, ())), model_calls=0)


class RuleRequester:
    """Goal×Capability requester: local plan, then ACCEPT keeps it and COUNTER moves it.

    With the peer's mode in its private context (the centralized full-information
    condition) it composes the binding that mode needs from the start.
    """

    name = "rule-requester"

    def __init__(self, prior: Prior, suites: SuiteDocument | None = None) -> None:
        self.prior = prior
        self.suites = suites or default_suites()

    def initial_binding(self, context: LocalContext) -> str:
        goal = _private(context, "goal", self.name)
        spec = self.suites.goal_capability.goals.get(goal)
        if spec is None:
            raise ConfigError(Reason.UNKNOWN_GOAL, f"{goal!r} is not a Goal×Capability goal")
        binding = spec.initial
        mode = context.private.get("peer_workcell_mode")
        if mode is not None:
            local = composed(self.prior, binding, context.agent, context.peer, context.params)
            assert local.request is not None
            answer = respond(local.request, context.agent, mode, self.prior)
            if answer.counter_offer_id is not None:
                binding = self.prior.counter_offers[answer.counter_offer_id].moves[binding]
        return binding

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        binding = self.initial_binding(context)
        initial = composed(self.prior, binding, context.agent, context.peer, context.params)
        if request.stage in (Stage.REQUESTER_INITIAL, Stage.SENDER_INITIAL):
            return Reply(_text(self.prior, context.surface, initial), model_calls=0)
        if request.stage is not Stage.REQUESTER_AFTER_RESPONSE or request.response is None:
            raise ConfigError(Reason.WRONG_STAGE, f"{self.name} cannot act at {request.stage.value}")
        response = parse_response(request.response)
        if response.decision == "COUNTER" and response.counter_offer_id is not None:
            target = self.prior.counter_offers[response.counter_offer_id].moves.get(binding)
            if target is not None:
                revised = realize_alternative(initial, binding, target, context.agent, context.peer, self.prior)
                return Reply(_text(self.prior, context.surface, revised), model_calls=0)
        return Reply(_text(self.prior, context.surface, initial), model_calls=0)
