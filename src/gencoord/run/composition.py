"""One composition-reference episode: a method's receiver path for an unseen cross-product, executed and judged.

The sender hands over the case's material and requests the receiver path the method
produced; the request crosses the wire as a REQ line, is checked, resolved against both
agents' holdings, materialized, executed, and judged against the case's own goal, so a
composed path counts only if the world agrees it reaches the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gencoord.dsl.ast import PeerRequest, Proposal
from gencoord.dsl.surface import DslSurface
from gencoord.errors import CompileError, FailureCode, WorldError
from gencoord.planning.composition import CompositionMethod, receiver_path, sender_path
from gencoord.prior.contract import check_proposal
from gencoord.prior.prior import Prior
from gencoord.protocol.resolve import resolve_team
from gencoord.protocol.result import Fail, ProtocolResult, Success, Trace
from gencoord.run.episode import execute
from gencoord.run.lifecycle import PROTOCOL_ERRORS
from gencoord.run.record import action_rows
from gencoord.runtime.materialize import materialize
from gencoord.runtime.verify import Execution, Outcome, judge, not_formed
from gencoord.tasks.cross_products import CompositionCase
from gencoord.tasks.spec import SuiteDocument
from gencoord.worlds.executor import Executor


@dataclass(frozen=True)
class CompositionResult:
    case: CompositionCase
    method: CompositionMethod
    protocol: ProtocolResult
    execution: Execution | None
    outcome: Outcome


def _coordinate(
    case: CompositionCase, method: CompositionMethod, prior: Prior, suites: SuiteDocument
) -> ProtocolResult:
    spec, trace = case.spec, Trace()
    try:
        request = PeerRequest(spec.receiver, receiver_path(method, case, prior, suites))
        proposal = Proposal(sender_path(case, prior).self_plan, (request,))
        trace.wire.send(spec.sender, spec.receiver, "REQ", DslSurface(prior.vocab).request(request))
        check_proposal(proposal, spec.sender, prior, spec.public)
        holdings = {agent.name: dict(agent.inventory) for agent in spec.world.agents}
        commitment = resolve_team(proposal, spec.sender, holdings, prior, spec.public)
        trace.proposals.append((spec.sender, proposal))
        return Success(commitment, materialize(commitment, prior, spec.public), trace)
    except PROTOCOL_ERRORS as error:
        return Fail(FailureCode(error.code), error, trace)


def run_composition(
    case: CompositionCase, method: CompositionMethod, executor: Executor, prior: Prior, suites: SuiteDocument
) -> CompositionResult:
    protocol = _coordinate(case, method, prior, suites)
    if not isinstance(protocol, Success):
        assert isinstance(protocol, Fail)  # nothing here answers with NoCommitment
        outcome = not_formed(protocol.code, protocol.error.reason, protocol.error.message)
        return CompositionResult(case, method, protocol, None, outcome)
    try:
        execution = execute(protocol.plan, case.spec, executor, prior)
    except (CompileError, WorldError) as error:
        outcome = Outcome(True, None, None, False, False, FailureCode.EXECUTION_FAILURE, error.reason, error.message)
        return CompositionResult(case, method, protocol, None, outcome)
    return CompositionResult(case, method, protocol, execution, judge(protocol.plan, case.spec.goal, execution))


def composition_record(result: CompositionResult) -> dict[str, Any]:
    spec, outcome = result.case.spec, result.outcome
    protocol = result.protocol
    return {
        "episode": f"cross-product-{result.case.index:03d}/r{spec.role}/s{spec.seed}",
        "cluster": f"cross-product-{result.case.index:03d}",
        "cross_product": result.case.factors.name,
        "method": result.method.value,
        "role": spec.role,
        "seed": spec.seed,
        "sender": spec.sender,
        "receiver": spec.receiver,
        "count": result.case.count,
        "goal": [requirement.describe() for requirement in spec.goal],
        "messages": [{"kind": m.kind, "payload": m.payload, "bytes": m.nbytes} for m in protocol.trace.wire.messages],
        "error": protocol.error.as_dict() if isinstance(protocol, Fail) else None,
        "actions": action_rows(result.execution),
        "outcome": {
            **outcome.stages,
            "failure": None if outcome.failure is None else outcome.failure.value,
            "reason": outcome.reason,
            "message": outcome.message,
        },
    }
