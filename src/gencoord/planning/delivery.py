"""What PATH, SLICE and GOAL deliveries say, and how a receiver turns each into its own path.

Sender side: the three deliveries are written from the sender's checked SELF+REQ record
(its private task graph, instantiated). Receiver side: a PATH is adopted as delivered; a
SLICE is linearized along its edges (the receiver sees nodes in no particular order);
a GOAL is planned from what the receiver holds and is handed, with the recipes of the
shared prior, so the receiver may well choose a different legal path than the sender's.
Every realized path is checked against the shared contract and the receiver's own item
ledger before it is acknowledged, so a delivery the receiver cannot carry out is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from graphlib import CycleError
from itertools import pairwise

from gencoord.dsl.ast import Path, Proposal, Task
from gencoord.dsl.serialize import format_path, format_task
from gencoord.errors import ParseError, ResolutionError
from gencoord.prior.contract import check_path
from gencoord.prior.ledger import consumption, inventory_after
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.delivery import Delivery, DeliveryKind, malformed
from gencoord.protocol.plan import Conjunct
from gencoord.protocol.resolve import stable_order
from gencoord.reasons import Reason
from gencoord.runtime.materialize import observable_effect

_EDGE = "->"
_GOAL_KINDS = ("container_contains", "site_has", "inventory_contains")


def handover(proposal: Proposal, giver: str, receiver: str) -> tuple[str, int] | None:
    """The item and quantity ``giver``'s SELF hands to ``receiver`` (summed over its hand-overs)."""
    given: Counter[str] = Counter()
    for task in proposal.self_plan:
        quantity, item = task.get("q"), task.get("item")
        if task.get("to") == receiver and isinstance(quantity, int) and isinstance(item, str):
            given[item] += quantity
    if not given:
        return None
    item, quantity = sorted(given.items())[0]
    return item, quantity


def goal_of(path: Path, actor: str, prior: Prior) -> tuple[Conjunct, ...]:
    """The receiver's part as conjuncts: every destination it fills, and what its last step leaves."""
    effects = [
        effect
        for index, task in enumerate(path)
        if (task.has("dst") or task.has("site") or task.has("to") or index == len(path) - 1)
        and (effect := observable_effect(task, actor, f"r{index}", prior)) is not None
    ]
    return tuple(dict.fromkeys(effects))


def write_delivery(kind: DeliveryKind, proposal: Proposal, giver: str, prior: Prior) -> Delivery:
    """The ``kind`` delivery of a checked bilateral record (its REQ is the receiver's part)."""
    request = proposal.request
    assert request is not None  # the caller checked the record has exactly one request
    receiver, part = request.target, request.plan
    receives = handover(proposal, giver, receiver)
    if kind is DeliveryKind.PATH:
        body = format_path(part)
    elif kind is DeliveryKind.SLICE:
        body = _slice_body(proposal, giver, receiver)
    else:
        conjuncts = goal_of(part, receiver, prior)
        body = " & ".join(f"{c.kind}({c.holder},{c.item},{c.quantity})" for c in conjuncts)
    return Delivery(kind, giver, receiver, receives, body)


def _slice_body(proposal: Proposal, giver: str, receiver: str) -> str:
    """Nodes (the receiver's tasks and the giver's hand-over task) sorted by text, then the edges.

    Node names are given after sorting, so neither names nor listing order tell the
    receiver the execution order: only the edges do.
    """
    assert proposal.request is not None
    part = proposal.request.plan
    boundary = next((task for task in proposal.self_plan if task.get("to") == receiver), None)
    owned = [(format_task(task), receiver) for task in part]
    if boundary is not None:
        owned.append((format_task(boundary), giver))
    names = {entry: f"n{index}" for index, entry in enumerate(sorted(set(owned)), start=1)}
    if len(names) != len(owned):
        raise malformed(Reason.SLICE_DUPLICATE, "the sender's slice repeats a task")
    chain = [names[(format_task(task), receiver)] for task in part]
    edges = list(pairwise(chain))
    if boundary is not None and chain:
        edges.insert(0, (names[(format_task(boundary), giver)], chain[0]))
    nodes = [f"{name}@{owner}={text}" for (text, owner), name in sorted(names.items(), key=lambda kv: kv[1])]
    return " ; ".join(nodes + [f"{a}{_EDGE}{b}" for a, b in edges])


