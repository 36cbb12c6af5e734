"""The issue desk: for an issue an agent hit, the gate's features, its decision, and the local route.

LOCAL recovers by the agent's own known route (a detour, a wait, clearing a chest, the
recipe tree) or skips a node the goal does not need; ESCALATE opens an exchange on the
channel. The features are the paper's five (C, R, I, L, H) plus the gray-zone context.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict

from gencoord.gate.channel import Channel
from gencoord.gate.core import WAIT_TICKS, AgentState
from gencoord.gate.needs import action_estimate
from gencoord.gate.oracle import ESCALATE_TO, SKIP
from gencoord.gate.policy import Decision, Features, decide
from gencoord.gate.recovery import Belief, plan_recovery
from gencoord.gate.state import IssueRecord
from gencoord.gate.task_graphs import Node
from gencoord.runtime.compile import compile_task
from gencoord.worlds.actions import Action, Wait, Withdraw


class IssueDesk(Channel):
    def handle(
        self, agent: AgentState, issue: IssueRecord, node: Node, needs: dict[str, int], detail: str | None
    ) -> None:
        """Decide about ``issue`` (or take an oracle rollout's forced option) and act on it."""
        kind = issue.kind
        agent.private.blocked = kind
        local = self._local_fix(agent, node, kind, needs, detail)
        forced = self.forced.get((agent.name, node.id, kind))
        if forced is not None:
            self._take(agent, issue, node, needs, local, forced)
            return
        features = self._features(agent, node, kind, needs, local)
        if self.round < agent.cooldown_until:
            decision, tier, value, thought_s = Decision.LOCAL, "cooldown", None, None
        else:
            verdict = decide(self.condition, features, self.config, self.adjudicator)
            decision, tier, value, thought_s = verdict.decision, verdict.tier.value, verdict.score, verdict.thought_s
        issue.decisions.append(
            {"round": self.round, "decision": decision.value, "tier": tier, "score": value, **asdict(features)}
            | ({} if thought_s is None else {"thought_s": thought_s})
        )
        if decision is Decision.ESCALATE and self.escalate(agent, issue, node, kind, needs, None):
            return
        self._stay_local(agent, issue, node, local)

    def _stay_local(self, agent: AgentState, issue: IssueRecord, node: Node, local: list[Action] | None) -> None:
        """LOCAL: recover by the known route, or skip a node the goal does not need when there is none."""
        if local is not None:
            agent.queue = deque(local)
            agent.queue_node = None
            agent.serving = node.id
        elif not node.critical:
            self._skip(agent, issue, node)

    def _skip(self, agent: AgentState, issue: IssueRecord, node: Node) -> None:
        agent.skipped.add(node.id)
        issue.resolution = "skipped"
        agent.private.remember(f"{node.id} skipped")

    def _take(
        self,
        agent: AgentState,
        issue: IssueRecord,
        node: Node,
        needs: dict[str, int],
        local: list[Action] | None,
        option: str,
    ) -> None:
        """An oracle rollout's forced option for this issue: the gate's LOCAL, skip, or ask one helper
        (a helper that cannot be asked, or asked again, leaves LOCAL)."""
        if option == SKIP:
            self._skip(agent, issue, node)
            return
        helper = option.removeprefix(ESCALATE_TO)
        if option.startswith(ESCALATE_TO) and self.escalate(agent, issue, node, issue.kind, needs, helper):
            return
        self._stay_local(agent, issue, node, local)

    @staticmethod
    def required(held: dict[str, int], deficit: dict[str, int]) -> dict[str, int]:
        return {item: held.get(item, 0) + n for item, n in deficit.items()}

    def shared_planner_label(self, agent: AgentState, node: Node, kind: str, needs: dict[str, int]) -> bool:
        """The old label, kept to count what the counterfactual oracle changes: is there a local
        route in the true world, by the same planner the gate uses, that fits the budget left?"""
        if kind != "missing_material" or not node.critical:
            return True  # a detour, a wait, clearing a chest, waiting, or skipping a node nobody needs
        world = self.instance.world
        dry = {
            name
            for name, ref in world.refs.items()
            if ref.kind == "resource" and world.deposits.get(name, 64) - self.mined[name] < sum(needs.values())
        }
        truth = Belief(agent.name, agent.private.position, world.refs, frozenset(dry), world.blocked)
        required = self.required(agent.private.inventory, needs)
        plan = plan_recovery(required, truth, agent.private.inventory, self.game, self.physics)
        return plan is not None and plan.cost <= max(1, self.instance.budget - self.round)

    def _local_fix(
        self, agent: AgentState, node: Node, kind: str, needs: dict[str, int], detail: str | None
    ) -> list[Action] | None:
        """The actions of LOCAL_RECOVER for this issue, or None when the agent knows no route."""
        if kind == "path_blocked" and detail is not None:
            agent.private.blocked_refs.add(detail)
            return []
        if kind == "station_unavailable":
            ticks = math.ceil(float(detail or 0) * 20) + 1 if detail else WAIT_TICKS
            return [Wait(agent.name, f"{node.id}:wait", ticks)]
        if kind == "dependency_block":
            return [Wait(agent.name, f"{node.id}:wait", WAIT_TICKS)]
        if kind == "container_full" and detail is not None:
            seen = self.executor.snapshot().containers.get(detail, {})  # opening the chest: a verified observation
            if not seen:
                return None
            junk = max(seen, key=lambda item: seen[item])
            stack = self.game.stack_sizes.get(junk, 64)
            return [Withdraw(agent.name, f"{node.id}:clear", detail, junk, min(stack, seen[junk]))]
        required = self.required(agent.private.inventory, needs)
        plan = plan_recovery(required, self.belief(agent), agent.private.inventory, self.game, self.physics)
        if plan is None or not plan.tasks:
            return None
        world = self.belief(agent).world(agent.private.inventory)
        return self.with_detours(agent, [a for task in plan.tasks for a in compile_task(task, world, self.game)])

    def _features(
        self, agent: AgentState, node: Node, kind: str, needs: dict[str, int], local: list[Action] | None
    ) -> Features:
        left = max(1, self.instance.budget - self.round)
        own_left = sum(
            action_estimate(n.task, self.game)
            for n in self.job.nodes
            if n.agent == agent.name and n.id not in self.done
        )
        slack = max(1, left - own_left)
        cost = None if local is None else len(local)
        item, quantity = self._wanted(node, needs)
        if kind == "dependency_block":
            advantage = 1.0
        else:
            offers = [items.get(item, 0) for items in self.offers(agent).values() if item is not None]
            best = max(offers, default=0)
            advantage = 1.0 if best >= quantity > 0 else 0.5 if best > 0 else 0.0
            advantage *= 1.0 / (1.0 + agent.private.failed_requests[item or ""])
        failed = agent.private.failed_requests[item or ""]
        return Features(
            C=1.0 if node.critical else 0.0,
            R=advantage,
            I=len(self.job.downstream(node.id)) / len(self.job.nodes),
            L=0.0 if cost is None else max(0.0, 1.0 - cost / slack),
            H=1.0 - 1.0 / (1.0 + failed),
            cost=cost,
            cost_share=1.0 if cost is None else min(1.0, cost / left),
            budget_left=left / self.instance.budget,
        )

    @staticmethod
    def _wanted(node: Node, needs: dict[str, int]) -> tuple[str | None, int]:
        if needs:
            wanted = max(needs, key=lambda i: needs[i])
            return wanted, needs[wanted]
        item, quantity = node.task.get("item"), node.task.get("q")
        return (item, quantity) if isinstance(item, str) and isinstance(quantity, int) else (None, 0)
