"""An escalation as a GenCoord exchange: who is asked for what, and the state of its commitment.

The requester writes one n-party SELF+REQ: a REQ line per helper it needs, each a PATH
(a delivery of items to the requester, or the blocking node itself), and as SELF the
node the items are for when the REQ lines cover all it lacks (``SELF -`` otherwise).
Each helper receives its projection and answers ACCEPT, COUNTER (``item``/``have``: it
can spare less) or REJECT, as in Alg. S2. Once every helper accepts, the commitment is
resolved, materialized and compiled, and its actions join the agents' queues, each
starting only when its predecessors in the commitment's DAG have run (the receiver's
consuming task after the hand-over is verified, H). A failed action or an unverified
hand-over stops its dependants (cancelled, and counted in the record); work that does not
depend on it goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.gate.state import IssueRecord
from gencoord.prior.prior import Prior
from gencoord.protocol.plan import DispatchPlan, HandoffCheck
from gencoord.protocol.response import Response
from gencoord.runtime.verify import HandoffObservation
from gencoord.worlds.actions import Program

PROPOSAL = "PROPOSAL"
RESPONSE = "RESPONSE"
MAX_PROPOSALS = 3
"""Proposals a requester may make in one exchange (the first and two revisions)."""

Asks = dict[str, dict[str, int]]
"""Helper → item → count: the deliveries a proposal asks for."""


@dataclass
class Committed:
    """A resolved commitment being carried out, action by action, by the agents it names.

    A failed action, or a hand-over that did not land, stops its dependants (later
    actions of the same agent, and whatever waits on them); work that does not depend on
    it goes on. A requester that stops waiting (its window closed) leaves the commitment in
    force: what its helpers still hand over counts when it lands.
    """

    issue: IssueRecord
    requester: str
    plan: DispatchPlan
    program: Program
    ends: Mapping[int, Task]  # action index → the committed task it completes
    checks: Mapping[int, HandoffCheck]  # action index → the hand-over it carries
    trusted: frozenset[int]  # no partition: the requester's actions that start without waiting on peers
    done: set[int] = field(default_factory=set)
    broken: set[int] = field(default_factory=set)  # actions that failed, or hand-overs that did not land
    cancelled: set[int] = field(default_factory=set)
    observed: list[HandoffObservation] = field(default_factory=list)
    failed: str | None = None  # the first failure, in words
    failed_by: str | None = None  # the agent whose action failed first (None: a hand-over or the window)

    def waits(self, index: int) -> bool:
        deps = () if index in self.trusted else self.program.deps[index]
        return not all(dep in self.done for dep in deps)

    def live(self, index: int) -> bool:
        return index not in self.broken and index not in self.cancelled

    def stop(self, index: int, reason: str) -> None:
        """``index`` failed: it and everything that depends on it will not run."""
        self.failed = self.failed or reason
        self.broken.add(index)
        stopped, agents = {index}, {self.program.actions[index].agent}
        for later in range(index + 1, len(self.program.actions)):
            action = self.program.actions[later]
            waits = () if later in self.trusted else self.program.deps[later]
            if action.agent in agents or any(dep in stopped for dep in waits):
                stopped.add(later)
                agents.add(action.agent)
        self.cancelled |= stopped - self.done - self.broken

    @property
    def finished(self) -> bool:
        return len(self.done | self.broken | self.cancelled) == len(self.program.actions)

    def _theirs(self) -> list[int]:
        return [i for i, action in enumerate(self.program.actions) if action.agent != self.requester]

    def helpers_done(self) -> bool:
        """Every action asked of a peer ran, and every hand-over landed."""
        return all(i in self.done for i in self._theirs()) and all(seen.verified for seen in self.observed)

    def helpers_failed(self) -> bool:
        return any(not self.live(i) for i in self._theirs()) or any(not seen.verified for seen in self.observed)

    def stages(self, terminal: bool) -> dict[str, bool | None]:
        """C/H/T/F of this commitment so far (None: not reached)."""
        handoff: bool | None = None
        if self.checks and len(self.observed) == len(self.checks):
            handoff = all(seen.verified for seen in self.observed)
        elif any(not seen.verified for seen in self.observed) or any(not self.live(i) for i in self.checks):
            handoff = False
        whole = len(self.done) == len(self.program.actions)
        return {
            "C": True,
            "H": handoff,
            "T": terminal if self.finished else None,
            "F": whole and handoff is not False and terminal,
        }


@dataclass
class Escalation:
    """One open exchange: the issue it serves, what is asked of whom, the answers, the commitment."""

    issue: IssueRecord
    node: str
    needs: dict[str, int]
    deadline: int
    forced: str | None  # an oracle rollout asks exactly this helper
    subjects: dict[str, tuple[str, ...]]  # helper → what a refusal rules it out for (items, or the blocking node)
    asks: Asks
    paths: dict[str, Path]  # helper → its REQ path
    proposal: Proposal
    responses: dict[str, Response] = field(default_factory=dict)
    proposals: int = 1
    known: Asks = field(default_factory=dict)  # what counters said each helper can spare
    committed: Committed | None = None

    @property
    def answered(self) -> bool:
        return all(helper in self.responses for helper in self.paths)


def delivery(prior: Prior, item: str, count: int, to: str) -> Task:
    return Task(
        "resource.deliver", prior.vocab.canonical_args("resource.deliver", {"q": count, "item": item, "to": to})
    )


def proposal_of(self_path: Path, paths: Mapping[str, Path]) -> Proposal:
    return Proposal(self_path, tuple(PeerRequest(helper, path) for helper, path in sorted(paths.items()) if path))


def allocate(
    needs: Mapping[str, int],
    offers: Mapping[str, Mapping[str, int]],
    peers: list[str],
    refused: Mapping[str, set[str]],
    *,
    ask_unadvertised: bool,
) -> Asks:
    """Split each needed item over the peers offering it, largest offer first (fewest helpers).

    What no offer covers is asked of the best remaining candidate when ``ask_unadvertised``
    (communication-first, or a forced helper), else of the largest offer already asked.
    An item nobody may be asked for is left out.
    """
    asks: Asks = {}
    for item, count in sorted(needs.items(), key=lambda pair: (-pair[1], pair[0])):
        candidates = [p for p in peers if p not in refused.get(item, set())]
        ranked = sorted(candidates, key=lambda p: (-offers.get(p, {}).get(item, 0), p))
        left = count
        chosen: list[str] = []
        for peer in ranked:
            offer = offers.get(peer, {}).get(item, 0)
            if offer <= 0 or left <= 0:
                break
            take = min(offer, left)
            asks.setdefault(peer, {})[item] = take
            chosen.append(peer)
            left -= take
        if left > 0 and ranked and (chosen or ask_unadvertised):
            extra = chosen[0] if chosen else ranked[0]
            asks.setdefault(extra, {})[item] = asks.get(extra, {}).get(item, 0) + left
    return asks


def spare_of(
    held: Mapping[str, int], own_needs: Mapping[str, int], incoming: Mapping[str, int], promised: Mapping[str, int]
) -> dict[str, int]:
    """What an agent can hand over now: held less earlier promises, and less what its own work
    still needs beyond what peers will bring it."""
    return {
        item: min(count, count + incoming.get(item, 0) - own_needs.get(item, 0)) - promised.get(item, 0)
        for item, count in held.items()
    }