def _one_task(text: str, prior: Prior) -> Task:
    path = prior.parse_path(text)
    if len(path) != 1:
        raise malformed(Reason.SLICE_NODE, f"a slice node holds one task, not {len(path)}")
    return path[0]


def _linearize(body: str, receiver: str, prior: Prior) -> Path:
    """The receiver's nodes in the order the edges give (ties by name); parts may come in any order."""
    parts = [piece.strip() for piece in body.split(" ; ")]
    edges = [part for part in parts if _EDGE in part and "=" not in part]
    nodes: dict[str, tuple[str, Task]] = {}
    for part in parts:
        if part in edges:
            continue
        name, _, rest = part.partition("@")
        owner, _, text = rest.partition("=")
        if not name or not owner or not text or name in nodes:
            raise malformed(Reason.SLICE_NODE, f"not a fresh node name@owner=task: {part[:60]!r}")
        nodes[name] = (owner, _one_task(text, prior))
    graph: dict[str, set[str]] = {name: set() for name in nodes}
    for edge in edges:
        before, _, after = edge.partition(_EDGE)
        if before not in nodes or after not in nodes:
            raise malformed(Reason.SLICE_EDGE, f"edge {edge!r} names a node the slice does not hold")
        graph[after].add(before)
    try:
        order = stable_order(graph)
    except CycleError:
        raise malformed(Reason.SLICE_CYCLE, "the slice's edges form a cycle") from None
    return tuple(nodes[name][1] for name in order if nodes[name][0] == receiver)


def _conjuncts(body: str) -> list[tuple[str, str, str, int]]:
    found = []
    for part in body.split(" & "):
        kind, _, rest = part.partition("(")
        fields = rest.removesuffix(")").split(",")
        if (
            kind not in _GOAL_KINDS
            or not rest.endswith(")")
            or len(fields) != 3
            or not (fields[2].isascii() and fields[2].isdigit())
        ):
            raise malformed(Reason.GOAL_CONJUNCT, f"not a goal conjunct: {part[:60]!r}")
        if int(fields[2]) <= 0:
            raise malformed(Reason.GOAL_CONJUNCT, f"a goal quantity must be positive: {part[:60]!r}")
        found.append((kind, fields[0], fields[1], int(fields[2])))
    return found


def _make(item: str, quantity: int, stock: dict[str, int], prior: Prior) -> Task | None:
    """A craft step that turns what is in ``stock`` into ``quantity`` more ``item`` (None: no recipe fits)."""
    for material in sorted(stock):
        recipe = prior.game.recipe(item, material)
        if recipe is not None and all(stock.get(i, 0) >= n for i, n in recipe.needs(quantity).items()):
            return _one_task(f"craft.item(q={quantity},input={material},item={item})", prior)
    return None


def plan_goal(body: str, receiver: str, stock: Mapping[str, int], prior: Prior) -> Path:
    """The receiver's own path to the delivered conjuncts, planned from what it holds and receives."""
    holding = dict(stock)
    path: list[Task] = []
    for kind, holder, item, quantity in _conjuncts(body):
        missing = quantity - holding.get(item, 0)
        if missing > 0:
            step = _make(item, missing, holding, prior)
            if step is None:
                raise ResolutionError(
                    Reason.GOAL_UNREACHABLE, f"{receiver} can neither hold nor craft {quantity} {item} from what it has"
                )
            path.append(step)
            holding = inventory_after(holding, step, prior)
        if kind == "container_contains":
            step = _one_task(f"resource.deliver(q={quantity},dst={holder},item={item})", prior)
        elif kind == "site_has":
            step = _one_task(f"build.component(q={quantity},item={item},site={holder})", prior)
        elif holder != receiver:
            step = _one_task(f"resource.deliver(q={quantity},item={item},to={holder})", prior)
        else:
            continue
        path.append(step)
        holding = inventory_after(holding, step, prior)
    if not path:
        raise ResolutionError(
            Reason.GOAL_HELD, "the delivered goal already holds: there is nothing for the receiver to do"
        )
    return tuple(path)


