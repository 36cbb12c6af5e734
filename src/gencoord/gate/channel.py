"""The public channel: escalations carried out as GenCoord exchanges (see ``gate/exchange.py``).

The only public messages are protocol objects: a ``PROPOSAL`` (a helper's projection of
the requester's n-party SELF+REQ, Short DSL) and a ``RESPONSE`` (ACCEPT/COUNTER/REJECT).
A refused or failed exchange raises the history penalty and starts a cooldown. Without
the partition every agent reads all traffic, and an ACCEPT is written into the
requester's private inventory as if it were verified: it then starts its own part of the
commitment without waiting for the hand-over.
"""

from __future__ import annotations

from collections import Counter

from gencoord.backends.peer import READY, READY_SEPARATOR
from gencoord.dsl.ast import Path, Task
from gencoord.dsl.serialize import format_path
from gencoord.errors import GencoordError, ParseError
from gencoord.gate.core import AgentState, EpisodeState
from gencoord.gate.exchange import (
    MAX_PROPOSALS,
    PROPOSAL,
    RESPONSE,
    Asks,
    Committed,
    Escalation,
    allocate,
    delivery,
    proposal_of,
)
from gencoord.gate.policy import GateCondition
from gencoord.gate.state import IssueRecord
from gencoord.gate.task_graphs import Node
from gencoord.prior.contract import check_proposal
from gencoord.prior.ledger import consumption
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.protocol.resolve import resolve_team
from gencoord.protocol.response import DECISIONS, Response, parse_response
from gencoord.protocol.wire import WireMessage
from gencoord.run.team_exchange import projected
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize, observable_effect
from gencoord.runtime.verify import observe_handoff, unmet
from gencoord.tasks.context import LocalContext


