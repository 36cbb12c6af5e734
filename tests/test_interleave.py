"""Builders' placements stepped together (``runtime/interleave.py``): no builder idles on a teammate's later block."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gencoord.dsl.cells import Cell
from gencoord.prior.load import team_prior
from gencoord.prior.public import Ref
from gencoord.runtime.interleave import interleave
from gencoord.runtime.stands import _Builder, _out_of_the_way, place_builders
from gencoord.worlds.actions import Action, PlaceAt, Program, StepAside
from gencoord.worlds.placing import NEIGHBOURS, build_order, needs_floor, offset, support_ranks
from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.spec import AgentSpec, BuildSite, WorldSpec
from gencoord.worlds.standing import Terrain

BLOCKS = ("stone", "glass", "white_carpet")
PRIOR = team_prior()


def _shares(blocks: dict[Cell, str], owners: list[int], agents: int) -> list[Action]:
    """Each agent's cells of ``blocks`` (the buildable ones) in build order, one build task each."""
    order = build_order(blocks, [])
    actions: list[Action] = []
    for agent in range(agents):
        mine = [cell for position, cell in enumerate(order) if owners[position % len(owners)] % agents == agent]
        actions += [PlaceAt(f"agent_{agent}", f"t{agent}", "site", cell, blocks[cell]) for cell in mine]
    return actions


@settings(max_examples=60, deadline=None)
@given(
    raw=st.dictionaries(
        st.tuples(st.integers(0, 5), st.integers(0, 4), st.integers(0, 5)), st.sampled_from(BLOCKS), max_size=80
    ),
    owners=st.lists(st.integers(0, 7), min_size=1, max_size=40),
    agents=st.integers(2, 5),
)
def test_every_cell_is_stepped_after_a_face_and_each_builder_keeps_its_cells(
    raw: dict[Cell, str], owners: list[int], agents: int
) -> None:
    """Each builder places its own cells, each at a step after a block that gives it a face (or on the ground),
    its steps rising; the stepped order is what the compiler's waits follow, so none can close a circle."""
    ranks = support_ranks(raw)
    blocks = {cell: block for cell, block in raw.items() if cell in ranks}
    actions = _shares(blocks, owners, agents)
    before = {task: sorted(a.cell for a in actions if a.task == task) for task in {a.task for a in actions}}
    steps = interleave(actions).get("site", {})
    if not actions:
        return
    placed = [a for a in actions if isinstance(a, PlaceAt)]
    assert {t: sorted(a.cell for a in placed if a.task == t) for t in before} == before
    assert set(steps) == {a.cell for a in placed}
    for task in before:
        mine = [steps[a.cell] for a in placed if a.task == task]
        assert mine == sorted(mine) and len(set(mine)) == len(mine)
    for cell, step in steps.items():
        faces = NEIGHBOURS[:1] if needs_floor(blocks[cell]) else NEIGHBOURS
        held = [n for face in faces if (n := offset(cell, face)) in steps and not needs_floor(blocks[n])]
        assert cell[1] == 0 or any(steps[n] < step for n in held)


def test_a_builder_goes_on_with_its_own_cells_while_a_teammates_block_is_still_to_come() -> None:
    """Two towers side by side: the second builder's cells rest on its own column, so it never waits a step."""
    blocks = {(x, y, 0): "stone" for x in (0, 1) for y in range(4)}
    actions: list[Action] = [
        PlaceAt(f"agent_{x}", f"t{x}", "site", cell, "stone")
        for x in (0, 1)
        for cell in build_order(blocks, [])
        if cell[0] == x
    ]
    steps = interleave(actions)["site"]
    assert sorted(steps[(1, y, 0)] for y in range(4)) == [0, 1, 2, 3]  # a placement every step


def test_a_share_with_a_block_nothing_holds_up_keeps_its_order() -> None:
    """A per-cell list may name a block in the air: nothing can be stepped after it, so the site keeps the order
    it came in (and the world refuses the block when its turn comes)."""
    actions: list[Action] = [
        PlaceAt("agent_0", "t0", "site", (0, 3, 0), "stone"),
        PlaceAt("agent_0", "t0", "site", (0, 0, 0), "stone"),
        PlaceAt("agent_1", "t1", "site", (1, 0, 0), "stone"),
    ]
    kept = list(actions)
    assert interleave(actions) == {} and actions == kept


def test_a_builder_with_two_shares_of_one_site_is_not_stepped() -> None:
    actions: list[Action] = [
        PlaceAt("agent_0", "t0", "site", (0, 0, 0), "stone"),
        PlaceAt("agent_0", "t1", "site", (1, 0, 0), "stone"),
    ]
    assert interleave(actions) == {}


def test_the_world_applies_the_builders_placements_in_turns_not_level_by_level() -> None:
    """One builder raises a wall, the other lays a floor: the blueprint's order would put every ground cell
    first, holding the wall's builder back to the floor's pace; the merged order takes turns instead, each
    builder's k-th placement before any (k+1)-th, every wait kept."""
    wall = {(0, y, z): "stone" for y in range(3) for z in range(2)}
    floor = {(x, 0, z): "stone" for x in range(3, 6) for z in range(2)}
    blocks = {**wall, **floor}
    site = BuildSite((0, 64, 0), (6, 4, 2), frozenset(blocks), tuple(sorted(blocks.items())))
    refs = {"site": Ref(kind="site", block=None, position=(0, 64, 0))}
    agents = (
        AgentSpec("agent_0", (1.5, 64.0, -1.5), {"stone": 6}),
        AgentSpec("agent_1", (4.5, 64.0, -1.5), {"stone": 6}),
    )
    world = WorldSpec(agents, refs, builds={"site": site})
    order = build_order(blocks, [])
    placing = tuple(
        PlaceAt(agent, agent, "site", cell, "stone")
        for agent, part in (("agent_0", wall), ("agent_1", floor))
        for cell in order
        if cell in part
    )
    program = place_builders(Program(placing, tuple(() for _ in placing), ()), world)
    placed = [a.agent for a in program.actions if isinstance(a, PlaceAt)]
    assert placed == ["agent_0", "agent_1"] * 6
    executor = SimExecutor(PRIOR.game)
    executor.reset(world)
    records = executor.run(program, 0, len(program.actions))
    assert len(records) == len(program.actions) and all(r.ok for r in records)


def test_a_builder_walled_in_steps_out_of_the_box_and_its_walk_is_kept_open() -> None:
    """A teammate's block would close the last gap of a ring round a builder: the builder steps out first, and
    the walk out, through the gap, is what it relies on, so on the real clock no teammate's block may close it
    before (``keep_ways_open`` reads it)."""
    ring = {(x, y, z): "stone" for x in range(3) for y in range(3) for z in range(3) if (x, z) != (1, 1)}
    for cell in ((1, 0, 0), (1, 1, 0)):
        del ring[cell]  # the gap, under a lintel
    terrain = Terrain((3, 4, 3), ring)
    inside = _Builder("agent_1", "site", "t1", (1, 0, 1))
    builders = {("agent_1", "site"): inside, ("agent_0", "site"): _Builder("agent_0", "site", "t0", (1, 0, -1))}
    closing = PlaceAt("agent_0", "t0", "site", (1, 0, 0), "stone")
    steps, ways = _out_of_the_way(builders, ("agent_0", "site"), terrain, closing)
    assert [type(step).__name__ for step in steps] == ["StepAside"]
    assert isinstance(steps[0], StepAside) and terrain.outside(steps[0].feet)
    assert {(1, 0, 0), (1, 1, 0), steps[0].feet} <= ways[0].clear