def realize(delivery: Delivery, holdings: Mapping[str, int], prior: Prior, episode: PublicEpisode) -> Path:
    """The receiver's checked path for a delivery addressed to it, or the stage error that refuses it."""
    stock = _stock(delivery, holdings, episode)
    return _checked(realized_path(delivery, stock, prior), delivery, stock, prior, episode)


def realized_path(delivery: Delivery, stock: Mapping[str, int], prior: Prior) -> Path:
    """What a deterministic receiver takes on, unchecked: the PATH as written, the SLICE linearized, the GOAL
    planned from ``stock`` (its bag with the hand-over in it)."""
    if delivery.kind is DeliveryKind.PATH:
        return prior.parse_path(delivery.body)
    if delivery.kind is DeliveryKind.SLICE:
        return _linearize(delivery.body, delivery.receiver, prior)
    return plan_goal(delivery.body, delivery.receiver, stock, prior)


def adopted(path: Path, delivery: Delivery, holdings: Mapping[str, int], prior: Prior, episode: PublicEpisode) -> Path:
    """``path`` as the receiver's answer to ``delivery``, checked as a realized one is: the contract, then its ledger.

    A receiver that is a backend (stage ``receiver_delivery``) writes its own path; it is
    held to the same checks, so a model's wrong path is refused with the rule's codes.
    """
    return _checked(path, delivery, _stock(delivery, holdings, episode), prior, episode)


def _checked(path: Path, delivery: Delivery, stock: dict[str, int], prior: Prior, episode: PublicEpisode) -> Path:
    if not path:
        raise ParseError(Reason.EMPTY_DELIVERY, f"the {delivery.kind} gives {delivery.receiver} nothing to do")
    check_path(path, delivery.receiver, "SELF", prior, episode)
    _check_ledger(path, delivery.receiver, stock, prior)
    return path


def _stock(delivery: Delivery, holdings: Mapping[str, int], episode: PublicEpisode) -> dict[str, int]:
    """What the receiver will hold once the delivery's hand-over arrives; the parties checked first."""
    receiver = delivery.receiver
    if receiver not in episode.agents or delivery.giver not in episode.agents or delivery.giver == receiver:
        raise ResolutionError(
            Reason.DELIVERY_PARTIES, f"{delivery.giver} → {receiver} are not two agents of this episode"
        )
    return received(delivery, holdings)


def received(delivery: Delivery, holdings: Mapping[str, int]) -> dict[str, int]:
    """The receiver's bag with the delivery's hand-over in it."""
    stock = dict(holdings)
    if delivery.receives is not None:
        item, quantity = delivery.receives
        stock[item] = stock.get(item, 0) + quantity
    return stock


def _check_ledger(path: Path, receiver: str, stock: dict[str, int], prior: Prior) -> None:
    holding = dict(stock)
    for index, step in enumerate(path, start=1):
        for item, used in consumption(step, prior).items():
            if holding.get(item, 0) < used:
                raise ResolutionError(
                    Reason.DELIVERY_INFEASIBLE,
                    f"task {index} ({step.skill}) uses {used} {item}; {receiver} would hold {holding.get(item, 0)}",
                )
        holding = inventory_after(holding, step, prior)


def without_binding(path: Path) -> Path:
    """The path with ``bind`` labels dropped: they name a branch, they are not an action."""
    return tuple(Task(task.skill, tuple((k, v) for k, v in task.args if k != "bind")) for task in path)


def beyond_handover(delivery: Delivery, prior: Prior) -> Delivery:
    """The same PATH with every quantity scaled past what the receiver is handed (an incompatible request)."""
    factor = (delivery.receives[1] if delivery.receives else 0) + 1
    path = prior.parse_path(delivery.body)
    scaled = tuple(
        Task(task.skill, tuple((k, v * factor if k == "q" and isinstance(v, int) else v) for k, v in task.args))
        for task in path
    )
    return Delivery(delivery.kind, delivery.giver, delivery.receiver, delivery.receives, format_path(scaled))
