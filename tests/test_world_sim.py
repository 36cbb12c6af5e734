"""The simulator's Minecraft semantics and its clock (vanilla numbers where the game fixes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gencoord.errors import CallOrderError, ConfigError
from gencoord.prior import Prior
from gencoord.worlds.actions import FurnaceCollect, FurnaceLoad, GiveItem, GoTo, ObtainBlock, PlaceBlock, Wait
from gencoord.worlds.conformance_fixtures import conformance_program as program
from gencoord.worlds.conformance_fixtures import conformance_world as world
from gencoord.worlds.executor import OrderEnforcing
from gencoord.worlds.sim import SimExecutor, default_physics
from gencoord.worlds.sim.physics import load_physics

A, B = "agent_a", "agent_b"


def _mine(prior: Prior, source: str, block: str, tools: dict[str, int]) -> list:  # type: ignore[type-arg]
    sim = SimExecutor(prior.game)
    sim.reset(world(prior, {A: tools}))
    return sim.run(program([GoTo(A, "a#1", source, "ref"), ObtainBlock(A, "a#1", source, block)]), 0, 2)


@pytest.mark.parametrize(
    ("block", "tools", "seconds"),
    [("oak_planks", {}, 3.0), ("oak_planks", {"wooden_axe": 1}, 1.5), ("stone", {"wooden_pickaxe": 1}, 1.15)],
)
def test_breaking_takes_vanilla_time(prior: Prior, block: str, tools: dict[str, int], seconds: float) -> None:
    source = "lumber_yard" if block == "oak_planks" else "quarry"
    _, broke = _mine(prior, source, block, tools)
    assert broke.ok and broke.end_s - broke.start_s == pytest.approx(seconds)


def test_stone_by_hand_drops_nothing(prior: Prior) -> None:
    _, broke = _mine(prior, "quarry", "stone", {})
    assert broke.failure is not None and broke.failure.code == "NOT_HARVESTABLE"
    assert "wooden_pickaxe" in broke.failure.message


def test_stone_drops_cobblestone(prior: Prior) -> None:
    _, broke = _mine(prior, "quarry", "stone", {"stone_pickaxe": 1})
    assert broke.inventories[A] == {"stone_pickaxe": 1, "cobblestone": 1}


def test_walking_takes_distance_over_vanilla_speed(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    sim.reset(world(prior))
    [walk] = sim.run(program([GoTo(A, "a#1", "marker_site", "ref")]), 0, 1)
    start, goal = (0.0, 64.0, 0.0), (0.0, 64.0, -13.0)  # in front of the marker at z=-12
    distance = sum((p - q) ** 2 for p, q in zip(start, goal, strict=True)) ** 0.5
    assert walk.end_s == pytest.approx(distance / default_physics().walk_blocks_per_s)


def test_a_handoff_lands_after_the_pickup_delay(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    sim.reset(world(prior, {B: {"stick": 2}}))
    _, give = sim.run(program([GoTo(B, "b#1", A, "agent"), GiveItem(B, "b#1", A, "stick", 2)]), 0, 2)
    physics = default_physics()
    assert give.end_s - give.start_s == pytest.approx((physics.toss_ticks + physics.pickup_delay_ticks) / 20)


def test_two_agents_work_in_parallel(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    sim.reset(world(prior))
    records = sim.run(program([Wait(A, "a#1", 200), Wait(B, "b#1", 100)]), 0, 2)
    assert records[1].start_s == 0.0 and sim.snapshot().clock_s == pytest.approx(10.0)


def test_furnace_smelts_at_vanilla_speed_and_fuel(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    sim.reset(world(prior, {A: {"cobblestone": 8, "coal": 1}}))
    actions = [
        GoTo(A, "a#1", "furnace_station", "ref"),
        FurnaceLoad(A, "a#1", "furnace_station", "input", "cobblestone", 8),
        FurnaceLoad(A, "a#2", "furnace_station", "fuel", "coal", 1),
        FurnaceCollect(A, "a#3", "furnace_station", "stone", 8),
    ]
    records = sim.run(program(actions), 0, len(actions))
    assert all(r.ok for r in records)
    assert sim.snapshot().inventories[A] == {"stone": 8}
    assert records[-1].end_s - records[2].end_s >= 8 * 10.0  # 200 ticks per item


def test_furnace_short_of_fuel_says_how_much_it_can_make(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    sim.reset(world(prior, {A: {"cobblestone": 8, "stick": 2}}))
    actions = [
        GoTo(A, "a#1", "furnace_station", "ref"),
        FurnaceLoad(A, "a#1", "furnace_station", "input", "cobblestone", 8),
        FurnaceLoad(A, "a#2", "furnace_station", "fuel", "stick", 2),  # 2 x 100 ticks = 1 item
        FurnaceCollect(A, "a#3", "furnace_station", "stone", 8),
    ]
    failed = sim.run(program(actions), 0, len(actions))[-1]
    assert failed.failure is not None and failed.failure.code == "FURNACE_SHORT"
    assert "can make 1 stone, 8 requested" in failed.failure.message


def test_a_full_inventory_refuses_more(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    full = {f"item_{i}": 1 for i in range(36)}
    sim.reset(world(prior, {A: full, B: {"stick": 1}}))
    _, give = sim.run(program([GoTo(B, "b#1", A, "agent"), GiveItem(B, "b#1", A, "stick", 1)]), 0, 2)
    assert give.failure is not None and give.failure.code == "NO_SPACE"


def test_placing_needs_the_item(prior: Prior) -> None:
    sim = SimExecutor(prior.game)
    sim.reset(world(prior))
    _, place = sim.run(program([GoTo(A, "a#1", "site_a", "ref"), PlaceBlock(A, "a#1", "site_a", "oak_planks")]), 0, 2)
    assert place.failure is not None and place.failure.code == "MISSING_ITEMS"


def test_same_world_same_program_same_trace(prior: Prior) -> None:
    actions = [
        GoTo(A, "a#1", "lumber_yard", "ref"),
        *(ObtainBlock(A, "a#1", "lumber_yard", "oak_planks") for _ in range(3)),
    ]
    traces = []
    for _ in range(2):
        sim = SimExecutor(prior.game)
        sim.reset(world(prior))
        traces.append(sim.run(program(actions), 0, len(actions)))
    assert traces[0] == traces[1]


def test_run_before_reset_is_a_clear_error(prior: Prior) -> None:
    with pytest.raises(CallOrderError, match=r"run\(\) before reset\(\)"):
        OrderEnforcing(SimExecutor(prior.game)).run(program([Wait(A, "a#1", 1)]), 0, 1)


def test_broken_physics_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "physics.toml"
    path.write_text("walk_blocks_per_s = -1\n")
    with pytest.raises(ConfigError) as caught:
        load_physics(path)
    assert caught.value.reason == "INVALID_PHYSICS"