class Channel(EpisodeState):
    # ----------------------------------------------------------------- the requester
    def escalate(
        self, agent: AgentState, issue: IssueRecord, node: Node, kind: str, needs: dict[str, int], helper: str | None
    ) -> bool:
        """Open an exchange (the gate's choice of helpers, or exactly ``helper``); False when nobody can be asked."""
        blocker = next((d for d in node.deps if d not in self.done), None) if kind == "dependency_block" else None
        paths: dict[str, Path]
        subjects: dict[str, tuple[str, ...]]
        if blocker is not None and helper in (None, self.job.node(blocker).agent):
            owner = self.job.node(blocker).agent
            if owner in agent.private.refused_by.get(blocker, set()):
                return False
            paths, asks, subjects = {owner: (self.job.node(blocker).task,)}, {}, {owner: (blocker,)}
        else:
            asks = self._asks(agent, node, needs, helper, {})
            paths, subjects = self._deliveries(agent, asks), {h: tuple(items) for h, items in asks.items()}
        if not paths:
            return False
        proposal = proposal_of(self._self_path(node, needs, asks), paths)
        deadline = self.round + self.config.window
        escalation = Escalation(issue, node.id, dict(needs), deadline, helper, subjects, asks, paths, proposal)
        if not self._propose(agent, escalation):
            return False
        agent.waiting = escalation
        issue.escalated = True
        agent.private.remember(f"asked {', '.join(sorted(paths))} for {node.id}")
        return True

    def _asks(self, agent: AgentState, node: Node, needs: dict[str, int], helper: str | None, known: Asks) -> Asks:
        """Who to ask for what; never the peer the node itself hands items to (that would go round in a circle)."""
        recipient = node.task.get("to")
        peers = [helper] if helper is not None else [p for p in self.job.agents if p not in (agent.name, recipient)]
        believed = self.offers(agent)
        offers = {peer: {**believed.get(peer, {}), **known.get(peer, {})} for peer in peers}
        unadvertised = helper is not None or self.condition is GateCondition.COMMUNICATION_FIRST
        return allocate(needs, offers, peers, agent.private.refused_by, ask_unadvertised=unadvertised)

    def _deliveries(self, agent: AgentState, asks: Asks) -> dict[str, Path]:
        return {
            helper: tuple(delivery(self.prior, item, count, agent.name) for item, count in sorted(items.items()))
            for helper, items in asks.items()
        }

    def _self_path(self, node: Node, needs: dict[str, int], asks: Asks) -> Path:
        """The node the items are for, when the REQ lines cover all it lacks and the world can show it ran."""
        observable = observable_effect(node.task, node.agent, node.id, self.prior) is not None
        if node.task.skill == "resource.obtain" or not needs or not observable:
            return ()
        covered = Counter[str]()
        for items in asks.values():
            covered.update(items)
        return (node.task,) if all(covered[item] >= count for item, count in needs.items()) else ()

    def _propose(self, agent: AgentState, escalation: Escalation) -> bool:
        try:  # our own message, checked like any
            check_proposal(escalation.proposal, agent.name, self.prior, self.public)
        except GencoordError as error:
            escalation.issue.exchange_error = error.reason
            return False
        self.think(agent)  # one n-party proposal, projected for each helper
        for helper in escalation.paths:
            body = self.prior.serialize(projected(escalation.proposal, helper))
            self.send(WireMessage(agent.name, helper, PROPOSAL, body))
        return True

    def _revise(self, agent: AgentState, escalation: Escalation) -> bool:
        """COUNTER/REJECT: learn from the answers and propose again when someone is left to ask."""
        for helper, response in escalation.responses.items():
            fields = dict(response.extra)
            if (
                response.decision == "COUNTER"
                and "item" in fields
                and fields.get("have", "").isascii()
                and fields.get("have", "").isdigit()
            ):
                escalation.known.setdefault(helper, {})[fields["item"]] = int(fields["have"])
            elif response.decision == "REJECT":
                self._rule_out(agent, escalation, helper)
        if escalation.proposals >= MAX_PROPOSALS or not escalation.asks:
            return False
        asks = self._asks(agent, self.job.node(escalation.node), escalation.needs, escalation.forced, escalation.known)
        if not asks or asks == escalation.asks:
            return False
        escalation.asks, escalation.paths = asks, self._deliveries(agent, asks)
        escalation.subjects = {h: tuple(items) for h, items in asks.items()}
        node = self.job.node(escalation.node)
        escalation.proposal = proposal_of(self._self_path(node, escalation.needs, asks), escalation.paths)
        escalation.responses, escalation.proposals = {}, escalation.proposals + 1
        return self._propose(agent, escalation)

    def settle(self, agent: AgentState) -> bool:
        """Whether the requester is free again; moves its exchange on as far as it can."""
        escalation = agent.waiting
        assert escalation is not None
        committed = escalation.committed
        if committed is None:
            if self.round > escalation.deadline:
                return self._failed(agent, escalation, "no answer within the window")
            if not escalation.answered:
                return False
            refused = [r for r in escalation.responses.values() if r.decision != "ACCEPT"]
            if refused:
                if self._revise(agent, escalation):
                    return False
                return self._failed(agent, escalation, f"{refused[0].decision} {refused[0].reason or ''}".strip())
            error = self._commit(agent, escalation)
            if error is not None:
                return self._failed(agent, escalation, error)
            if not self.partitioned:  # the promise is believed: nothing left to wait for
                agent.waiting = None
                return True
            return False
        if committed.helpers_failed():
            return self._failed(agent, escalation, committed.failed or "a helper's part did not run")
        if committed.helpers_done():
            agent.private.remember(f"{escalation.node}: the commitment's hand-overs landed")
            agent.waiting = None
            return True
        if self.round > escalation.deadline:  # stop waiting; the commitment stays in force and may still land
            return self._failed(agent, escalation, "the window closed before the hand-overs landed")
        return False

    def _failed(self, agent: AgentState, escalation: Escalation, reason: str) -> bool:
        committed = escalation.committed
        if committed is None or committed.failed_by != agent.name:  # not its own action: the helpers failed it
            for helper in escalation.paths:
                self._rule_out(agent, escalation, helper)
        for item in escalation.needs or {escalation.node: 1}:
            agent.private.failed_requests[item] += 1
        agent.private.remember(f"{escalation.node}: exchange failed ({reason})")
        escalation.issue.exchange_error = escalation.issue.exchange_error or reason
        agent.cooldown_until = self.round + self.config.cooldown
        agent.waiting = None
        return True

    @staticmethod
    def _rule_out(agent: AgentState, escalation: Escalation, helper: str) -> None:
        for subject in escalation.subjects.get(helper, ()):
            agent.private.refused_by.setdefault(subject, set()).add(helper)

    def _commit(self, agent: AgentState, escalation: Escalation) -> str | None:
        """Resolve, materialize and compile the accepted proposal, and hand out its actions."""
        proposal = escalation.proposal
        holdings = {agent.name: dict(agent.private.inventory)}
        for request in proposal.peer_requests:  # what each helper vouched for by accepting
            vouched: Counter[str] = Counter()
            for task in request.plan:
                vouched.update(consumption(task, self.prior))
            holdings[request.target] = dict(vouched)
        try:
            commitment = resolve_team(proposal, agent.name, holdings, self.prior, self.public)
            plan = materialize(commitment, self.prior, self.public)
            program = compile_plan(plan, self.instance.world, self.game)
        except GencoordError as error:
            return error.reason
        ends = {}
        for planned in plan.tasks:
            last = max(i for i, action in enumerate(program.actions) if action.task == planned.id)
            ends[last] = Task(planned.skill, planned.args)
        trusted = frozenset(
            i for i, action in enumerate(program.actions) if action.agent == agent.name and not self.partitioned
        )
        checks = dict(zip(program.handoffs, plan.handoffs, strict=True))
        committed = Committed(escalation.issue, agent.name, plan, program, ends, checks, trusted)
        escalation.committed = committed
        escalation.issue.commitment = self.prior.serialize(proposal)
        for index, action in enumerate(program.actions):
            actor = self.agents[action.agent]
            if actor.name != agent.name and not any(c is committed for c, _ in actor.owed):
                self.interrupt(actor)
            actor.owed.append((committed, index))
        if not self.partitioned:  # a promise written into private state as fact
            held = agent.private.inventory
            for items in escalation.asks.values():
                for item, count in items.items():
                    held[item] = held.get(item, 0) + count
            escalation.issue.promise_taken_as_fact = True
        self._close(committed)
        return None

    # ----------------------------------------------------------------- carrying a commitment out
    def run_owed(self, agent: AgentState) -> bool:
        """Take the agent's next committed action if its predecessors ran; False when it owes nothing."""
        while agent.owed and not agent.owed[0][0].live(agent.owed[0][1]):
            agent.owed.popleft()  # stopped with what it depended on
        if not agent.owed:
            return False
        committed, index = agent.owed[0]
        if committed.waits(index):
            return True  # waiting on a peer's part of the commitment: this round is spent
        agent.owed.popleft()
        [action] = self.with_detours(agent, [committed.program.actions[index]])
        check = committed.checks.get(index)
        before = self.executor.snapshot() if check is not None else None
        record = self.execute(agent, action)
        if record.failure is not None:
            committed.failed_by = committed.failed_by or agent.name
            committed.stop(index, f"{agent.name} {action.name}: {record.failure.code}")
        else:
            committed.done.add(index)
            seen = (
                None
                if check is None or before is None
                else observe_handoff(check, before.inventories, self.executor.snapshot().inventories)
            )
            if seen is not None:
                committed.observed.append(seen)
                if not seen.verified:
                    committed.stop(index, f"hand-over not verified: {seen.describe()}")
            task = committed.ends.get(index)
            if task is not None and index in committed.done and (seen is None or seen.verified):
                self._discharge(agent, task)
        if committed.failed is not None or committed.finished:
            self._close(committed)
        return True

    def _discharge(self, agent: AgentState, task: Task) -> None:
        """A committed task that is one of the agent's own nodes completes that node."""
        node = next((n for n in self.pending(agent) if n.task == task), None)
        if node is not None:
            self.complete(agent, node.id)

    def _close(self, committed: Committed) -> None:
        """Record the commitment's stages as they stand (again whenever it changes)."""
        terminal = not unmet(committed.plan.terminal, self.executor.snapshot())
        committed.issue.stages = committed.stages(terminal)
        committed.issue.cancelled_actions = len(committed.cancelled)
        committed.issue.fulfilled = committed.helpers_done()

    # ----------------------------------------------------------------- every agent
    def send(self, message: WireMessage) -> None:
        self.messages.append(message)
        readers = [self.agents[message.recipient]]
        if not self.partitioned:  # every agent carries (and reads) all public traffic
            readers += [a for a in self.agents.values() if a.name not in (message.sender, message.recipient)]
        for reader in readers:
            reader.inbox.append(message)
            reader.context.append(message.payload)

    def read(self, agent: AgentState, message: WireMessage) -> None:
        if message.recipient != agent.name:
            return  # without the partition: read, and nothing to do with it
        if message.kind == PROPOSAL:
            self._answer(agent, message)
            return
        waiting = agent.waiting
        if waiting is not None and message.sender in waiting.paths:
            waiting.responses[message.sender] = heard(message.payload)

    def _answer(self, agent: AgentState, message: WireMessage) -> None:
        """The helper's backend answers from what it can spare and the nodes it could start now."""
        pending = self.pending(agent)
        spare = {item: count for item, count in self.spare(agent, pending).items() if count > 0}
        ready = [n.task for n in pending if self.ready(n) and not self.missing(agent, n)]
        private = {READY: READY_SEPARATOR.join(format_path((task,)) for task in ready)} if ready else {}
        context = LocalContext(agent.name, "helper", message.sender, None, (), {}, spare, self.public.refs, private)
        request = GenerationRequest(agent.name, Stage.GATE_HELP, message.sender, delivered_request=message.payload)
        reply = self.helper.generate(context, request)
        self.helper_calls += reply.model_calls
        self.think(agent)
        self.send(WireMessage(agent.name, message.sender, RESPONSE, reply.text))


def heard(payload: str) -> Response:
    """A helper's answer as the requester reads it; a line it cannot read is a refusal with the reader's code.

    A helper is any backend, so its line is untrusted: a decision outside the three, or a
    COUNTER without ``item`` and a count, refuses the request (and the requester's fallback
    takes over) instead of stopping the episode.
    """
    try:
        response = parse_response(payload)
    except ParseError as error:
        return Response("REJECT", error.reason)
    fields = dict(response.extra)
    if response.decision not in DECISIONS:
        return Response("REJECT", "UNKNOWN_DECISION")
    if response.decision == "COUNTER" and not (fields.get("item") and fields.get("have", "").isdecimal()):
        return Response("REJECT", "MALFORMED_RESPONSE")
    return response
