"""A gated episode: agents work their task chains round by round and gate every issue.

Each round every agent takes one step: read one message, take its next action in a
resolved commitment, wait on an open exchange, run one action of its own, or decide
about an issue. An issue is labelled by the counterfactual oracle the moment it first
arises, then handed to the issue desk. Every episode ends within its round budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from gencoord.backends.base import Backend
from gencoord.gate.config import GateConfig, default_gate_config
from gencoord.gate.core import WAIT_TICKS
from gencoord.gate.issues import IssueDesk
from gencoord.gate.needs import node_needs
from gencoord.gate.oracle import counterfactual_outcomes, needed_escalation
from gencoord.gate.policy import Adjudicator, GateCondition, LogisticAdjudicator
from gencoord.gate.state import GateResult, IssueRecord
from gencoord.gate.suite import GateInstance
from gencoord.gate.task_graphs import Node
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.runtime.thinking import Thinking
from gencoord.worlds.actions import GoTo
from gencoord.worlds.executor import Executor
from gencoord.worlds.sim.executor import SimExecutor


class GateEpisode(IssueDesk):
    def run(self) -> GateResult:
        self.play()
        final = self.executor.snapshot()
        success = self.goal_reached()
        for issue in self.issues.values():
            if issue.resolution is None and issue.node in self.done:
                issue.resolution = "escalated" if issue.fulfilled else "local"
            elif issue.resolution is None and success and not self.job.node(issue.node).critical:
                issue.resolution = "moot"  # the goal was reached; nobody needed that node any more
        return GateResult(
            self.instance.id,
            self.job.name,
            len(self.job.agents),
            self.condition,
            success,
            self.round,
            self.instance.budget,
            tuple(self.issues.values()),
            tuple(self.messages),
            self.largest_context,
            final.clock_s,
            tuple(a.kind.value for a in self.instance.anomalies),
            self.steps if self.completion_steps is None else self.completion_steps,
            self.thinking_s,
            self.helper_calls,
        )

    def play(self) -> None:
        """Rounds until the goal's nodes are done or the budget is spent."""
        while self.round < self.instance.budget and not self.finished():
            self.round += 1
            self.disturb()
            self.play_round(self.job.agents)

    def play_round(self, names: Sequence[str]) -> None:
        for name in names:
            self._step(name)
            self.measure(self.agents[name])

    def raise_issue(self, agent: str, node: Node, kind: str, needs: dict[str, int], detail: str | None) -> None:
        """Record the issue (labelled by the oracle when it is new) and let the desk handle it."""
        key = (agent, node.id, kind)
        issue = self.issues.get(key)
        if issue is None:
            options = None if self.rollout else counterfactual_outcomes(self, agent, node, kind, needs, detail)
            issue = IssueRecord(
                len(self.issues) + 1,
                agent,
                kind,
                node.id,
                dict(needs),
                self.round,
                self.shared_planner_label(self.agents[agent], node, kind, needs),
                options,
                None if options is None else needed_escalation(options),
            )
            self.issues[key] = issue
        self.handle(self.agents[agent], issue, node, needs, detail)

    def _step(self, name: str) -> None:
        agent = self.agents[name]
        if agent.delay > 0:
            agent.delay -= 1  # busy elsewhere this round
            return
        if agent.inbox:
            self.read(agent, agent.inbox.popleft())
            return
        if agent.waiting is not None and not self.settle(agent):
            self.run_owed(agent)  # its own part of the commitment, once its predecessors ran
            return
        if self.run_owed(agent):
            return
        if agent.queue:
            self._act(name)
            return
        node = self._next_node(name)
        if node is None:
            return
        missing = self.missing(agent, node)
        if node.task.skill == "resource.obtain":
            if not missing:  # already holds what the node gathers (a recovery or a peer got it)
                self.complete(agent, node.id)
                return
        elif missing:
            self.raise_issue(name, node, "missing_material", missing, None)
            return
        if self.start(agent, node):
            self._act(name)
        else:
            self.raise_issue(name, node, "missing_material", missing, None)

    def _next_node(self, name: str) -> Node | None:
        agent = self.agents[name]
        pending = self.pending(agent)
        for node in pending:
            if self.ready(node):
                agent.private.active = node.id
                return node
        for node in pending:  # everything left waits on a peer
            since = agent.waited_since.setdefault(node.id, self.round)
            if self.round - since >= self.config.patience:
                agent.waited_since[node.id] = self.round
                blocker = next(dep for dep in node.deps if dep not in self.done)
                needs = node_needs(self.job.node(blocker).task, self.game)
                self.raise_issue(name, node, "dependency_block", needs, blocker)
            return None
        return None

    def _act(self, name: str) -> None:
        agent = self.agents[name]
        action = agent.queue.popleft()
        record = self.execute(agent, action)
        if record.failure is None:
            if not agent.queue and agent.queue_node is not None:
                self.complete(agent, agent.queue_node)
            return
        node_id = agent.serving
        self.interrupt(agent)
        code, message = record.failure.code, record.failure.message
        if code == Reason.SOURCE_EXHAUSTED and hasattr(action, "source"):
            agent.private.exhausted.add(str(action.source))  # learnt from a verified failure
        if node_id is None:
            return
        node = self.job.node(node_id)
        agent.private.remember(f"{node_id} failed {code}")
        if code == Reason.SOURCE_EXHAUSTED:
            self.raise_issue(name, node, "missing_material", self.missing(agent, node), None)
        elif code == Reason.NOT_HARVESTABLE and hasattr(action, "block"):
            tools = sorted(self.game.blocks[str(action.block)].harvest_tools or ())
            self.raise_issue(name, node, "missing_material", {tools[0]: 1} if tools else {}, None)
        elif code == Reason.PATH_BLOCKED and isinstance(action, GoTo):
            self.raise_issue(name, node, "path_blocked", {}, action.target)
        elif code == Reason.STATION_BUSY:
            wait = record.failure.retry_after_s or WAIT_TICKS / 20
            self.raise_issue(name, node, "station_unavailable", {}, str(wait))
        elif code == Reason.NO_SPACE and hasattr(action, "container"):
            self.raise_issue(name, node, "container_full", {}, str(action.container))
        else:
            self.raise_issue(name, node, "missing_material", self.missing(agent, node) or {}, message)


def run_gate_episode(
    instance: GateInstance,
    condition: GateCondition,
    *,
    config: GateConfig | None = None,
    adjudicator: Adjudicator | None = None,
    executor: Executor | None = None,
    prior: Prior | None = None,
    thinking: Thinking | None = None,
    helper: Backend | None = None,
) -> GateResult:
    prior = prior or default_prior()
    config = config or default_gate_config()
    episode = GateEpisode(
        instance,
        condition,
        config,
        adjudicator or LogisticAdjudicator(config),
        executor or SimExecutor(prior.game),
        prior,
        thinking,
        helper,
    )
    return episode.run()
