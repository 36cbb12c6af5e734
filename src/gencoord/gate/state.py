"""The gate's records: an agent's private execution state, its issues, an episode's result."""

from __future__ import annotations

import json
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from gencoord.gate.policy import GateCondition
from gencoord.protocol.wire import WireMessage


@dataclass
class PrivateState:
    """m_priv: inventory, active task, position, blockage, verified history; bounded."""

    inventory: dict[str, int]
    position: tuple[float, float, float]
    active: str | None = None
    blocked: str | None = None
    history: deque[str] = field(default_factory=deque)
    exhausted: set[str] = field(default_factory=set)
    blocked_refs: set[str] = field(default_factory=set)
    failed_requests: Counter[str] = field(default_factory=Counter)  # item → failed requests (the H penalty)
    refused_by: dict[str, set[str]] = field(default_factory=dict)  # item → peers that failed to supply it

    def remember(self, event: str) -> None:
        self.history.append(event)

    def size(self) -> int:
        return len(
            json.dumps(
                {
                    "inventory": self.inventory,
                    "position": self.position,
                    "active": self.active,
                    "blocked": self.blocked,
                    "history": list(self.history),
                    "exhausted": sorted(self.exhausted),
                    "blocked_refs": sorted(self.blocked_refs),
                    "failed_requests": dict(self.failed_requests),
                    "refused_by": {item: sorted(peers) for item, peers in self.refused_by.items()},
                }
            )
        )


@dataclass
class IssueRecord:
    id: int
    agent: str
    kind: str
    node: str
    needs: dict[str, int]
    round: int
    shared_planner_recoverable: bool  # the old label: a local route by the gate's own planner (kept for comparison)
    oracle: dict[str, bool] | None = None  # option → the job completes (counterfactual rollouts); None in a rollout
    needed_escalation: bool | None = None  # no local option completes the job, some escalation does
    decisions: list[dict[str, Any]] = field(default_factory=list)
    escalated: bool = False
    fulfilled: bool = False  # the requested items truly arrived (verified by the world)
    promise_taken_as_fact: bool = False  # no partition: an ACCEPT was written into private state as a delivery
    commitment: str | None = None  # the n-party SELF+REQ every helper accepted (Short DSL)
    stages: dict[str, bool | None] | None = None  # C/H/T/F of that commitment, as it ended
    cancelled_actions: int = 0  # actions of the commitment cancelled when it failed
    exchange_error: str | None = None  # why the exchange failed (a refusal, the window, an action, a check)
    resolution: str | None = None  # local / escalated / skipped / moot; None: unresolved at the end


@dataclass(frozen=True)
class GateResult:
    instance: str
    job: str
    agents: int
    condition: GateCondition
    success: bool
    rounds: int
    budget: int
    issues: tuple[IssueRecord, ...]
    messages: tuple[WireMessage, ...]
    context_bytes: int  # the largest private context any agent carried
    duration_s: float
    anomalies: tuple[str, ...]
    completion_steps: int  # executor actions until the goal's nodes were done (all taken, when never)
    thinking_s: float = 0.0  # world time agents spent writing messages (0 unless thinking is configured)
    helper_calls: int = 0  # model calls the helpers' backend made (0: the rule helper)

    def record(self) -> dict[str, Any]:
        escalations = [i for i in self.issues if i.escalated]
        return {
            "instance": self.instance,
            "gate_job": self.job,
            "agents": self.agents,
            "condition": self.condition.value,
            "success": self.success,
            "rounds": self.rounds,
            "budget": self.budget,
            "anomalies": list(self.anomalies),
            "issues": [vars(issue) for issue in self.issues],
            "issue_count": len(self.issues),
            "thinking_s": round(self.thinking_s, 3),
            "helper_model_calls": self.helper_calls,
            "moot_issues": sum(i.resolution == "moot" for i in self.issues),
            "resolved_locally": sum(i.resolution in ("local", "skipped") for i in self.issues),
            "escalations": len(escalations),
            "unnecessary_escalations": sum(not i.needed_escalation for i in escalations),
            "needed_escalations": sum(bool(i.needed_escalation) for i in self.issues),
            # the old shared-planner label said "needed escalation" (no local route) where the oracle does not, or back
            "relabelled_issues": sum(
                (not i.shared_planner_recoverable) != bool(i.needed_escalation) for i in self.issues
            ),
            "shared_planner_unnecessary_escalations": sum(i.shared_planner_recoverable for i in escalations),
            "completion_steps": self.completion_steps,
            "promises_taken_as_fact": sum(i.promise_taken_as_fact for i in self.issues),
            "fulfilled_escalations": sum(i.fulfilled for i in escalations),
            "messages": len(self.messages),
            "wire_bytes": sum(m.nbytes for m in self.messages),
            "message_log": [
                {"from": m.sender, "to": m.recipient, "kind": m.kind, "payload": m.payload} for m in self.messages
            ],
            "context_bytes": self.context_bytes,
            "duration_s": round(self.duration_s, 3),
        }
