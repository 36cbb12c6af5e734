"""The JSON record of one team task: the fields scripts rely on, then the whole trace.

The first fields are the ``--jsonl`` contract of ``gencoord tasks run`` (task, agents,
success, feasible, code, message, messages, wire_bytes, model_calls, duration_s); the
rest is the trace a report shows: every message as it crossed the wire, the lead's
generations, the commitment's paths and hand-overs, the dispatch plan, each action.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gencoord import __version__
from gencoord.dsl.serialize import format_path
from gencoord.run.record import action_rows, observation_record, plan_record
from gencoord.run.team import TeamMode, TeamResult
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import Refusal

TEAM_RECORD_VERSION = 2
SUMMARY_FIELDS = (
    "task",
    "agents",
    "success",
    "feasible",
    "code",
    "message",
    "messages",
    "wire_bytes",
    "model_calls",
    "duration_s",
)
"""The fields of ``gencoord tasks run --jsonl``, in order: a contract scripts rely on."""


def summary(result: TeamResult) -> dict[str, Any]:
    """The per-task line of ``gencoord tasks run --jsonl``."""
    duration = result.duration_s
    return {
        "task": result.task.id,
        "agents": len(result.task.agents),
        "success": result.success,
        "feasible": result.feasible,
        "code": result.code,
        "message": result.message,
        "messages": len(result.wire.messages),
        "wire_bytes": result.wire.total_bytes,
        "model_calls": result.model_calls,
        "duration_s": None if duration is None else round(duration, 3),
    }


def task_digest(task: TeamTask | Refusal) -> str:
    """What a record was made from: the task's whole content, or the refusal's code and words.

    A resumed run reuses a record only when this and the gencoord version match, so a task
    fixed in its file, or a new gencoord, runs again.
    """
    content = task.model_dump_json() if isinstance(task, TeamTask) else json.dumps([task.code, task.message])
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def team_record(result: TeamResult, source: str, world: str) -> dict[str, Any]:
    commitment, execution = result.commitment, result.execution
    body: dict[str, Any] = {
        **summary(result),
        "version": TEAM_RECORD_VERSION,
        "gencoord": __version__,
        "task_sha256": task_digest(result.task),
        "refused": False,
        "file": source,
        "source": result.task.source,
        "goal": {"item": result.task.goal.item, "count": result.task.goal.count, "holder": result.task.goal.holder},
        "time_limit_s": result.task.time_limit_s,
        "mode": result.mode.value,
        "surface": result.surface.value,
        "world": world,
        "lead": result.lead,
        "backend": result.backend,
        "rounds": result.rounds,
        "generations": [
            {"agent": g.agent, "stage": g.stage, "text": g.reply.text, "model_calls": g.reply.model_calls}
            for g in result.generations
        ],
        "wire": [
            {"from": m.sender, "to": m.recipient, "kind": m.kind, "payload": m.payload, "bytes": m.nbytes}
            for m in result.wire.messages
        ],
        "commitment": None
        if commitment is None
        else {
            "paths": {path.agent: format_path(path.tasks) for path in commitment.paths},
            "handoffs": [
                {"giver": h.giver, "receiver": h.receiver, "item": h.item, "quantity": h.quantity}
                for h in commitment.handoffs
            ],
        },
        "plan": None if result.plan is None else plan_record(result.plan),
        "actions": action_rows(execution),
        "handoff_checks": [] if execution is None else [observation_record(h) for h in execution.handoffs],
        "stages": None if result.outcome is None else result.outcome.stages,
        "protocol_s": round(result.seconds.get("protocol", 0.0), 6),
        "single_crafter_s": None if result.single_crafter_s is None else round(result.single_crafter_s, 3),
        "planned_makespan_s": None if result.planned_makespan_s is None else round(result.planned_makespan_s, 3),
        "notes": result.task.notes,
    }
    return body


def refusal_record(
    refusal: Refusal, source: str, mode: TeamMode, surface: str, world: str, backend: str
) -> dict[str, Any]:
    """The record of a task its file could not give as written: nothing ran, and the record says why."""
    return {
        "task": refusal.task,
        "agents": 0,
        "success": False,
        "feasible": False,
        "code": refusal.code,
        "message": refusal.message,
        "messages": 0,
        "wire_bytes": 0,
        "model_calls": 0,
        "duration_s": None,
        "version": TEAM_RECORD_VERSION,
        "gencoord": __version__,
        "task_sha256": task_digest(refusal),
        "refused": True,
        "file": source,
        "mode": mode.value,
        "surface": surface,
        "world": world,
        "backend": backend,
        "notes": [],
    }
