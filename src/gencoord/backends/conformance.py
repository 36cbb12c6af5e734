"""Backend conformance: what every Backend (rule, local model, grammar-constrained, API, selector, yours) must do.

Shipped with the package so that a user's own backend can be held to the same contract:

    from gencoord.backends.conformance import check_backend
    check_backend(MyBackend(), stages=[Stage.SENDER_INITIAL])   # raises ConformanceError listing failures

For each stage a backend serves, it is asked exactly what the protocol would ask it on
episodes of the paper's pools, with the agent's own context only. Its replies must be
well-formed (:class:`Reply` with honest counts) and must never break the protocol: the
record either passes the parser and the contract check or fails there with a typed
error. A backend held to ``valid=True`` must write legal records of the right shape; one
held to ``deterministic=True`` must answer the same question the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gencoord.backends.base import Backend
from gencoord.backends.rule import composed
from gencoord.dsl.serialize import request_line
from gencoord.dsl.surface import surface
from gencoord.errors import ConformanceError, GencoordError
from gencoord.prior.contract import check_proposal
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.response import respond
from gencoord.reasons import Reason
from gencoord.tasks.cluster import paper_pool
from gencoord.tasks.context import LocalContext
from gencoord.tasks.instances import EpisodeSpec, build_episode
from gencoord.tasks.suites import SuiteDocument, default_suites

RECORD_STAGES = (
    Stage.SENDER_INITIAL,
    Stage.RECEIVER_AFTER_REQUEST,
    Stage.RECEIVER_WITHOUT_REQUEST,
    Stage.REQUESTER_INITIAL,
    Stage.REQUESTER_AFTER_RESPONSE,
)
"""The stages at which a backend writes one whole record (dialogue and single-step stages have their own tests)."""

_RECEIVER_STAGES = (Stage.RECEIVER_AFTER_REQUEST, Stage.RECEIVER_WITHOUT_REQUEST)
_FEEDBACK_STAGES = (Stage.REQUESTER_INITIAL, Stage.REQUESTER_AFTER_RESPONSE)


@dataclass(frozen=True)
class Probe:
    """One question the protocol would put to an agent: its own context, and what arrived."""

    spec: EpisodeSpec
    context: LocalContext
    request: GenerationRequest


def _question(spec: EpisodeSpec, stage: Stage, prior: Prior, suites: SuiteDocument) -> Probe:
    if stage in (Stage.SENDER_INITIAL, Stage.REQUESTER_INITIAL):
        return Probe(spec, spec.contexts[spec.sender], GenerationRequest(spec.sender, stage, spec.receiver))
    if stage is Stage.RECEIVER_WITHOUT_REQUEST:
        return Probe(spec, spec.contexts[spec.receiver], GenerationRequest(spec.receiver, stage, spec.sender))
    if stage is Stage.RECEIVER_AFTER_REQUEST:
        assert spec.binding is not None  # forward pools always have one
        sent = composed(prior, spec.binding, spec.sender, spec.receiver, spec.params)
        assert sent.request is not None
        request = GenerationRequest(spec.receiver, stage, spec.sender, delivered_request=request_line(sent.request))
        return Probe(spec, spec.contexts[spec.receiver], request)
    local_plan = suites.goal_capability.goals[spec.cluster.template].initial
    initial = composed(prior, local_plan, spec.sender, spec.receiver, spec.params)
    assert initial.request is not None and spec.cluster.mode is not None
    response = respond(initial.request, spec.sender, spec.cluster.mode, prior).serialize()
    request = GenerationRequest(
        spec.sender, stage, spec.receiver, initial_proposal=prior.serialize(initial), response=response
    )
    return Probe(spec, spec.contexts[spec.sender], request)


def probes(
    stage: Stage,
    prior: Prior | None = None,
    suites: SuiteDocument | None = None,
    limit: int | None = None,
    described: str | None = None,
) -> list[Probe]:
    """The questions of ``stage`` on the timing pool (forward) or the Goal×Capability pool, both roles.

    ``described`` (C1, C2, C3) gives senders a description of their private fact instead of its code.
    """
    if stage not in RECORD_STAGES:
        raise ConformanceError(Reason.UNKNOWN_STAGE, f"{stage} is not a record stage; one of {list(RECORD_STAGES)}")
    prior, suites = prior or default_prior(), suites or default_suites()
    pool = paper_pool("goal_capability" if stage in _FEEDBACK_STAGES else "timing")
    specs = [build_episode(cluster, role, 0, prior, suites, described=described) for cluster in pool for role in (0, 1)]
    return [_question(spec, stage, prior, suites) for spec in specs[:limit]]


def _reply_problems(reply: object, model_calls: int | None) -> list[str]:
    if not isinstance(reply, Reply):
        return [f"generate returned {type(reply).__name__}, not a Reply"]
    problems = []
    if not isinstance(reply.text, str):
        problems.append(f"the reply text is {type(reply.text).__name__}, not str")
    if not isinstance(reply.model_calls, int) or reply.model_calls < 0:
        problems.append(f"model_calls must be a count, got {reply.model_calls!r}")
    elif model_calls is not None and reply.model_calls != model_calls:
        problems.append(f"model_calls is {reply.model_calls}, this backend makes {model_calls} per answer")
    for name in ("input_tokens", "output_tokens"):
        value = getattr(reply, name)
        if value is not None and (not isinstance(value, int) or value < 0):
            problems.append(f"{name} must be None or a count, got {value!r}")
    if not math.isfinite(reply.latency_s) or reply.latency_s < 0:
        problems.append(f"latency_s must be a finite non-negative time, got {reply.latency_s!r}")
    return problems


def _protocol_problems(reply: Reply, probe: Probe, stage: Stage, prior: Prior, valid: bool) -> list[str]:
    try:
        proposal = surface(probe.context.surface, prior.vocab).parse(reply.text)
        check_proposal(proposal, probe.request.agent, prior, probe.spec.public)
    except GencoordError as error:
        return [f"an illegal record: {error}"] if valid else []
    except Exception as error:  # the check's point: a record must fail only with a typed error
        return [f"the record broke the protocol with {type(error).__name__}: {error}"]
    if valid and stage in _RECEIVER_STAGES and (not proposal.self_plan or proposal.peer_requests):
        return ["a receiver must answer with a non-empty SELF and no REQ"]
    if valid and stage not in _RECEIVER_STAGES and len(proposal.peer_requests) != 1:
        return [f"a {stage.value} record requests from exactly one peer, found {len(proposal.peer_requests)}"]
    return []


def backend_violations(
    backend: Backend,
    stages: Sequence[Stage],
    *,
    prior: Prior | None = None,
    suites: SuiteDocument | None = None,
    limit: int | None = 8,
    valid: bool = True,
    deterministic: bool = True,
    model_calls: int | None = None,
    described: str | None = None,
) -> list[str]:
    """``stage / episode: what broke`` for each problem (empty: conformant).

    ``limit`` bounds the questions per stage (None: the whole pool); ``model_calls``, when
    given, is the exact number of model calls one answer must report.
    """
    prior, suites = prior or default_prior(), suites or default_suites()
    found: list[str] = []
    if not isinstance(getattr(backend, "name", None), str) or not backend.name:
        found.append("the backend has no name (a non-empty str attribute)")
    for stage in stages:
        for probe in probes(stage, prior, suites, limit, described):
            where = f"{stage.value} / {probe.spec.id}"
            reply = backend.generate(probe.context, probe.request)
            problems = _reply_problems(reply, model_calls)
            if not problems:
                problems = _protocol_problems(reply, probe, stage, prior, valid)
                if deterministic and backend.generate(probe.context, probe.request).text != reply.text:
                    problems.append("the same question got a different answer")
            found += [f"{where}: {problem}" for problem in problems]
    return found


def check_backend(backend: Backend, stages: Sequence[Stage], **settings: object) -> None:
    """Run :func:`backend_violations`; raise :class:`ConformanceError` listing every problem."""
    found = backend_violations(backend, stages, **settings)  # type: ignore[arg-type]
    if found:
        shown = "\n".join(found[:20]) + (f"\n… and {len(found) - 20} more" if len(found) > 20 else "")
        raise ConformanceError(Reason.BACKEND, f"{len(found)} problem(s):\n{shown}")
