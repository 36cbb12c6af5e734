"""Conformance: what every Executor (the simulator, real Minecraft) must do.

An executor joins by adding a factory to EXECUTORS. The checks are about effects and
failure reporting, not timing: a real server's clock is not the simulator's. One
executor serves a whole module (a Minecraft server and its bots stay warm across tests;
``reset`` is what each test relies on).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from gencoord.prior import Prior
from gencoord.worlds.actions import CraftItem, Deposit, GiveItem, GoTo, ObtainBlock, PlaceBlock, Withdraw
from gencoord.worlds.executor import Executor
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.sim import SimExecutor
from tests.worlds import program, world

EXECUTORS: dict[str, Callable[[], Executor]] = {"sim": SimExecutor, "minecraft": MinecraftExecutor}

A, B = "agent_a", "agent_b"


@pytest.fixture(scope="module", params=[pytest.param("sim"), pytest.param("minecraft", marks=pytest.mark.minecraft)])
def executor(request: pytest.FixtureRequest) -> Iterator[Executor]:
    made = EXECUTORS[request.param]()
    yield made
    made.close()


def _handoff_program() -> list:  # type: ignore[type-arg]
    """The paper's recorded episode, written as actions: B gathers 8 planks, hands them over, A crafts."""
    return [
        GoTo(B, "b#1", "lumber_yard", "ref"),
        *(ObtainBlock(B, "b#1", "lumber_yard", "oak_planks") for _ in range(8)),
        GoTo(B, "b#2", A, "agent"),
        GiveItem(B, "b#2", A, "oak_planks", 8),
        GoTo(A, "a#1", "crafting_station", "ref"),
        CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station"),
    ]


def test_reset_reports_the_initial_world(executor: Executor, prior: Prior) -> None:
    snapshot = executor.reset(world(prior, {A: {"stick": 3}}, contents={"chest_a": {"cobblestone": 5}}))
    assert snapshot.inventories[A] == {"stick": 3} and snapshot.inventories[B] == {}
    assert snapshot.containers["chest_a"] == {"cobblestone": 5} and snapshot.containers["order_chest"] == {}
    assert all(items == {} for items in snapshot.sites.values())


def test_recorded_episode_moves_the_items_it_should(executor: Executor, prior: Prior) -> None:
    executor.reset(world(prior))
    actions = _handoff_program()
    records = executor.run(program(actions, {11: (10,)}, handoff=10), 0, len(actions))
    assert [r.ok for r in records] == [True] * 13
    give = records[10]
    assert give.inventories[B].get("oak_planks", 0) == 0 and give.inventories[A]["oak_planks"] == 8
    final = executor.snapshot()
    assert final.inventories[A] == {"crafting_table": 1, "oak_planks": 4}
    assert final.crafted[A] == {"crafting_table": 1}
    assert final.discrepancies == ()
    assert all(r.end_s >= r.start_s for r in records)
    assert records[11].start_s >= records[10].end_s  # the craft waited for the handoff


def test_running_in_spans_equals_running_at_once(executor: Executor, prior: Prior) -> None:
    actions = _handoff_program()[9:]  # B already holds the planks: the handoff and the craft
    compiled = program(actions, {3: (1,)}, handoff=1)
    start = world(prior, {B: {"oak_planks": 8}})
    executor.reset(start)
    executor.run(compiled, 0, len(actions))
    whole = executor.snapshot()
    executor.reset(start)
    for begin, stop in ((0, 1), (1, 2), (2, len(actions))):
        executor.run(compiled, begin, stop)
    assert executor.snapshot().inventories == whole.inventories == {A: {"crafting_table": 1, "oak_planks": 4}, B: {}}


