"""A gated episode's state: each agent's private view, the world, and the task graph's progress.

Private state changes only from executor records (what the world verified). Everything
here is shared by the round loop, the issue desk and the channel built on top of it.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gencoord.backends.base import Backend
from gencoord.backends.peer import RulePeer
from gencoord.errors import MaterializationError, WorldError
from gencoord.gate.config import GateConfig
from gencoord.gate.exchange import Committed, Escalation, spare_of
from gencoord.gate.needs import node_needs
from gencoord.gate.policy import Adjudicator, GateCondition
from gencoord.gate.recovery import Belief, plan_recovery
from gencoord.gate.state import IssueRecord, PrivateState
from gencoord.gate.suite import Away, BadDelivery, GateInstance
from gencoord.gate.task_graphs import Node
from gencoord.prior.prior import Prior
from gencoord.protocol.plan import PlannedTask
from gencoord.protocol.wire import WireMessage
from gencoord.reasons import Reason
from gencoord.runtime.compile import compile_task
from gencoord.runtime.materialize import place_of
from gencoord.runtime.thinking import THINKING_TASK, Thinking, ticks
from gencoord.runtime.verify import unmet
from gencoord.worlds.actions import Action, GiveItem, GoTo, ObtainBlock, Program, Wait
from gencoord.worlds.changes import Changeable
from gencoord.worlds.executor import ActionRecord, Executor
from gencoord.worlds.sim.physics import default_physics

WAIT_TICKS = 100


@dataclass
class AgentState:
    name: str
    private: PrivateState
    delay: int  # rounds this agent is still busy elsewhere
    queue: deque[Action] = field(default_factory=deque)
    queue_node: str | None = None  # the node the queue completes (None: a recovery)
    serving: str | None = None  # the node the queue is for, completed or recovered
    inbox: deque[WireMessage] = field(default_factory=deque)
    context: list[str] = field(default_factory=list)  # public messages this agent carries
    waiting: Escalation | None = None  # the exchange this agent opened and waits on
    owed: deque[tuple[Committed, int]] = field(default_factory=deque)  # its actions in resolved commitments
    cooldown_until: int = 0
    waited_since: dict[str, int] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)


class EpisodeState:
    def __init__(
        self,
        instance: GateInstance,
        condition: GateCondition,
        config: GateConfig,
        adjudicator: Adjudicator,
        executor: Executor,
        prior: Prior,
        thinking: Thinking | None = None,
        helper: Backend | None = None,
    ) -> None:
        self.instance = instance
        self.thinking = thinking or Thinking()
        self.helper = helper or RulePeer(prior)  # who answers an escalation for each helper
        self.helper_calls = 0  # model calls helpers made
        self.thinking_s = 0.0  # world time agents spent writing messages
        self.job = instance.job
        self.condition = condition
        self.partitioned = condition is not GateCondition.FULL_NO_PARTITION
        self.config = config
        self.adjudicator = adjudicator
        self.executor = executor
        self.prior = prior
        self.game = prior.game
        self.physics = default_physics()
        self.public = instance.public or prior.episode(None, self.job.agents)
        if any(not isinstance(d.event, Away | BadDelivery) for d in instance.disruptions) and not isinstance(
            executor, Changeable
        ):
            raise WorldError(
                Reason.UNSUPPORTED_WORLD,
                f"the {executor.name} world cannot change mid-run (sources, routes, stations, items)",
            )
        start = executor.reset(instance.world)
        self.agents = {
            spec.name: AgentState(
                spec.name,
                PrivateState(
                    dict(start.inventories[spec.name]), spec.position, history=deque(maxlen=config.max_history)
                ),
                instance.delays.get(spec.name, 0),
            )
            for spec in instance.world.agents
        }
        self.done: set[str] = set()
        self.completed_at: dict[str, int] = {}  # node → the round it completed
        self.mined: Counter[str] = Counter()  # blocks taken per resource area (for the old label)
        self.issues: dict[tuple[str, str, str], IssueRecord] = {}
        self.messages: list[WireMessage] = []
        self.round = 0
        self.largest_context = 0
        self.steps = 0  # executor actions taken (all agents)
        self.completion_steps: int | None = None  # executor actions until the goal's nodes were all done
        # an oracle rollout: each listed issue gets the forced option; no rollout labels its own issues
        self.forced: dict[tuple[str, str, str], str] = {}
        self.rollout = False
        self.tampered: dict[str, BadDelivery] = {}  # giver → how its next hand-over goes wrong

    def disturb(self) -> None:
        """This round's mid-run anomalies strike before anyone steps."""
        for disruption in self.instance.disruptions:
            if disruption.round != self.round:
                continue
            event = disruption.event
            if isinstance(event, Away):
                self.agents[event.agent].delay += event.rounds
            elif isinstance(event, BadDelivery):
                self.tampered[event.giver] = event
            else:
                assert isinstance(self.executor, Changeable)  # checked when the episode was set up
                self.executor.change(event)

    def shared(self) -> tuple[object, ...]:
        """What an oracle rollout shares with this episode instead of copying: nothing of it changes."""
        shared = (self.prior, self.game, self.physics, self.config, self.adjudicator, self.instance, self.public)
        return (*shared, self.helper)

    def goal_reached(self) -> bool:
        return not unmet(self.job.goal, self.executor.snapshot())

    def finished(self) -> bool:
        finished = all(node.id in self.done for node in self.job.nodes if node.critical)
        if finished and self.completion_steps is None:
            self.completion_steps = self.steps
        return finished

    def measure(self, agent: AgentState) -> None:
        size = agent.private.size() + sum(len(m) for m in agent.context)
        self.largest_context = max(self.largest_context, size)

    # ----------------------------------------------------------------- nodes
    def ready(self, node: Node) -> bool:
        return all(dep in self.done for dep in node.deps)

    def pending(self, agent: AgentState) -> list[Node]:
        return [n for n in self.job.nodes if n.agent == agent.name and n.id not in self.done | agent.skipped]

    def requirement(self, node: Node) -> dict[str, int]:
        """What the actor must hold: a gathering node's yield, or what any other node consumes."""
        item, quantity = node.task.get("item"), node.task.get("q")
        if node.task.skill == "resource.obtain" and isinstance(item, str) and isinstance(quantity, int):
            return {item: quantity}
        return node_needs(node.task, self.game)

    def missing(self, agent: AgentState, node: Node) -> dict[str, int]:
        held = agent.private.inventory
        return {item: n - held.get(item, 0) for item, n in self.requirement(node).items() if held.get(item, 0) < n}

    def belief(self, agent: AgentState) -> Belief:
        private = agent.private
        refs = self.public.refs
        return Belief(agent.name, private.position, refs, frozenset(private.exhausted), frozenset(private.blocked_refs))

    def offers(self, agent: AgentState) -> dict[str, dict[str, int]]:
        """What the agent believes each peer could hand it: the public board, and, for a delivery to
        it that completed, the supplier's quantity (a short or wrong hand-over leaves the items with it)."""
        found = {peer: dict(self.instance.board.get(peer, {})) for peer in self.job.agents if peer != agent.name}
        for node in self.job.nodes:
            item, count = node.task.get("item"), node.task.get("q")
            delivered = node.id in self.done and node.task.get("to") == agent.name and node.agent != agent.name
            if delivered and isinstance(item, str) and isinstance(count, int):
                found[node.agent][item] = max(found[node.agent].get(item, 0), count)
        return found

    def spare(self, agent: AgentState, pending: list[Node]) -> dict[str, int]:
        """What the agent can hand over now: its bag, less earlier promises still to run, and less what
        its own pending nodes need beyond what peers' planned deliveries will bring it."""
        own_needs: Counter[str] = Counter()
        for node in pending:
            own_needs.update(node_needs(node.task, self.game))
        incoming: Counter[str] = Counter()
        for node in self.job.nodes:
            count = node.task.get("q")
            if node.id not in self.done and node.task.get("to") == agent.name and isinstance(count, int):
                incoming[str(node.task.get("item"))] += count
        promised: Counter[str] = Counter()
        for committed, index in agent.owed:
            action = committed.program.actions[index]
            if isinstance(action, GiveItem) and committed.live(index):
                promised[action.item] += action.count
        return spare_of(agent.private.inventory, own_needs, incoming, promised)

    def with_detours(self, agent: AgentState, actions: Sequence[Action]) -> list[Action]:
        """The agent's own knowledge of blocked routes applies to every walk it takes."""
        return [
            GoTo(a.agent, a.task, a.target, a.target_kind, True)
            if isinstance(a, GoTo) and a.target in agent.private.blocked_refs
            else a
            for a in actions
        ]

    def start(self, agent: AgentState, node: Node) -> bool:
        """Queue the node's actions; False when the agent knows no way to carry it out."""
        belief = self.belief(agent)
        world = belief.world(agent.private.inventory)
        if node.task.skill == "resource.obtain":  # gather from a source the agent still believes in
            plan = plan_recovery(self.requirement(node), belief, agent.private.inventory, self.game, self.physics)
            if plan is None:
                return False
            actions = tuple(a for task in plan.tasks for a in compile_task(task, world, self.game))
        else:
            try:
                place = place_of(node.task, self.prior, self.public)
            except MaterializationError:
                return False  # a 3x3 recipe and no station to craft it at
            planned = PlannedTask(node.id, node.agent, node.task.skill, node.task.args, place, ())
            actions = compile_task(planned, world, self.game)
        agent.queue = deque(self.with_detours(agent, actions))
        agent.queue_node = agent.serving = node.id
        return True

    def interrupt(self, agent: AgentState) -> None:
        """Drop the agent's queued work; an interrupted node starts over later."""
        agent.queue.clear()
        agent.queue_node = agent.serving = None

    def complete(self, agent: AgentState, node_id: str) -> None:
        self.done.add(node_id)
        self.completed_at[node_id] = self.round
        agent.queue_node = None
        agent.private.active = None
        agent.private.blocked = None
        agent.private.remember(f"{node_id} done")

    # ----------------------------------------------------------------- the world
    def execute(self, agent: AgentState, action: Action) -> ActionRecord:
        """Run one action; its verified record is the only write to private state."""
        fault = self.tampered.pop(agent.name, None) if isinstance(action, GiveItem) else None
        if fault is not None and isinstance(action, GiveItem):  # what the giver's body really hands over
            action = replace(action, count=action.count - fault.short, item=fault.substitute or action.item)
        [record] = self.executor.run(Program((action,), ((),), ()), 0, 1)
        self.steps += 1
        for name, items in record.inventories.items():
            self.agents[name].private.inventory = dict(items)  # also corrects a promise taken as fact
        if record.failure is None and isinstance(action, ObtainBlock):
            self.mined[action.source] += 1
        if record.failure is None and isinstance(action, GoTo) and action.target_kind == "ref":
            agent.private.position = tuple(float(c) for c in self.public.refs[action.target].position)  # type: ignore[assignment]
        return record

    def think(self, agent: AgentState) -> None:
        """Writing a message: the writer stands still while it thinks and loses the action windows that spans.

        The gate's messages are written by rules, so only a configured latency (a rule standing in
        for a model) takes time; each window spent counts as a step, so completion steps count
        communication as well as action.
        """
        seconds = self.thinking.per_message_s
        if ticks(seconds) <= 0:
            return
        windows = math.ceil(seconds / self.config.action_window_s)
        self.execute(agent, Wait(agent.name, THINKING_TASK, ticks(seconds)))
        self.steps += windows - 1
        agent.delay += windows - 1
        self.thinking_s += seconds

    def truly_held(self, agent: str, item: str) -> int:
        return self.executor.snapshot().inventories.get(agent, {}).get(item, 0)
