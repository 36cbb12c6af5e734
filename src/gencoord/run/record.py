"""EpisodeRecord: one episode as plain JSON data (what ``--json`` prints and runners append).

Everything a reader needs to audit an episode without re-running it: the cluster and
role, what each agent generated and what crossed the wire (with bytes), the
commitment, every executor action with inventories, the handoff observation, and the
C/H/T/F/G outcome with V(30)/V(60).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gencoord.dsl.ast import Task
from gencoord.dsl.serialize import format_path, format_task
from gencoord.protocol.delivery import DeliveryReport
from gencoord.protocol.plan import DispatchPlan
from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success
from gencoord.run.episode import EpisodeResult
from gencoord.runtime.verify import Execution, HandoffObservation, Outcome

RECORD_VERSION = 2  # 2: "handoffs" lists (any number of hand-overs) replace "handoff"
DEADLINES_S = (30, 60)


def action_rows(execution: Execution | None) -> list[dict[str, Any]]:
    """Every executor action that ran, with its timing, failure and the inventories it left."""
    if execution is None:
        return []
    rows = []
    for record in execution.records:
        fields = {f.name: getattr(record.action, f.name) for f in dataclasses.fields(record.action)}
        del fields["agent"], fields["task"]
        rows.append(
            {
                "index": record.index,
                "action": record.action.name,
                "agent": record.action.agent,
                "task": record.action.task,
                "args": fields,
                "start_s": round(record.start_s, 3),
                "end_s": round(record.end_s, 3),
                "ok": record.ok,
                "failure": None
                if record.failure is None
                else {"code": record.failure.code, "message": record.failure.message},
                "inventories": {agent: dict(items) for agent, items in record.inventories.items()},
            }
        )
    return rows


def plan_record(plan: DispatchPlan) -> dict[str, Any]:
    """The dispatch DAG: task ids, actors, where, and what each waits for."""
    return {
        "tasks": [
            {
                "id": task.id,
                "actor": task.actor,
                "task": format_task(Task(task.skill, task.args)),
                "place": None if task.place is None else task.place.name,
                "preds": list(task.preds),
            }
            for task in plan.tasks
        ],
        "terminal": [f"{c.holder} {c.kind} {c.quantity} {c.item}" for c in plan.terminal],
    }


def protocol_record(protocol: ProtocolResult) -> dict[str, Any]:
    """The protocol half of a record: generations, wire, and the commitment or why there is none."""
    trace = protocol.trace
    body: dict[str, Any] = {
        "status": type(protocol).__name__,
        "model_calls": trace.calls,
        "generations": [
            {
                "agent": g.agent,
                "stage": g.stage,
                "text": g.raw,
                "model_calls": g.reply.model_calls,
                "input_tokens": g.reply.input_tokens,
                "output_tokens": g.reply.output_tokens,
                "latency_s": round(g.reply.latency_s, 6),
                "charge": g.reply.charge,
            }
            for g in trace.generations
        ],
        "messages": [
            {"from": m.sender, "to": m.recipient, "kind": m.kind, "payload": m.payload, "bytes": m.nbytes}
            for m in trace.wire.messages
        ],
        "wire_bytes": trace.wire.total_bytes,
        "responses": [r.serialize() for r in trace.responses],
    }
    if trace.delivery is not None:
        body["delivery"] = _delivery(trace.delivery)
    if isinstance(protocol, Success):
        body["plan"] = plan_record(protocol.plan)
        commitment = protocol.commitment
        body["commitment"] = {
            "direction": commitment.direction,
            "binding": commitment.binding,
            "paths": {path.agent: format_path(path.tasks) for path in commitment.paths},
            "handoffs": [
                {"giver": h.giver, "receiver": h.receiver, "item": h.item, "quantity": h.quantity}
                for h in commitment.handoffs
            ],
        }
    elif isinstance(protocol, Fail):
        body["error"] = protocol.error.as_dict()
    elif isinstance(protocol, NoCommitment):
        body["no_commitment"] = protocol.reason
    return body


def _delivery(report: DeliveryReport) -> dict[str, Any]:
    sent = report.transmission
    return {
        "kind": report.kind.value,
        "cache": report.cache.value,
        "sender_complete": report.sender_complete,
        "request_bytes": None if sent is None else sent.request_bytes,
        "ack_bytes": None if sent is None else sent.ack_bytes,
        "acks": [] if sent is None else [status.value for status in sent.acks],
        "cpu_us": None if sent is None else round(sent.cpu_us, 3),
        "cache_bytes": report.cache_bytes,
        "realized_differs": report.realized_differs,
    }


def observation_record(h: HandoffObservation) -> dict[str, Any]:
    """One hand-over check H as it was observed in the world."""
    return {
        "item": h.check.item,
        "quantity": h.check.quantity,
        "giver": {"agent": h.check.giver, "before": h.giver_before, "after": h.giver_after},
        "receiver": {"agent": h.check.receiver, "before": h.receiver_before, "after": h.receiver_after},
        "delivered": h.delivered,
        "verified": h.verified,
    }


def outcome_record(outcome: Outcome, protocol_s: float) -> dict[str, Any]:
    """C/H/T/F/G, the failure, and V(30)/V(60) counted from ``protocol_s`` of time to commitment."""
    return {
        **outcome.stages,
        "failure": None if outcome.failure is None else outcome.failure.value,
        "reason": outcome.reason,
        "message": outcome.message,
        "duration_s": None if outcome.duration_s is None else round(outcome.duration_s, 3),
        **{f"V{deadline}": outcome.within(deadline, protocol_s) for deadline in DEADLINES_S},
    }


def episode_record(result: EpisodeResult) -> dict[str, Any]:
    spec, outcome = result.spec, result.outcome
    execution = result.execution
    handoffs = [] if execution is None else [observation_record(h) for h in execution.handoffs]
    return {
        "version": RECORD_VERSION,
        "episode": spec.id,
        "cluster": spec.cluster.id,
        "pair": spec.cluster.pair,
        "suite": spec.cluster.suite,
        "split": spec.cluster.split.value,
        "template": spec.cluster.template,
        "binding": spec.binding,
        "mode": spec.cluster.mode,
        "role": spec.role,
        "seed": spec.seed,
        "sender": spec.sender,
        "receiver": spec.receiver,
        "surface": spec.surface.value,
        "params": dict(spec.params),
        "condition": result.condition.value,
        "fault": result.fault.value,
        "backends": dict(result.backends),
        "protocol": protocol_record(result.protocol),
        "actions": action_rows(result.execution),
        "handoffs": handoffs,
        "final": None
        if execution is None
        else {
            "inventories": {a: dict(i) for a, i in execution.final.inventories.items()},
            "containers": {c: dict(i) for c, i in execution.final.containers.items() if i},
            "sites": {s: dict(i) for s, i in execution.final.sites.items() if i},
            "discrepancies": list(execution.final.discrepancies),
        },
        "goal": [requirement.describe() for requirement in spec.goal],
        "outcome": outcome_record(outcome, result.seconds["protocol"]),
        "seconds": {stage: round(value, 6) for stage, value in result.seconds.items()},
    }
