"""Materialization: dispatch plans with ids, places, merged DAG and checker attachments."""

from __future__ import annotations

import dataclasses

import pytest

from gencoord.dsl import Proposal
from gencoord.errors import MaterializationError
from gencoord.prior import Prior, PublicEpisode, compose
from gencoord.protocol import resolve_forward
from gencoord.protocol.plan import Place
from gencoord.runtime.materialize import check_plan, materialize


def _commit(prior: Prior, template: str, binding: str, episode: PublicEpisode | None = None):  # type: ignore[no-untyped-def]
    sent = compose(prior, template, binding, sender="agent_a", receiver="agent_b")
    assert sent.request is not None
    answer = Proposal(sent.request.plan)
    return resolve_forward(sent, "agent_a", answer, "agent_b", prior, episode or prior.episode(template))


def test_paper_plan_shape(prior: Prior) -> None:
    commitment = _commit(prior, "ACTIVE_ORDER_BRANCH", "WORK_BRANCH")
    plan = materialize(commitment, prior, prior.episode("ACTIVE_ORDER_BRANCH"))
    assert [t.id for t in plan.tasks] == ["agent_a#1", "agent_a#2", "agent_b#1"]
    assert plan.task("agent_b#1").preds == ("agent_a#2",)
    assert plan.task("agent_a#2").place == Place("agent", "agent_b")
    assert (plan.handoffs[0].giver, plan.handoffs[0].receiver, plan.handoffs[0].item, plan.handoffs[0].quantity) == (
        "agent_a",
        "agent_b",
        "oak_planks",
        8,
    )
    assert [(c.kind, c.holder, c.item, c.quantity) for c in plan.terminal] == [
        ("inventory_contains", "agent_b", "crafting_table", 1)
    ]


def test_every_binding_materializes_with_a_distinct_terminal(prior: Prior) -> None:
    for template, spec in prior.templates.items():
        terminals = set()
        for binding in spec.bindings:
            plan = materialize(_commit(prior, template, binding), prior, prior.episode(template))
            assert plan.binding == binding and plan.terminal
            check_plan(plan, _commit(prior, template, binding))
            terminals.add(tuple((c.kind, c.holder, c.item, c.quantity) for c in plan.terminal))
        # forward bindings end in different worlds; Goal×Capability bindings share the goal
        expected = 1 if spec.family == "GOAL_CAPABILITY" else len(spec.bindings)
        assert len(terminals) == expected, template


def test_allocation_terminal_covers_both_sinks(prior: Prior) -> None:
    plan = materialize(_commit(prior, "DEPOSIT_OR_BUILD", "BUILD"), prior, prior.episode("DEPOSIT_OR_BUILD"))
    assert {(c.holder, c.kind) for c in plan.terminal} == {
        ("storage_chest", "container_contains"),
        ("build_site", "site_has"),
    }


def test_crafting_happens_at_the_episode_workcell(prior: Prior) -> None:
    plan = materialize(_commit(prior, "CHEST_OR_CRAFTING_TABLE", "CHEST"), prior, prior.episode())
    assert plan.task("agent_b#1").place == Place("ref", "crafting_station")
    table = materialize(_commit(prior, "CHEST_OR_CRAFTING_TABLE", "CRAFTING_TABLE"), prior, prior.episode())
    assert table.task("agent_b#1").place == Place("ref", "crafting_station")


def test_without_a_station_only_a_two_by_two_recipe_is_crafted_in_the_inventory(prior: Prior) -> None:
    base = prior.episode("CHEST_OR_CRAFTING_TABLE")
    bare = dataclasses.replace(base, refs={k: v for k, v in base.refs.items() if v.block != "crafting_table"})
    table = materialize(_commit(prior, "CHEST_OR_CRAFTING_TABLE", "CRAFTING_TABLE"), prior, bare)
    assert table.task("agent_b#1").place is None


def test_no_station_in_the_episode_is_a_materialization_failure(prior: Prior) -> None:
    base = prior.episode("CHEST_OR_CRAFTING_TABLE")
    bare = dataclasses.replace(base, refs={k: v for k, v in base.refs.items() if v.block != "crafting_table"})
    commitment = _commit(prior, "CHEST_OR_CRAFTING_TABLE", "CHEST")
    with pytest.raises(MaterializationError) as caught:
        materialize(commitment, prior, bare)
    assert caught.value.reason == "NO_STATION" and caught.value.code == "MATERIALIZATION_FAILURE"


def test_static_consistency_check_catches_a_tampered_plan(prior: Prior) -> None:
    commitment = _commit(prior, "ACTIVE_ORDER_BRANCH", "WORK_BRANCH")
    plan = materialize(commitment, prior, prior.episode())
    tampered_actor = dataclasses.replace(
        plan, tasks=(dataclasses.replace(plan.tasks[0], actor="agent_b"), *plan.tasks[1:])
    )
    reordered = dataclasses.replace(plan, tasks=tuple(reversed(plan.tasks)))
    no_edge = dataclasses.replace(plan, tasks=(*plan.tasks[:2], dataclasses.replace(plan.tasks[2], preds=())))
    for bad in (tampered_actor, reordered, no_edge):
        with pytest.raises(MaterializationError) as caught:
            check_plan(bad, commitment)
        assert caught.value.reason == "PLAN_INCONSISTENT"
