"""A gated episode: agents work their task chains round by round and gate every issue.

Each round every agent takes one step: read one message, wait on an open request, run
one executor action, or decide about an issue. Private state changes only from executor
records (what the world verified). The public channel carries only protocol signals:
``REQUEST_MATERIAL`` with a Short DSL SELF+REQ body, answered ``ACCEPT`` or
``CANNOT_SUPPLY``. A failed request raises the history penalty and starts a cooldown,
after which the agent recovers locally or skips a non-critical node. Every episode ends
within its round budget.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from gencoord.gate.config import GateConfig, default_gate_config
from gencoord.gate.jobs import Node
from gencoord.gate.needs import action_estimate, node_needs
from gencoord.gate.oracle import ESCALATE_TO, SKIP, counterfactual_outcomes, needed_escalation
from gencoord.gate.policy import (
    Adjudicator,
    Decision,
    Features,
    GateCondition,
    LogisticAdjudicator,
    decide,
)
from gencoord.gate.recovery import Belief, plan_recovery
from gencoord.gate.state import GateResult, IssueRecord, PrivateState
from gencoord.gate.suite import GateInstance
from gencoord.prior.contract import check_proposal
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.protocol.plan import Place, PlannedTask
from gencoord.protocol.response import Response
from gencoord.protocol.wire import WireMessage
from gencoord.runtime.compile import compile_task
from gencoord.runtime.verify import unmet
from gencoord.worlds.actions import Action, GiveItem, GoTo, ObtainBlock, Program, Wait, Withdraw
from gencoord.worlds.executor import ActionRecord, Executor
from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.sim.physics import default_physics

WAIT_TICKS = 100


@dataclass
class _Request:
    issue: IssueRecord
    requester: str
    helper: str
    item: str
    quantity: int
    deadline: int
    baseline: int
    answer: str | None = None  # ACCEPT / CANNOT_SUPPLY


@dataclass
class _Agent:
    name: str
    private: PrivateState
    delay: int
    queue: deque[Action] = field(default_factory=deque)
    queue_node: str | None = None  # the node the queue completes (None: a recovery or a helping hand)
    serving: str | None = None  # the node the queue is for, completed or recovered
    inbox: deque[WireMessage] = field(default_factory=deque)
    context: list[str] = field(default_factory=list)  # public messages this agent carries
    waiting: _Request | None = None
    cooldown_until: int = 0
    waited_since: dict[str, int] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
    promised: list[_Request] = field(default_factory=list)  # no partition: accepted, believed, not yet seen


class _Episode:
    def __init__(
        self,
        instance: GateInstance,
        condition: GateCondition,
        config: GateConfig,
        adjudicator: Adjudicator,
        executor: Executor,
        prior: Prior,
    ) -> None:
        self.instance = instance
        self.job = instance.job
        self.condition = condition
        self.partitioned = condition is not GateCondition.FULL_NO_PARTITION
        self.config = config
        self.adjudicator = adjudicator
        self.executor = executor
        self.prior = prior
        self.game = prior.game
        self.physics = default_physics()
        self.public = prior.episode(None, self.job.agents)
        start = executor.reset(instance.world)
        self.agents = {
            spec.name: _Agent(
                spec.name,
                PrivateState(
                    dict(start.inventories[spec.name]), spec.position, history=deque(maxlen=config.max_history)
                ),
                instance.delays.get(spec.name, 0),
            )
            for spec in instance.world.agents
        }
        self.done: set[str] = set()
        self.mined: Counter[str] = Counter()  # blocks taken per resource area (for the oracle)
        self.issues: dict[tuple[str, str, str], IssueRecord] = {}
        self.messages: list[WireMessage] = []
        self.round = 0
        self.largest_context = 0
        self.steps = 0  # executor actions taken (all agents)
        self.completion_steps: int | None = None  # executor actions until the goal's nodes were all done
        # an oracle rollout: each listed issue gets the forced option; no rollout labels its own issues
        self.forced: dict[tuple[str, str, str], str] = {}
        self.rollout = False

    # ----------------------------------------------------------------- the loop
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
        )

    def play(self) -> None:
        """Rounds until the goal's nodes are done or the budget is spent."""
        while self.round < self.instance.budget and not self._finished():
            self.round += 1
            self.play_round(self.job.agents)

    def play_round(self, names: Sequence[str]) -> None:
        for name in names:
            self._step(self.agents[name])
            self._measure(self.agents[name])

    def shared(self) -> tuple[object, ...]:
        """What an oracle rollout shares with this episode instead of copying: nothing of it changes."""
        return (self.prior, self.game, self.physics, self.config, self.adjudicator, self.instance, self.public)

    def raise_issue(self, agent: str, node: Node, kind: str, needs: dict[str, int], detail: str | None) -> None:
        self._issue(self.agents[agent], node, kind, needs, detail)

    def goal_reached(self) -> bool:
        goal = tuple(spec.requirement({}, {}) for spec in self.job.spec.goal)
        return not unmet(goal, self.executor.snapshot())

    def _finished(self) -> bool:
        finished = all(node.id in self.done for node in self.job.nodes if node.critical)
        if finished and self.completion_steps is None:
            self.completion_steps = self.steps
        return finished

    def _measure(self, agent: _Agent) -> None:
        size = agent.private.size() + sum(len(m) for m in agent.context)
        self.largest_context = max(self.largest_context, size)

    def _step(self, agent: _Agent) -> None:
        if agent.delay > 0:
            agent.delay -= 1  # busy elsewhere this round
            return
        if agent.inbox:
            self._read(agent, agent.inbox.popleft())
            return
        if agent.waiting is not None and not self._settle(agent):
            return
        if agent.queue:
            self._act(agent)
            return
        node = self._next_node(agent)
        if node is None:
            return
        missing = self._missing(agent, node)
        if node.task.skill == "resource.obtain":
            if not missing:  # already holds what the node gathers (a recovery got it)
                self._complete(agent, node.id)
                return
        elif missing:
            self._issue(agent, node, "missing_material", missing)
            return
        if self._start(agent, node):
            self._act(agent)
        else:
            self._issue(agent, node, "missing_material", missing)

    # ----------------------------------------------------------------- nodes
    def _ready(self, node: Node) -> bool:
        return all(dep in self.done for dep in node.deps)

    def _next_node(self, agent: _Agent) -> Node | None:
        pending = [n for n in self.job.nodes if n.agent == agent.name and n.id not in self.done | agent.skipped]
        for node in pending:
            if self._ready(node):
                agent.private.active = node.id
                return node
        for node in pending:  # everything left waits on a peer
            since = agent.waited_since.setdefault(node.id, self.round)
            if self.round - since >= self.config.patience:
                agent.waited_since[node.id] = self.round
                blocker = next(dep for dep in node.deps if dep not in self.done)
                self._issue(
                    agent, node, "dependency_block", node_needs(self.job.node(blocker).task, self.game), blocker
                )
            return None
        return None

    def _requirement(self, node: Node) -> dict[str, int]:
        """What the actor must hold: a gathering node's yield, or what any other node consumes."""
        item, quantity = node.task.get("item"), node.task.get("q")
        if node.task.skill == "resource.obtain" and isinstance(item, str) and isinstance(quantity, int):
            return {item: quantity}
        return node_needs(node.task, self.game)

    def _missing(self, agent: _Agent, node: Node) -> dict[str, int]:
        held = agent.private.inventory
        return {item: n - held.get(item, 0) for item, n in self._requirement(node).items() if held.get(item, 0) < n}

    @staticmethod
    def _required(held: dict[str, int], deficit: dict[str, int]) -> dict[str, int]:
        return {item: held.get(item, 0) + n for item, n in deficit.items()}

    def _planned(self, node: Node) -> PlannedTask:
        place = None
        if node.task.skill == "craft.item":
            station = self.public.station_for("crafting_table")
            place = None if station is None else Place("ref", station)
        return PlannedTask(node.id, node.agent, node.task.skill, node.task.args, place, ())

    def _start(self, agent: _Agent, node: Node) -> bool:
        """Queue the node's actions; False when the agent knows no way to carry it out."""
        belief = self._belief(agent)
        world = belief.world(agent.private.inventory)
        if node.task.skill == "resource.obtain":  # gather from a source the agent still believes in
            plan = plan_recovery(self._requirement(node), belief, agent.private.inventory, self.game, self.physics)
            if plan is None:
                return False
            actions = tuple(a for task in plan.tasks for a in compile_task(task, world, self.game))
        else:
            actions = compile_task(self._planned(node), world, self.game)
        agent.queue = deque(self._with_detours(agent, actions))
        agent.queue_node = agent.serving = node.id
        return True

    def _with_detours(self, agent: _Agent, actions: Sequence[Action]) -> list[Action]:
        return [
            GoTo(a.agent, a.task, a.target, a.target_kind, True)
            if isinstance(a, GoTo) and a.target in agent.private.blocked_refs
            else a
            for a in actions
        ]

    def _belief(self, agent: _Agent) -> Belief:
        private = agent.private
        refs = self.public.refs
        return Belief(agent.name, private.position, refs, frozenset(private.exhausted), frozenset(private.blocked_refs))

    # ----------------------------------------------------------------- acting
    def _act(self, agent: _Agent) -> None:
        action = agent.queue.popleft()
        [record] = self.executor.run(Program((action,), ((),), ()), 0, 1)
        self.steps += 1
        self._observe(agent, record)
        if record.failure is None and isinstance(action, ObtainBlock):
            self.mined[action.source] += 1
        if record.failure is None:
            if isinstance(action, GoTo) and action.target_kind == "ref":
                agent.private.position = tuple(float(c) for c in self.public.refs[action.target].position)  # type: ignore[assignment]
            if not agent.queue and agent.queue_node is not None:
                self._complete(agent, agent.queue_node)
            return
        node_id = agent.serving
        agent.queue.clear()
        agent.queue_node = agent.serving = None
        code, message = record.failure.code, record.failure.message
        if code == "SOURCE_EXHAUSTED" and hasattr(action, "source"):
            agent.private.exhausted.add(str(action.source))  # learnt from a verified failure
        if node_id is None:
            return  # a helping hand failed: nothing of this agent's own to re-diagnose
        node = self.job.node(node_id)
        agent.private.remember(f"{node_id} failed {code}")
        if code == "SOURCE_EXHAUSTED":
            self._issue(agent, node, "missing_material", self._missing(agent, node))
        elif code == "NOT_HARVESTABLE" and hasattr(action, "block"):
            tools = sorted(self.game.blocks[str(action.block)].harvest_tools or ())
            self._issue(agent, node, "missing_material", {tools[0]: 1} if tools else {})
        elif code == "PATH_BLOCKED" and isinstance(action, GoTo):
            self._issue(agent, node, "path_blocked", {}, action.target)
        elif code == "STATION_BUSY":
            wait = record.failure.retry_after_s or WAIT_TICKS / 20
            self._issue(agent, node, "station_unavailable", {}, str(wait))
        elif code == "NO_SPACE" and hasattr(action, "container"):
            self._issue(agent, node, "container_full", {}, str(action.container))
        else:
            self._issue(agent, node, "missing_material", self._missing(agent, node) or {}, message)

    def _observe(self, agent: _Agent, record: ActionRecord) -> None:
        """Verified outcomes are the only writes to private state (and they correct any belief)."""
        for name, items in record.inventories.items():
            target = self.agents[name]
            target.private.inventory = dict(items)  # also corrects a promise taken as fact (no partition)
            for request in list(target.promised):
                if items.get(request.item, 0) >= request.baseline + request.quantity:
                    request.issue.fulfilled = True
                    target.promised.remove(request)

    def _complete(self, agent: _Agent, node_id: str) -> None:
        self.done.add(node_id)
        agent.queue_node = None
        agent.private.active = None
        agent.private.blocked = None
        agent.private.remember(f"{node_id} done")
        for key, issue in self.issues.items():
            if key[1] == node_id and issue.resolution is None:
                issue.resolution = "escalated" if issue.fulfilled else "local"

    # ----------------------------------------------------------------- issues
    def _issue(self, agent: _Agent, node: Node, kind: str, needs: dict[str, int], detail: str | None = None) -> None:
        key = (agent.name, node.id, kind)
        issue = self.issues.get(key)
        if issue is None:
            options = None if self.rollout else counterfactual_outcomes(self, agent.name, node, kind, needs, detail)
            issue = IssueRecord(
                len(self.issues) + 1,
                agent.name,
                kind,
                node.id,
                dict(needs),
                self.round,
                self._shared_planner_label(agent, node, kind, needs),
                options,
                None if options is None else needed_escalation(options),
            )
            self.issues[key] = issue
        agent.private.blocked = kind
        local = self._local_fix(agent, node, kind, needs, detail)
        forced = self.forced.get(key)
        if forced is not None:
            self._take(agent, issue, node, kind, needs, local, forced)
            return
        features = self._features(agent, node, kind, needs, local)
        if self.round < agent.cooldown_until:
            decision, tier, value = Decision.LOCAL, "cooldown", None
        else:
            verdict = decide(self.condition, features, self.config, self.adjudicator)
            decision, tier, value = verdict.decision, verdict.tier.value, verdict.score
        issue.decisions.append(
            {"round": self.round, "decision": decision.value, "tier": tier, "score": value, **asdict(features)}
        )
        if decision is Decision.ESCALATE and self._escalate(agent, issue, node, kind, needs):
            return
        self._stay_local(agent, issue, node, local)

    def _stay_local(self, agent: _Agent, issue: IssueRecord, node: Node, local: list[Action] | None) -> None:
        """LOCAL: recover by the known route, or skip a node the goal does not need when there is none."""
        if local is not None:
            agent.queue = deque(local)
            agent.queue_node = None
            agent.serving = node.id
        elif not node.critical:
            self._skip(agent, issue, node)

    def _skip(self, agent: _Agent, issue: IssueRecord, node: Node) -> None:
        agent.skipped.add(node.id)
        issue.resolution = "skipped"
        agent.private.remember(f"{node.id} skipped")

    def _take(
        self,
        agent: _Agent,
        issue: IssueRecord,
        node: Node,
        kind: str,
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
        if option.startswith(ESCALATE_TO) and self._escalate(agent, issue, node, kind, needs, helper):
            return
        self._stay_local(agent, issue, node, local)

    def _shared_planner_label(self, agent: _Agent, node: Node, kind: str, needs: dict[str, int]) -> bool:
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
        required = self._required(agent.private.inventory, needs)
        plan = plan_recovery(required, truth, agent.private.inventory, self.game, self.physics)
        return plan is not None and plan.cost <= max(1, self.instance.budget - self.round)

    def _local_fix(
        self, agent: _Agent, node: Node, kind: str, needs: dict[str, int], detail: str | None
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
        required = self._required(agent.private.inventory, needs)
        plan = plan_recovery(required, self._belief(agent), agent.private.inventory, self.game, self.physics)
        if plan is None or not plan.tasks:
            return None
        world = self._belief(agent).world(agent.private.inventory)
        return self._with_detours(agent, [a for task in plan.tasks for a in compile_task(task, world, self.game)])

    def _features(
        self, agent: _Agent, node: Node, kind: str, needs: dict[str, int], local: list[Action] | None
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
            offers = [
                self.instance.board.get(peer, {}).get(item, 0)
                for peer in self.job.agents
                if peer != agent.name and item is not None
            ]
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

    def _wanted(self, node: Node, needs: dict[str, int]) -> tuple[str | None, int]:
        if needs:
            wanted = max(needs, key=lambda i: needs[i])
            return wanted, needs[wanted]
        item, quantity = node.task.get("item"), node.task.get("q")
        return (item, quantity) if isinstance(item, str) and isinstance(quantity, int) else (None, 0)

    # ----------------------------------------------------------------- the public channel
    def _helper(self, agent: _Agent, item: str, quantity: int, kind: str, node: Node) -> str | None:
        peers = [p for p in self.job.agents if p != agent.name]
        if kind == "dependency_block":
            blocker = next((d for d in node.deps if d not in self.done), None)
            return None if blocker is None else self.job.node(blocker).agent
        offers = sorted(peers, key=lambda p: (-self.instance.board.get(p, {}).get(item, 0), p))
        tried = agent.private.refused_by.get(item, set())
        untried = [p for p in offers if p not in tried]
        if untried and (
            self.instance.board.get(untried[0], {}).get(item, 0) > 0
            or self.condition is GateCondition.COMMUNICATION_FIRST
        ):
            return untried[0]
        return None

    def _escalate(
        self, agent: _Agent, issue: IssueRecord, node: Node, kind: str, needs: dict[str, int], helper: str | None = None
    ) -> bool:
        """Ask a helper (the gate's choice, or ``helper``); False when there is nobody (left) to ask."""
        item, quantity = self._wanted(node, needs)
        if item is None or quantity <= 0:
            return False
        if helper is None:
            helper = self._helper(agent, item, quantity, kind, node)
        elif helper in agent.private.refused_by.get(item, set()):
            return False
        if helper is None:
            return False
        body = f"SELF -\nREQ {helper} resource.deliver(q={quantity},item={item},to={agent.name})"
        check_proposal(self.prior.parse(body), agent.name, self.prior, self.public)  # our own message, checked like any
        self._send(WireMessage(agent.name, helper, "REQUEST_MATERIAL", body))
        baseline = agent.private.inventory.get(item, 0)
        agent.waiting = _Request(issue, agent.name, helper, item, quantity, self.round + self.config.window, baseline)
        issue.escalated = True
        agent.private.remember(f"request {item} sent to {helper}")
        return True

    def _send(self, message: WireMessage) -> None:
        self.messages.append(message)
        recipient = self.agents[message.recipient]
        recipient.inbox.append(message)
        recipient.context.append(message.payload)
        if not self.partitioned:  # every agent carries (and reads) all public traffic
            for other in self.agents.values():
                if other.name not in (message.sender, message.recipient):
                    other.inbox.append(message)
                    other.context.append(message.payload)

    def _read(self, agent: _Agent, message: WireMessage) -> None:
        if message.recipient != agent.name:
            if message.kind != "ACK":  # without the partition, bystanders confirm what they read
                self.messages.append(WireMessage(agent.name, message.sender, "ACK", f"ACK {message.kind}"))
            return
        if message.kind == "REQUEST_MATERIAL":
            self._answer(agent, message)
            return
        request = self.agents[message.recipient].waiting
        if request is not None and request.helper == message.sender:
            request.answer = message.kind
            if message.kind == "ACCEPT" and not self.partitioned:  # a promise written into private state as fact
                held = agent.private.inventory
                held[request.item] = held.get(request.item, 0) + request.quantity

    def _answer(self, agent: _Agent, message: WireMessage) -> None:
        proposal = self.prior.parse(message.payload)
        request = proposal.request
        assert request is not None and request.plan
        task = request.plan[0]
        item, quantity, to = str(task.get("item")), int(task.get("q") or 0), str(task.get("to"))
        pending_delivery = any(
            n.agent == agent.name and n.id not in self.done and n.task.get("to") == to and n.task.get("item") == item
            for n in self.job.nodes
        )
        own_needs: Counter[str] = Counter()
        incoming = 0
        for node in self.job.nodes:
            if node.id in self.done | agent.skipped:
                continue
            if node.agent == agent.name:
                own_needs.update(node_needs(node.task, self.game))
            elif node.task.get("to") == agent.name and node.task.get("item") == item:
                incoming += int(node.task.get("q") or 0)  # a peer's planned delivery to this agent
        spare = agent.private.inventory.get(item, 0) + incoming - own_needs[item]
        if pending_delivery:
            answer = Response("ACCEPT", "ALREADY_PLANNED")
        elif spare >= quantity:
            answer = Response("ACCEPT", "CAN_SUPPLY")
            agent.queue = deque(
                [GoTo(agent.name, "help", to, "agent"), GiveItem(agent.name, "help", to, item, quantity)]
            )
            agent.queue_node = None  # an interrupted node starts over later
        else:
            answer = Response("REJECT", "CANNOT_SUPPLY")
        kind = "ACCEPT" if answer.decision == "ACCEPT" else "CANNOT_SUPPLY"
        self._send(WireMessage(agent.name, message.sender, kind, answer.serialize()))

    def _truly_held(self, agent: str, item: str) -> int:
        return self.executor.snapshot().inventories.get(agent, {}).get(item, 0)

    def _settle(self, agent: _Agent) -> bool:
        """Whether the agent is free to act this round; settles its open request if it can."""
        request = agent.waiting
        assert request is not None
        arrived = agent.private.inventory.get(request.item, 0) - request.baseline >= request.quantity
        failed = request.answer == "CANNOT_SUPPLY" or (self.round > request.deadline and not arrived)
        if arrived:
            # what the requester believes; without the partition a promise may only look delivered
            truly = (
                self.partitioned or self._truly_held(agent.name, request.item) >= request.baseline + request.quantity
            )
            request.issue.fulfilled = truly
            if not truly:
                request.issue.promise_taken_as_fact = True
                agent.promised.append(request)  # fulfilled only once the world shows the items
            agent.private.remember(f"request {request.item} fulfilled by {request.helper}")
        elif failed:
            agent.private.failed_requests[request.item] += 1
            agent.private.refused_by.setdefault(request.item, set()).add(request.helper)
            agent.private.remember(f"request {request.item} refused by {request.helper}")
            agent.cooldown_until = self.round + self.config.cooldown
        else:
            return False  # still waiting: this round is spent
        agent.waiting = None
        return True


def run_gate_episode(
    instance: GateInstance,
    condition: GateCondition,
    *,
    config: GateConfig | None = None,
    adjudicator: Adjudicator | None = None,
    executor: Executor | None = None,
    prior: Prior | None = None,
) -> GateResult:
    prior = prior or default_prior()
    config = config or default_gate_config()
    episode = _Episode(
        instance,
        condition,
        config,
        adjudicator or LogisticAdjudicator(config),
        executor or SimExecutor(prior.game),
        prior,
    )
    return episode.run()
