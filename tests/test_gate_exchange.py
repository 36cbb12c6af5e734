"""Escalation as a GenCoord exchange: who is asked, what helpers answer, how a commitment runs and fails."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from gencoord.backends.peer import helper_decision
from gencoord.dsl.ast import Proposal
from gencoord.gate.exchange import Committed, allocate, delivery, spare_of
from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import budget_for
from gencoord.gate.rounds import run_gate_episode
from gencoord.gate.state import IssueRecord
from gencoord.gate.suite import AnomalyKind, make_instance
from gencoord.gate.task_graphs import default_task_graphs
from gencoord.prior import Prior
from gencoord.prior.load import team_prior
from gencoord.protocol.resolve import resolve_team
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask
from gencoord.tasks.world import team_world

PEERS = ["p0", "p1", "p2", "p3"]
ITEMS = ["coal", "stick", "oak_planks"]


@st.composite
def _market(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, dict[str, int]], dict[str, set[str]], bool]:
    needs = draw(st.dictionaries(st.sampled_from(ITEMS), st.integers(1, 9), min_size=1))
    offers = draw(st.dictionaries(st.sampled_from(PEERS), st.dictionaries(st.sampled_from(ITEMS), st.integers(0, 9))))
    refused = draw(st.dictionaries(st.sampled_from(ITEMS), st.sets(st.sampled_from(PEERS))))
    return needs, offers, refused, draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(_market())
def test_allocation_asks_for_exactly_what_is_needed_and_never_a_peer_that_refused(
    market: tuple[dict[str, int], dict[str, dict[str, int]], dict[str, set[str]], bool],
) -> None:
    needs, offers, refused, unadvertised = market
    asks = allocate(needs, offers, PEERS, refused, ask_unadvertised=unadvertised)
    for item, count in needs.items():
        askable = [p for p in PEERS if p not in refused.get(item, set())]
        advertised = [p for p in askable if offers.get(p, {}).get(item, 0) > 0]
        asked = {peer: items[item] for peer, items in asks.items() if item in items}
        assert all(peer in askable for peer in asked)
        if advertised or (unadvertised and askable):
            assert sum(asked.values()) == count  # the whole need, split over as few peers as the offers allow
        else:
            assert not asked  # the gate asks nobody who neither advertises nor may be asked blind
        beyond = [peer for peer, n in asked.items() if n > offers.get(peer, {}).get(item, 0)]
        assert len(beyond) <= 1  # only the one peer taking what no offer covers is asked beyond its advert


def test_a_helper_accepts_from_spare_counters_short_and_rejects_what_it_cannot_do(prior: Prior) -> None:
    give = delivery(prior, "coal", 3, "agent_a")
    assert helper_decision((give,), set(), {"coal": 5}).decision == "ACCEPT"
    countered = helper_decision((give,), set(), {"coal": 2})
    assert (countered.decision, dict(countered.extra)) == ("COUNTER", {"item": "coal", "have": "2"})
    assert helper_decision((give,), set(), {}).decision == "REJECT"
    own = prior.parse("SELF craft.item(q=4,input=oak_planks,item=stick)\nREQ -").self_plan[0]
    # a dependency escalation: do your blocking node now
    assert helper_decision((own,), {own}, {}).reason == "ALREADY_PLANNED"
    assert helper_decision((own,), set(), {}).reason == "NOT_READY"
    # spare: what is held now, less earlier promises and own needs not covered by incoming deliveries
    assert spare_of({"coal": 4}, {"coal": 3}, {"coal": 3}, {"coal": 1}) == {"coal": 3}
    assert spare_of({"coal": 4}, {"coal": 3}, {}, {}) == {"coal": 1}


def _split_supply(prior: Prior, condition: GateCondition) -> list[IssueRecord]:
    """The workshop's furnace lacks 3 raw iron; two peers hold 2 and 1 and say so."""
    job = default_task_graphs(prior)["workshop"]
    instance = make_instance(job, 7, prior, budget_for("workshop", prior), kinds=(AnomalyKind.SCARCE_ITEM,))
    held = {"agent_b": 2, "agent_c": 1}
    agents = tuple(
        dataclasses.replace(
            a,
            inventory={
                **{k: v for k, v in a.inventory.items() if k != "raw_iron"},
                **({"raw_iron": held[a.name]} if a.name in held else {}),
            },
        )
        for a in instance.world.agents
    )
    board = {peer: {k: v for k, v in items.items() if k != "raw_iron"} for peer, items in instance.board.items()}
    for peer, count in held.items():
        board.setdefault(peer, {})["raw_iron"] = count
    split = dataclasses.replace(instance, world=dataclasses.replace(instance.world, agents=agents), board=board)
    result = run_gate_episode(split, condition, prior=prior)
    assert result.success
    return [issue for issue in result.issues if issue.escalated]


