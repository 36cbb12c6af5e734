"""Resolve→ and Resolve← (paper S1.1): from proposals to one resolved commitment.

Both directions share the same closing steps: identify the selected branch, check
that the handoff fields agree (HandoffCompatible), and merge role-local orders, the
cross-agent handoff edge and the prior's public predecessors into one acyclic graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from graphlib import CycleError, TopologicalSorter
from typing import Literal, TypeVar

from gencoord.dsl.ast import Path, Proposal
from gencoord.dsl.serialize import format_task, normalize_path
from gencoord.errors import ResolutionError
from gencoord.prior.branches import branch_index, realize_alternative
from gencoord.prior.ledger import consumption, production
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.commitment import Commitment, Handoff, RolePath, TaskRef, task_id
from gencoord.protocol.response import Response
from gencoord.reasons import Reason


def _actorize(agent: str, path: Path, prior: Prior) -> RolePath:
    return RolePath(agent, normalize_path(path, prior.vocab))


Holdings = Mapping[str, Mapping[str, int]]
Node = TypeVar("Node", str, TaskRef)
"""What each agent is known to hold when the commitment starts (agent → item → count)."""


def handoff_compatible(paths: tuple[RolePath, ...], prior: Prior) -> Handoff:
    """HandoffCompatible (the paper's pair): exactly one handoff whose item and count the receiver's path uses."""
    found = [(path.agent, index) for path in paths for index, task in enumerate(path.tasks) if task.has("to")]
    if not found:
        raise ResolutionError(Reason.NO_HANDOFF, "the commitment has no handoff (no task delivers to the peer)")
    if len(found) > 1:
        listed = ", ".join(task_id(ref) for ref in found)
        raise ResolutionError(Reason.MULTIPLE_HANDOFFS, f"expected one handoff, found {len(found)}: {listed}")
    (handoff,) = handoffs_of(paths, prior, {}, consumed=True)
    return handoff


def handoffs_of(
    paths: tuple[RolePath, ...], prior: Prior, holdings: Holdings, *, consumed: bool = False
) -> tuple[Handoff, ...]:
    """Every hand-over of the paths, each checked against its receiver's item ledger.

    The receiver's ledger starts from what it is known to hold (``holdings``), adds every
    hand-over of the item to it, and must never go below zero along its path. With
    ``consumed`` (the paper's rule) every hand-over must feed a task of the receiver;
    otherwise a hand-over nobody consumes delivers the goal itself and is a terminal effect.
    """
    agents = {path.agent: path for path in paths}
    found = [(path.agent, index, task) for path in paths for index, task in enumerate(path.tasks) if task.has("to")]
    delivered: dict[tuple[str, str], int] = {}
    for giver, _, task in found:
        receiver = str(task.get("to"))
        if receiver not in agents and consumed:
            raise ResolutionError(
                Reason.HANDOFF_TARGET, f"{giver} hands {task.get('item')} to {receiver}, who has no path here"
            )
        quantity = task.get("q")
        assert isinstance(quantity, int)  # the contract check guarantees a positive integer
        key = (receiver, str(task.get("item")))
        delivered[key] = delivered.get(key, 0) + quantity
    handoffs: list[Handoff] = []
    for giver, index, task in found:
        receiver, item, quantity = str(task.get("to")), str(task.get("item")), task.get("q")
        assert isinstance(quantity, int)
        receiving = agents.get(receiver)
        givers = {other for other, _, given in found if given.get("to") == receiver}
        consumer = None if receiving is None else _consumer(receiving, givers, item, prior)
        if consumer is None and consumed:
            raise ResolutionError(
                Reason.HANDOFF_NOT_CONSUMED,
                f"{giver} hands over {quantity} {item}, but {receiver}'s path never uses {item}",
            )
        if receiving is not None:
            start = holdings.get(receiver, {}).get(item, 0)
            lowest = _lowest_balance(receiving, item, prior)
            available = start + delivered[(receiver, item)]
            if -lowest > available:
                held = f" ({start} held)" if start else ""
                raise ResolutionError(
                    Reason.HANDOFF_QUANTITY,
                    f"{receiver}'s path needs {-lowest} {item}, but the handoffs deliver only "
                    f"{delivered[(receiver, item)]}{held}",
                )
        producer = (giver, index)
        handoffs.append(
            Handoff(giver, receiver, item, quantity, producer, None if consumer is None else (receiver, consumer))
        )
    return tuple(handoffs)


def _consumer(receiving: RolePath, givers: set[str], item: str, prior: Prior) -> int | None:
    """The receiver's first task that uses ``item``; a task naming a source that gives nothing is refused."""
    first = None
    for position, step in enumerate(receiving.tasks):
        source = step.get("from")
        if source is not None and source not in givers:
            giving = ", ".join(sorted(givers))
            raise ResolutionError(
                Reason.HANDOFF_SOURCE,
                f"{task_id((receiving.agent, position))} expects items from {source}, but {giving} gives",
            )
        if first is None and consumption(step, prior).get(item, 0):
            first = position
    return first


def _lowest_balance(path: RolePath, item: str, prior: Prior) -> int:
    """The lowest running balance of ``item`` along ``path``, counted from zero."""
    balance, lowest = 0, 0
    for step in path.tasks:
        balance -= consumption(step, prior).get(item, 0)
        lowest = min(lowest, balance)
        balance += production(step, prior).get(item, 0)
    return lowest


def check_ledgers(paths: tuple[RolePath, ...], handoffs: tuple[Handoff, ...], prior: Prior, holdings: Holdings) -> None:
    """Every agent's path runs on what it holds, makes, and receives; the first shortfall is named.

    Items received count from the start of the path: the merged DAG makes the consuming
    task wait for its hand-over, so only the amounts, not their timing, are checked here.
    """
    for path in paths:
        stock = dict(holdings.get(path.agent, {}))
        for handoff in handoffs:
            if handoff.receiver == path.agent:
                stock[handoff.item] = stock.get(handoff.item, 0) + handoff.quantity
        for position, step in enumerate(path.tasks):
            for item, used in consumption(step, prior).items():
                have = stock.get(item, 0)
                if have < used:
                    raise ResolutionError(
                        Reason.LEDGER_SHORT,
                        f"{task_id((path.agent, position))} ({step.skill}) uses {used} {item}, "
                        f"but {path.agent} would have {have}",
                    )
                stock[item] = have - used
            for item, made in production(step, prior).items():
                stock[item] = stock.get(item, 0) + made


def merge(
    paths: tuple[RolePath, ...], handoffs: tuple[Handoff, ...], prior: Prior
) -> tuple[tuple[tuple[TaskRef, TaskRef], ...], tuple[TaskRef, ...]]:
    """P_C: role-local orders + hand-over edges + public predecessors; fails on a cycle."""
    edges: list[tuple[TaskRef, TaskRef]] = []
    for path in paths:
        edges += [((path.agent, i - 1), (path.agent, i)) for i in range(1, len(path.tasks))]
    edges += [(handoff.producer, handoff.consumer) for handoff in handoffs if handoff.consumer is not None]
    refs = [(path.agent, i, task) for path in paths for i, task in enumerate(path.tasks)]
    for agent, index, task in refs:
        spec = prior.skills[task.skill]
        if not spec.after or spec.same is None:
            continue
        shared = task.get(spec.same)
        # across agents every such predecessor comes first; within one agent's path only the earlier
        # ones (an agent that cooks two batches at one furnace loads the second after collecting the first)
        edges += [
            ((other, j), (agent, index))
            for other, j, earlier in refs
            if earlier.skill in spec.after and earlier.get(spec.same) == shared and (other != agent or j < index)
        ]
    graph: dict[TaskRef, set[TaskRef]] = {(agent, i): set() for agent, i, _ in refs}
    for before, after in edges:
        graph[after].add(before)
    try:
        order = stable_order(graph)
    except CycleError as exc:
        cycle = " -> ".join(task_id(ref) for ref in exc.args[1])
        raise ResolutionError(Reason.CYCLE, f"the merged dependencies contain a cycle: {cycle}") from None
    return tuple(dict.fromkeys(edges)), order


def stable_order(graph: Mapping[Node, set[Node]]) -> tuple[Node, ...]:
    """A topological order that is the same in every process: ready nodes in sorted order.

    ``static_order`` walks sets of strings or string tuples, whose order changes with the
    interpreter's hash seed, so two workers could order (and so compile) one commitment
    differently. Raises ``graphlib.CycleError`` on a cycle.
    """
    sorter = TopologicalSorter(graph)
    sorter.prepare()
    order: list[Node] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order += ready
        sorter.done(*ready)
    return tuple(order)


def select_binding(paths: tuple[RolePath, ...], prior: Prior, episode: PublicEpisode) -> str | None:
    """The binding b of the commitment: its ``bind`` value, or the template branch it spells out."""
    first, second = paths
    binds = {str(task.get("bind")) for path in paths for task in path.tasks if task.has("bind")}
    if len(binds) > 1:
        raise ResolutionError(
            Reason.MULTIPLE_BRANCHES, f"the paths select several branches: {', '.join(sorted(binds))}"
        )
    matched = _in_template(
        branch_index(prior).bindings_of(first.tasks, second.tasks, first.agent, second.agent), prior, episode
    )
    binding = next(iter(binds)) if binds else (next(iter(matched)) if len(matched) == 1 else None)
    if binds and matched and binding not in matched:
        raise ResolutionError(
            Reason.BRANCH_MISMATCH, f"bind={binding} but the paths spell out {', '.join(sorted(matched))}"
        )
    if episode.template is not None and (
        binding is None or prior.codebook.get(binding) != episode.template or (binds and not matched)
    ):
        raise ResolutionError(
            Reason.NO_ADMISSIBLE_BRANCH, f"the paths realize no branch of template {episode.template}"
        )
    return binding


def _close(
    direction: Literal["forward", "feedback"], paths: tuple[RolePath, ...], prior: Prior, episode: PublicEpisode
) -> Commitment:
    handoff = handoff_compatible(paths, prior)
    binding = select_binding(paths, prior, episode)
    edges, order = merge(paths, (handoff,), prior)
    return Commitment(direction, paths, binding, (handoff,), edges, order)


def resolve_team(proposal: Proposal, lead: str, holdings: Holdings, prior: Prior, episode: PublicEpisode) -> Commitment:
    """Resolve an n-party SELF+REQ: the lead's SELF and one REQ path per peer, ledgers from ``holdings``.

    Any number of hand-overs, none included: a lead that can do the task alone commits
    its own path with ``REQ -``. Peers with no REQ line take no part.
    """
    paths = tuple(
        path
        for path in (
            _actorize(lead, proposal.self_plan, prior),
            *(_actorize(request.target, request.plan, prior) for request in proposal.peer_requests),
        )
        if path.tasks
    )
    if not paths:
        raise ResolutionError(Reason.EMPTY_COMMITMENT, "the commitment gives no agent a task")
    unknown = sorted({path.agent for path in paths} - set(episode.agents))
    if unknown:
        raise ResolutionError(Reason.UNKNOWN_AGENT, f"{', '.join(unknown)} is not an agent of this team")
    handoffs = handoffs_of(paths, prior, holdings)
    check_ledgers(paths, handoffs, prior, holdings)
    edges, order = merge(paths, handoffs, prior)
    return Commitment("forward", paths, None, handoffs, edges, order)


def resolve_forward(
    sender_proposal: Proposal,
    sender: str,
    receiver_proposal: Proposal,
    receiver: str,
    prior: Prior,
    episode: PublicEpisode,
) -> Commitment:
    """Resolve→(q_snd, q_rcv): the receiver's SELF must realize the delivered request exactly."""
    request = sender_proposal.request
    if request is None:
        raise ResolutionError(Reason.NO_REQUEST, "the sender's proposal carries no single peer request")
    if request.target != receiver:
        raise ResolutionError(Reason.RECEIVER_MISMATCH, f"the request is for {request.target}, but {receiver} answered")
    if not receiver_proposal.self_plan or receiver_proposal.peer_requests:
        raise ResolutionError(Reason.RECEIVER_SHAPE, "the receiver must answer with a non-empty SELF and 'REQ -'")
    requested = _actorize(receiver, request.plan, prior)
    realized = _actorize(receiver, receiver_proposal.self_plan, prior)
    if realized.tasks != requested.tasks:
        raise ResolutionError(Reason.REALIZATION_MISMATCH, _first_difference(requested.tasks, realized.tasks))
    paths = (_actorize(sender, sender_proposal.self_plan, prior), realized)
    return _close("forward", paths, prior, episode)


def resolve_feedback(
    initial: Proposal,
    revised: Proposal,
    response: Response,
    requester: str,
    peer: str,
    prior: Prior,
    episode: PublicEpisode,
) -> Commitment:
    """Resolve←(q0, ρ, q1): ACCEPT keeps q0's branch, COUNTER(α) must realize AltBranch(α)."""
    if response.decision == "REJECT":
        raise ResolutionError(Reason.REJECTED, "a rejected candidate has no commitment")
    if revised.request is None or initial.request is None:
        raise ResolutionError(Reason.NO_REQUEST, "both the initial and the revised proposal need one peer request")
    if revised.request.target != peer or initial.request.target != peer:
        raise ResolutionError(Reason.TARGET_CHANGED, f"the revision must keep addressing {peer}")
    expected = (
        initial if response.decision == "ACCEPT" else _alternative(initial, response, requester, peer, prior, episode)
    )
    assert expected.request is not None  # both sources carry one request
    want = (_actorize(requester, expected.self_plan, prior), _actorize(peer, expected.request.plan, prior))
    paths = (_actorize(requester, revised.self_plan, prior), _actorize(peer, revised.request.plan, prior))
    for wanted, got, role in zip(want, paths, ("requester SELF", "peer REQ"), strict=True):
        if got.tasks != wanted.tasks:
            raise ResolutionError(Reason.BRANCH_MISMATCH, f"{role}: {_first_difference(wanted.tasks, got.tasks)}")
    return _close("feedback", paths, prior, episode)


def _alternative(
    initial: Proposal, response: Response, requester: str, peer: str, prior: Prior, episode: PublicEpisode
) -> Proposal:
    """The proposal the counter offer asks for, with the initial proposal's goal parameters."""
    assert initial.request is not None
    offer = prior.counter_offers.get(response.counter_offer_id or "")
    matched = branch_index(prior).bindings_of(initial.self_plan, initial.request.plan, requester, peer)
    sources = _in_template(matched, prior, episode) & set(offer.moves if offer else ())
    if offer is None or len(sources) != 1:
        raise ResolutionError(
            Reason.INADMISSIBLE_COUNTER,
            f"counter offer {response.counter_offer_id!r} does not apply to the initial proposal",
        )
    source = sources.pop()
    return realize_alternative(initial, source, offer.moves[source], requester, peer, prior)


def _in_template(bindings: set[str], prior: Prior, episode: PublicEpisode) -> set[str]:
    if episode.template is None:
        return set(bindings)
    return {binding for binding in bindings if prior.codebook[binding] == episode.template}


def _first_difference(expected: Path, got: Path) -> str:
    for index, (want, have) in enumerate(zip(expected, got, strict=False), start=1):
        if want != have:
            return f"task {index} is {format_task(have)}, expected {format_task(want)}"
    return f"{len(got)} tasks where {len(expected)} are expected"
