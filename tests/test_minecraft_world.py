"""The Minecraft world's Python side without Node: layout, and the executor over a fake bridge.

The fake answers the bridge's ops the way the Node side does, so what is checked here is
the executor's own work: spec translation, failure mapping, ground-truth merging, and
reporting where bots and server disagree.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gencoord.errors import WorldError
from gencoord.prior import Prior
from gencoord.tasks import SuiteDocument
from gencoord.tasks.cluster import draw_pool
from gencoord.tasks.instances import build_episode
from gencoord.worlds.actions import CraftItem, GiveItem, GoTo
from gencoord.worlds.changes import BlockRoute, OccupyStation, RemoveItems
from gencoord.worlds.conformance_fixtures import conformance_program as program
from gencoord.worlds.conformance_fixtures import conformance_world as world
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.mineflayer.layout import lay_out
from gencoord.worlds.mineflayer.server_options import player_names

A, B = "agent_a", "agent_b"


@pytest.mark.parametrize("split", ["in_distribution", "held_out_template", "goal_capability"])
def test_no_two_refs_share_a_block_in_any_world(split: str, prior: Prior, suites: SuiteDocument) -> None:
    for cluster in draw_pool(split, 40, seed=11, suites=suites):
        spec = build_episode(cluster, 0, 11, prior, suites)
        layout = lay_out(spec.world, prior.game)
        blocks = [tuple(ref["position"]) for ref in layout.refs.values()]
        ground = [(x, z) for cells in (*layout.resources.values(), *layout.sites.values()) for x, _, z in cells]
        ground = list(dict.fromkeys(ground))  # a resource's second layer stands on its first
        starts = {(int(a.position[0]), int(a.position[2])) for a in spec.world.agents}
        assert len(blocks) == len(set(blocks))
        assert len(ground) == len(set(ground))
        own = {name: (ref["position"][0], ref["position"][2]) for name, ref in layout.refs.items()}  # type: ignore[index]
        held = {
            (x, z)
            for name, cells in (*layout.resources.items(), *layout.sites.items())
            for x, _, z in cells
            if (x, z) != own[name]
        }
        assert not held & {(x, z) for x, _, z in blocks} and not held & starts


def test_resources_get_their_deposit_and_sites_sixteen_cells(prior: Prior) -> None:
    spec = world(prior)
    layout = lay_out(spec, prior.game, origin=(100, 0, -50))
    assert all(len(cells) == 32 for cells in layout.resources.values())  # 64 in the sim: capped
    assert all(len(cells) == 16 for cells in layout.sites.values())
    assert layout.refs["order_chest"]["position"] == [104, 64, -50]
    assert layout.drops["stone"] == "cobblestone"
    assert all(high[0] - low[0] + 1 <= 32768 for low, high in layout.clear)


class FakeBridge:
    """Answers like bridge.js: a world with a server that can disagree with the bots."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.alive = True
        self.server_inventory: dict[str, dict[str, int]] = {A: {}, B: {}}
        self.bot_inventory: dict[str, dict[str, int]] = {A: {}, B: {}}
        self.act_answers: list[dict[str, Any] | WorldError] = []

    def call(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self.calls.append((op, args))
        if op == "act":
            answer = self.act_answers.pop(0)
            if isinstance(answer, WorldError):
                self.alive = False
                raise answer
            return answer
        if op in ("reset", "observe"):
            bots = {n: {"inventory": self.bot_inventory[n], "position": [0.5, 64, 0.5]} for n in (A, B)}
            players = {n: {"inventory": self.server_inventory[n]} for n in (A, B)}
            server = {"players": players, "containers": {"4,64,0": {"stick": 2}}, "sites": {}}
            return {"bots": bots, "seen": {"sites": {}, "containers": {}}, "server": server}
        return {"server_s": 0.5, "login_s": 1.0}

    def close(self) -> None:
        self.alive = False


def test_the_executor_reads_ground_truth_and_reports_disagreement(prior: Prior) -> None:
    bridge = FakeBridge()
    executor = MinecraftExecutor(bridge_factory=lambda: bridge, game=prior.game)
    executor.reset(world(prior))
    op, spec = bridge.calls[-2]
    assert op == "reset" and spec["agents"][0]["position"] == [0.5, 64.0, 0.5]  # block centres
    bridge.bot_inventory[A] = {"oak_planks": 8}
    bridge.server_inventory[A] = {"oak_planks": 7}
    snapshot = executor.snapshot()
    assert snapshot.inventories[A] == {"oak_planks": 7}  # the server is ground truth
    assert snapshot.containers["order_chest"] == {"stick": 2}
    [discrepancy] = snapshot.discrepancies
    assert discrepancy == "inventory agent_a: bots see {'oak_planks': 8}, the server holds {'oak_planks': 7}"


def test_refusals_happen_before_the_bridge_and_failures_keep_their_codes(prior: Prior) -> None:
    bridge = FakeBridge()
    executor = MinecraftExecutor(bridge_factory=lambda: bridge, game=prior.game)
    executor.reset(world(prior, forbidden={B: frozenset({"craft_item"})}))
    [refused] = executor.run(program([CraftItem(B, "b#1", "stick", 1, "oak_planks", None)]), 0, 1)
    assert refused.failure is not None and refused.failure.code == "WORKCELL_CANNOT"
    assert [op for op, _ in bridge.calls].count("act") == 0
    bridge.act_answers = [
        {"failure": None, "inventories": {B: {}}},
        {"failure": {"code": "NO_PATH", "message": "agent_b cannot get there"}, "inventories": {B: {}}},
    ]
    actions = [GoTo(B, "b#1", A, "agent"), GoTo(B, "b#1", "order_chest", "ref"), GiveItem(B, "b#1", A, "stick", 1)]
    records = executor.run(program(actions), 0, 3)
    assert [r.ok for r in records] == [True, False]
    assert records[1].failure is not None and records[1].failure.code == "NO_PATH"


def test_a_bridge_that_dies_fails_the_action_and_restarts_on_reset(prior: Prior) -> None:
    bridges: list[FakeBridge] = []

    def factory() -> FakeBridge:
        bridges.append(FakeBridge())
        return bridges[-1]

    executor = MinecraftExecutor(bridge_factory=factory, game=prior.game)
    executor.reset(world(prior))
    bridges[0].act_answers = [WorldError("BRIDGE_DIED", "the Minecraft bridge exited while running act")]
    [record] = executor.run(program([GoTo(A, "a#1", "order_chest", "ref")]), 0, 1)
    assert record.failure is not None and record.failure.code == "BRIDGE_DIED"
    executor.reset(world(prior))
    assert len(bridges) == 2 and bridges[1].calls[0][0] == "start"


def test_a_blocked_route_becomes_a_wall_with_an_opening_and_a_busy_station_is_taken(prior: Prior) -> None:
    executor = MinecraftExecutor(bridge_factory=FakeBridge, game=prior.game)
    start = world(prior)
    executor.reset(dataclasses.replace(start, blocked=frozenset({"quarry"}), busy_until={"crafting_station": 30.0}))
    changes = [args for op, args in executor._bridge.calls if op == "change"]  # type: ignore[union-attr]
    wall = next(args for args in changes if args["kind"] == "wall")
    layout = lay_out(start, prior.game)
    cells = {tuple(cell) for cell in wall["cells"]}
    held = {layout.at(name) for name in layout.refs} | {c for cs in layout.resources.values() for c in cs}
    x, y, z = layout.at("quarry")
    ring = {(x + dx, z + dz) for dx in range(-4, 5) for dz in range(-4, 5) if max(abs(dx), abs(dz)) == 4}
    assert wall["ref"] == "quarry" and cells and not cells & held  # a wall, on nothing else's cells
    assert {(cx, cz) for cx, _, cz in cells} < ring  # a square ring round the ref, with an opening
    assert {cy for _, cy, _ in cells} == {y, y + 1}  # two blocks high: no bot jumps it
    assert {"kind": "occupy", "station": "crafting_station", "seconds": 30.0} in changes
    executor.reset(start)  # the next episode: the wall's box is cleared with the rest
    [reset] = [args for op, args in executor._bridge.calls if op == "reset"][-1:]  # type: ignore[union-attr]
    assert any(all(low[i] <= min(c[i] for c in cells) for i in range(3)) for low, _ in reset["clear"])


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=12, unique=True))
def test_every_team_gets_valid_distinct_player_names(agents: list[str]) -> None:
    players = player_names(agents)
    assert list(players) == agents
    assert all(re.fullmatch(r"[A-Za-z0-9_]{3,16}", player) for player in players.values())
    assert len({player.lower() for player in players.values()}) == len(agents)  # the server ignores case
    valid = [name for name in agents if re.fullmatch(r"[A-Za-z0-9_]{3,16}", name)]
    if len({name.lower() for name in valid}) == len(valid):
        assert all(players[name] == name for name in valid)  # a name that can log in is kept


def test_a_change_naming_nothing_in_the_world_is_a_clear_error(prior: Prior) -> None:
    executor = MinecraftExecutor(bridge_factory=FakeBridge, game=prior.game)
    executor.reset(world(prior))
    for change, reason in (
        (RemoveItems("nobody", "stick", 1), "UNKNOWN_AGENT"),
        (BlockRoute("nowhere"), "UNKNOWN_REF"),
        (OccupyStation("no_station", 5.0), "UNKNOWN_REF"),
    ):
        with pytest.raises(WorldError) as caught:
            executor.change(change)
        assert caught.value.reason == reason