def test_one_commitment_joins_every_helper_the_requester_needs(prior: Prior) -> None:
    [issue] = [i for i in _split_supply(prior, GateCondition.FULL) if i.node == "load_iron"]
    assert issue.commitment is not None
    proposal = prior.parse(issue.commitment)
    asked = {r.target: r.plan[0].get("q") for r in proposal.peer_requests}
    assert asked == {"agent_b": 2, "agent_c": 1}  # one n-party SELF+REQ, one REQ line per helper
    assert issue.stages == {"C": True, "H": True, "T": True, "F": True} and issue.fulfilled


def _committed(prior: Prior, trusted: bool) -> Committed:
    """agent_0 crafts sticks from planks that agent_1 and agent_2 each hand it; agent_2 also fetches nothing else."""
    task = TeamTask(
        id="sticks",
        agents=[
            TeamAgent(name="agent_0", inventory={"oak_planks": 2}),
            TeamAgent(name="agent_1", inventory={"oak_planks": 2}),
            TeamAgent(name="agent_2", inventory={"oak_planks": 2}),
        ],
        goal=TeamGoal(item="stick", count=8, holder="agent_0"),
    )
    episode, world = team_world(task, prior)
    proposal = prior.parse(
        "SELF craft.item(q=8,input=oak_planks,item=stick)\n"
        "REQ agent_1 resource.deliver(q=1,item=oak_planks,to=agent_0)\n"
        "REQ agent_2 resource.deliver(q=1,item=oak_planks,to=agent_0)"
    )
    assert isinstance(proposal, Proposal)
    holdings = {a.name: dict(a.inventory) for a in task.agents}
    commitment = resolve_team(proposal, "agent_0", holdings, prior, episode)
    plan = materialize(commitment, prior, episode)
    program = compile_plan(plan, world, prior.game)
    issue = IssueRecord(1, "agent_0", "missing_material", "n", {}, 1, True)
    mine = frozenset(i for i, a in enumerate(program.actions) if a.agent == "agent_0") if trusted else frozenset()
    checks = dict(zip(program.handoffs, plan.handoffs, strict=True))
    return Committed(issue, "agent_0", plan, program, {}, checks, mine)


def test_the_consumer_waits_for_every_hand_over_and_a_failure_stops_only_its_dependants() -> None:
    prior = team_prior()
    committed = _committed(prior, trusted=False)
    actions = committed.program.actions
    craft = next(i for i, a in enumerate(actions) if a.name == "craft_item")
    first = min(i for i, a in enumerate(actions) if a.agent == "agent_0")  # its walk to the station, then the craft
    gives = [i for i, a in enumerate(actions) if a.name == "give_item"]
    assert len(gives) == 2 and committed.waits(first)
    for index, action in enumerate(actions):
        if action.agent == "agent_1":
            committed.done.add(index)
    assert committed.waits(first)  # one hand-over landed, the other has not
    committed.stop(gives[1], "hand-over not verified")
    assert not committed.live(craft)  # the consumer is stopped with it
    assert all(committed.live(i) or i == gives[1] for i, a in enumerate(actions) if a.agent != "agent_0")
    assert committed.helpers_failed() and not committed.helpers_done()
    stages = committed.stages(terminal=False)
    assert stages["H"] is False and stages["F"] is False
    assert not committed.finished
    committed.done |= {i for i in range(len(actions)) if committed.live(i)}  # the independent work still runs
    assert committed.finished and committed.cancelled == {i for i, a in enumerate(actions) if a.agent == "agent_0"}


def test_without_the_partition_the_requester_does_not_wait_for_the_promised_items() -> None:
    trusting = _committed(team_prior(), trusted=True)
    first = min(i for i, a in enumerate(trusting.program.actions) if a.agent == "agent_0")
    assert trusting.program.deps[first] and not trusting.waits(first)


def test_a_promise_taken_as_fact_is_recorded_and_the_world_still_decides(prior: Prior) -> None:
    for condition, taken in ((GateCondition.FULL, False), (GateCondition.FULL_NO_PARTITION, True)):
        escalated = _split_supply(prior, condition)
        assert escalated and all(issue.promise_taken_as_fact is taken for issue in escalated), condition
