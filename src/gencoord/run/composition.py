"""One composition-reference episode: a method's receiver path for an unseen cross-product, executed and judged.

For the rule methods the sender hands over the case's material and requests the receiver
path the method produced; Direct Short DSL is one model call from the sender's factor-form
context that writes the whole SELF+REQ record, parsed as a peer's would be. Either way the
request crosses the wire as a REQ line, is checked, resolved against both agents'
holdings, materialized, executed, and judged against the case's own goal, so a path
counts only if the world agrees it reaches the terminal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from gencoord.backends.base import Backend
from gencoord.dsl.ast import Proposal
from gencoord.dsl.surface import DslSurface
from gencoord.errors import CompileError, FailureCode, WorldError
from gencoord.planning.composition import CompositionMethod, rule_proposal
from gencoord.prior.contract import check_proposal
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import Generation, GenerationRequest, Stage
from gencoord.protocol.resolve import resolve_team
from gencoord.protocol.result import Fail, ProtocolResult, Success, Trace
from gencoord.run.episode import execute
from gencoord.run.lifecycle import PROTOCOL_ERRORS
from gencoord.run.record import action_rows, observation_record, outcome_record, protocol_record
from gencoord.runtime.materialize import materialize
from gencoord.runtime.verify import Execution, Outcome, judge, not_formed
from gencoord.tasks.cross_products import CompositionCase
from gencoord.tasks.suites import SuiteDocument
from gencoord.worlds.executor import Executor


@dataclass(frozen=True)
class CompositionResult:
    case: CompositionCase
    method: CompositionMethod
    protocol: ProtocolResult
    execution: Execution | None
    outcome: Outcome
    protocol_s: float  # measured: from the method's first step to the dispatch plan


def _generated(case: CompositionCase, backend: Backend, prior: Prior, trace: Trace) -> Proposal:
    """The sender model's record for the case, parsed (a malformed one raises the parser's error)."""
    spec = case.spec
    request = GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
    reply = backend.generate(spec.contexts[spec.sender], request)
    trace.generations.append(Generation(spec.sender, request.stage.value, reply))
    return DslSurface(prior.vocab).parse(reply.text)


def _coordinate(
    case: CompositionCase, method: CompositionMethod, prior: Prior, suites: SuiteDocument, backend: Backend | None
) -> ProtocolResult:
    spec, trace = case.spec, Trace()
    try:
        if method is CompositionMethod.DIRECT_SHORT_DSL:
            if backend is None:
                raise ValueError("Direct Short DSL needs the backend that writes its records")
            proposal = _generated(case, backend, prior, trace)
        else:
            proposal = rule_proposal(method, case, prior, suites)
        for request in proposal.peer_requests:
            trace.wire.send(spec.sender, request.target, "REQ", DslSurface(prior.vocab).request(request))
        check_proposal(proposal, spec.sender, prior, spec.public)
        holdings = {agent.name: dict(agent.inventory) for agent in spec.world.agents}
        commitment = resolve_team(proposal, spec.sender, holdings, prior, spec.public)
        trace.proposals.append((spec.sender, proposal))
        return Success(commitment, materialize(commitment, prior, spec.public), trace)
    except PROTOCOL_ERRORS as error:
        return Fail(FailureCode(error.code), error, trace)


def run_composition(
    case: CompositionCase,
    method: CompositionMethod,
    executor: Executor,
    prior: Prior,
    suites: SuiteDocument,
    backend: Backend | None = None,
) -> CompositionResult:
    """``backend``: the sender's, for Direct Short DSL (the rule methods need none)."""
    clock = time.perf_counter()
    protocol = _coordinate(case, method, prior, suites, backend)
    seconds = time.perf_counter() - clock
    if not isinstance(protocol, Success):
        assert isinstance(protocol, Fail)  # nothing here answers with NoCommitment
        outcome = not_formed(protocol.code, protocol.error.reason, protocol.error.message)
        return CompositionResult(case, method, protocol, None, outcome, seconds)
    try:
        execution = execute(protocol.plan, case.spec, executor, prior)
    except (CompileError, WorldError) as error:
        outcome = Outcome(True, None, None, False, False, FailureCode.EXECUTION_FAILURE, error.reason, error.message)
        return CompositionResult(case, method, protocol, None, outcome, seconds)
    outcome = judge(protocol.plan, case.spec.goal, execution)
    return CompositionResult(case, method, protocol, execution, outcome, seconds)


def composition_record(result: CompositionResult) -> dict[str, Any]:
    """An episode record in the shape the report's episode viewer reads, with the case's factors."""
    spec, execution = result.case.spec, result.execution
    return {
        "episode": f"cross-product-{result.case.index:03d}/r{spec.role}/s{spec.seed}",
        "cluster": f"cross-product-{result.case.index:03d}",
        "template": result.case.factors.name,
        "binding": None,
        "mode": None,
        "cross_product": result.case.factors.name,
        "method": result.method.value,
        "condition": result.method.value,
        "role": spec.role,
        "seed": spec.seed,
        "sender": spec.sender,
        "receiver": spec.receiver,
        "count": result.case.count,
        "goal": [requirement.describe() for requirement in spec.goal],
        "protocol": protocol_record(result.protocol),
        "actions": action_rows(execution),
        "handoffs": [] if execution is None else [observation_record(h) for h in execution.handoffs],
        "outcome": outcome_record(result.outcome, result.protocol_s),
    }
