"""The JSON record of one team task: the fields scripts rely on, then the whole trace.

The first fields are the ``--jsonl`` contract of ``gencoord tasks run`` (task, agents,
success, feasible, code, message, messages, wire_bytes, model_calls, duration_s); the
rest is the trace a report shows: every message as it crossed the wire, the lead's
generations, the commitment's paths and hand-overs, the dispatch plan, each action.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from gencoord import __version__
from gencoord.dsl.serialize import format_path
from gencoord.protocol.generation import Generation
from gencoord.run.kinds import task_kind
from gencoord.run.record import action_rows, observation_record, plan_record
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_run import TeamResult
from gencoord.tasks.blueprint import AIR, BuildScore
from gencoord.tasks.build import BuildTask
from gencoord.tasks.task_format import AnyTask
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
    "verdict",
)
"""The fields of ``gencoord tasks run --jsonl``, in order: a contract scripts rely on (new fields go last)."""

SUCCEEDED, FAILED, REFUSED = "succeeded", "failed", "refused"
"""A recorded task's one verdict. A fourth, *not run*, has no record: an outage stopped the run first."""


def verdict_of(success: bool, feasible: bool | None) -> str:
    """Succeeded; refused before acting (unreadable as written, or out of the team's reach, with its reason);
    or failed: the terminal, ``--jsonl``, the records and both reports count each task under exactly one."""
    if success:
        return SUCCEEDED
    return REFUSED if feasible is False else FAILED


def task_verdict(record: Mapping[str, Any]) -> str:
    """A record's verdict (records from before verdicts were written are judged from their fields)."""
    verdict = record.get("verdict")
    if isinstance(verdict, str):
        return verdict
    return verdict_of(bool(record.get("success")), False if record.get("refused") else record.get("feasible"))


def summary(result: TeamResult) -> dict[str, Any]:
    """The per-task line of ``gencoord tasks run --jsonl``."""
    duration = result.duration_s
    return {
        "task": result.task.id,
        "agents": len(result.task.agents),
        "success": result.success,
        "feasible": result.feasible,
        "code": result.code,
        "failure": result.failure,
        "message": result.message,
        "messages": len(result.wire.messages),
        "wire_bytes": result.wire.total_bytes,
        "model_calls": result.model_calls,
        "tokens": result.tokens,
        "thinking_s": round(result.thinking_s, 3),
        "duration_s": None if duration is None else round(duration, 3),
        "verdict": verdict_of(result.success, result.feasible),
    }


def task_digest(task: AnyTask | Refusal) -> str:
    """What a record was made from: the task's whole content, or the refusal's code and words.

    A resumed run reuses a record only when this and the gencoord version match, so a task
    fixed in its file, or a new gencoord, runs again.
    """
    content = json.dumps([task.code, task.message]) if isinstance(task, Refusal) else task.model_dump_json()
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def team_record(result: TeamResult, source: str, world: str, backend: str | None = None) -> dict[str, Any]:
    """The record of one team task; ``backend`` is who played it as the run wrote it (default: the lead's name)."""
    commitment, execution = result.commitment, result.execution
    body: dict[str, Any] = {
        **summary(result),
        "version": TEAM_RECORD_VERSION,
        "gencoord": __version__,
        "task_sha256": task_digest(result.task),
        "refused": False,
        "file": source,
        "source": result.task.source,
        "goal": goal_record(result.task),
        "axes": task_kind(result.task).axes(result.task),
        "build": None if result.built is None else build_record(result),
        "recipe_bytes": result.recipe_bytes,
        "time_limit_s": result.task.time_limit_s,
        "mode": result.mode.value,
        "surface": result.surface.value,
        "world": world,
        "lead": result.lead,
        "backend": result.backend if backend is None else backend,
        "lead_backend": result.backend,
        "rounds": result.rounds,
        "generations": [generation_record(g) for g in result.generations],
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
        "wall_s": round(
            sum(result.seconds.values()), 3
        ),  # protocol and world on this machine's clock, beside duration_s
        "single_crafter_s": None if result.single_crafter_s is None else round(result.single_crafter_s, 3),
        "planned_makespan_s": None if result.planned_makespan_s is None else round(result.planned_makespan_s, 3),
        "notes": result.task.notes,
    }
    return body


def generation_record(generation: Generation) -> dict[str, Any]:
    """One message an agent wrote: what it said and what saying it cost (tokens None: a rule has no tokenizer)."""
    reply = generation.reply
    return {
        "agent": generation.agent,
        "stage": generation.stage,
        "text": reply.text,
        "model_calls": reply.model_calls,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "latency_s": round(reply.latency_s, 6),
        "charge": reply.charge,
    }


def goal_record(task: AnyTask) -> dict[str, Any]:
    """What the task asks for: an item held, items held together, or a blueprint standing."""
    return task_kind(task).goal(task)


MISMATCHES_KEPT = 50
"""Mismatched cells a record lists one by one (the grids show every cell)."""


def build_record(result: TeamResult) -> dict[str, Any]:
    """The blueprint check: score overall and per level, and per level a grid a person reads at a glance.

    Each grid row is one z, each character one x: ``#`` a block as the blueprint says, ``x`` a
    wrong or missing block, ``!`` a block where air must be, ``.`` air as it should be.
    """
    assert isinstance(result.task, BuildTask) and result.built is not None
    built: BuildScore = result.built
    expected = result.task.blueprint.relative()
    wrong = {m.cell: m for m in built.mismatched}
    width, levels, depth = result.task.blueprint.size()
    grids = []
    for level in range(levels):
        rows = []
        for z in range(depth):
            row = ""
            for x in range(width):
                cell = (x, level, z)
                if cell not in wrong:
                    row += "#" if expected.get(cell, AIR) != AIR else "."
                else:
                    row += "!" if wrong[cell].expected == AIR else "x"
            rows.append(row)
        grids.append(rows)
    return {
        "score": round(built.score, 6),
        "matches": built.matches,
        "mismatches": built.mismatches,
        "levels": [
            {"level": s.level, "matches": s.matches, "mismatches": s.mismatches, "score": round(s.score, 6)}
            for s in built.levels
        ],
        "grids": grids,
        "mismatched": [
            {"cell": list(m.cell), "expected": m.expected, "actual": m.actual}
            for m in built.mismatched[:MISMATCHES_KEPT]
        ],
    }


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
        "verdict": REFUSED,
        "wall_s": 0.0,
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