def test_a_failed_action_stops_the_run_with_a_stable_code(executor: Executor, prior: Prior) -> None:
    executor.reset(world(prior, {B: {"oak_planks": 3}}))
    actions = [GoTo(B, "b#1", A, "agent"), GiveItem(B, "b#1", A, "oak_planks", 8), GoTo(A, "a#1", "order_chest", "ref")]
    records = executor.run(program(actions), 0, 3)
    assert len(records) == 2 and not records[1].ok
    assert records[1].failure is not None and records[1].failure.code == "MISSING_ITEMS"
    assert "3 oak_planks" in records[1].failure.message and "needs 8" in records[1].failure.message
    assert executor.snapshot().inventories[B] == {"oak_planks": 3}  # nothing half-done


def test_missing_ingredient_and_no_recipe_are_different_failures(executor: Executor, prior: Prior) -> None:
    executor.reset(world(prior, {A: {"oak_planks": 2}}))
    go = GoTo(A, "a#1", "crafting_station", "ref")
    short = executor.run(
        program([go, CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station")]), 0, 2
    )
    executor.reset(world(prior, {A: {"oak_planks": 2}}))
    nonsense = executor.run(program([go, CraftItem(A, "a#1", "stone_axe", 1, "oak_planks", "crafting_station")]), 0, 2)
    assert short[1].failure is not None and nonsense[1].failure is not None
    assert (short[1].failure.code, short[1].failure.message) == (
        "MISSING_INGREDIENT",
        "missing ingredient: 2 oak_planks",
    )
    assert nonsense[1].failure.code == "NO_RECIPE" and "stone_axe" in nonsense[1].failure.message


def test_deposits_withdrawals_and_placements_show_in_ground_truth(executor: Executor, prior: Prior) -> None:
    executor.reset(world(prior, {A: {"cobblestone": 6}}, contents={"chest_b": {"stick": 4}}))
    actions = [
        GoTo(A, "a#1", "chest_a", "ref"),
        Deposit(A, "a#1", "chest_a", "cobblestone", 4),
        GoTo(A, "a#2", "site_a", "ref"),
        PlaceBlock(A, "a#2", "site_a", "cobblestone"),
        PlaceBlock(A, "a#2", "site_a", "cobblestone"),
        GoTo(A, "a#3", "chest_b", "ref"),
        Withdraw(A, "a#3", "chest_b", "stick", 4),
    ]
    assert all(r.ok for r in executor.run(program(actions), 0, len(actions)))
    final = executor.snapshot()
    assert final.containers["chest_a"] == {"cobblestone": 4} and final.containers["chest_b"] == {}
    assert final.sites["site_a"] == {"cobblestone": 2}
    assert final.inventories[A] == {"stick": 4}
    assert final.credits["site_a"][A] == {"cobblestone": 2} and final.credits["chest_a"][A] == {"cobblestone": 4}


def test_acting_out_of_reach_fails(executor: Executor, prior: Prior) -> None:
    executor.reset(world(prior, {A: {"cobblestone": 1}}))
    [record] = executor.run(program([Deposit(A, "a#1", "depot_chest", "cobblestone", 1)]), 0, 1)
    assert record.failure is not None and record.failure.code == "OUT_OF_REACH"


def test_a_workcell_refuses_what_its_mode_forbids(executor: Executor, prior: Prior) -> None:
    executor.reset(world(prior, {B: {"oak_planks": 2}}, forbidden={B: frozenset({"craft_item"})}))
    [record] = executor.run(program([CraftItem(B, "b#1", "stick", 1, "oak_planks", None)]), 0, 1)
    assert record.failure is not None and record.failure.code == "WORKCELL_CANNOT"


def test_a_refused_transfer_moves_nothing(executor: Executor, prior: Prior) -> None:
    full = {"chest_a": {"dirt": 27 * 64}}
    executor.reset(world(prior, {A: {"cobblestone": 4}}, contents=full))
    actions = [GoTo(A, "a#1", "chest_a", "ref"), Deposit(A, "a#1", "chest_a", "cobblestone", 4)]
    records = executor.run(program(actions), 0, 2)
    assert records[1].failure is not None and records[1].failure.code == "NO_SPACE"
    after = executor.snapshot()
    assert after.inventories[A] == {"cobblestone": 4} and after.containers["chest_a"] == {"dirt": 27 * 64}
