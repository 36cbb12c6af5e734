"""The executor conformance checks, one function each: effects, failure reporting and which actions run.

:mod:`gencoord.worlds.conformance` runs them by name (``CHECKS``) against any executor.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace

from gencoord.errors import CallOrderError
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.worlds.actions import (
    Action,
    CraftItem,
    Deposit,
    FurnaceCollect,
    FurnaceLoad,
    GiveItem,
    GoTo,
    ObtainBlock,
    PlaceBlock,
    Wait,
    Withdraw,
)
from gencoord.worlds.changes import Changeable, DepleteSource, LoseThrow, RemoveItems
from gencoord.worlds.conformance_fixtures import (
    A,
    B,
    ExpectationError,
    conformance_program,
    conformance_world,
    expect,
    failure_code,
    handoff_actions,
)
from gencoord.worlds.executor import Executor
from gencoord.worlds.spec import AgentSpec, WorldSpec


def reset_reports_the_initial_world(executor: Executor, prior: Prior) -> None:
    snapshot = executor.reset(conformance_world(prior, {A: {"stick": 3}}, contents={"chest_a": {"cobblestone": 5}}))
    expect(snapshot.inventories[A] == {"stick": 3}, f"{A} starts with 3 stick, snapshot says {snapshot.inventories[A]}")
    expect(snapshot.inventories[B] == {}, f"{B} starts empty, snapshot says {snapshot.inventories[B]}")
    expect(snapshot.containers["chest_a"] == {"cobblestone": 5}, "chest_a starts with 5 cobblestone")
    expect(snapshot.containers["order_chest"] == {}, "order_chest starts empty")
    expect(all(items == {} for items in snapshot.sites.values()), "every site starts empty")


def recorded_episode_moves_the_items_it_should(executor: Executor, prior: Prior) -> None:
    executor.reset(conformance_world(prior))
    actions = handoff_actions()
    records = executor.run(conformance_program(actions, {11: (10,)}, handoffs=(10,)), 0, len(actions))
    expect([r.ok for r in records] == [True] * 13, f"all 13 actions succeed, got {[failure_code(r) for r in records]}")
    give = records[10]
    expect(give.inventories[B].get("oak_planks", 0) == 0, "the giver holds no planks after the hand-over")
    expect(give.inventories[A].get("oak_planks") == 8, "the receiver holds 8 planks after the hand-over")
    final = executor.snapshot()
    expect(final.inventories[A] == {"crafting_table": 1, "oak_planks": 4}, f"final {A}: {final.inventories[A]}")
    expect(final.crafted.get(A) == {"crafting_table": 1}, f"{A} is credited with the table it crafted")
    expect(final.discrepancies == (), f"no discrepancies, got {final.discrepancies}")
    expect(all(r.end_s >= r.start_s for r in records), "no action ends before it starts")
    expect(records[11].start_s >= records[10].end_s, "the craft waits for the hand-over it depends on")


def running_in_spans_equals_running_at_once(executor: Executor, prior: Prior) -> None:
    actions = handoff_actions()[9:]  # B already holds the planks: the handoff and the craft
    compiled = conformance_program(actions, {3: (1,)}, handoffs=(1,))
    start = conformance_world(prior, {B: {"oak_planks": 8}})
    executor.reset(start)
    executor.run(compiled, 0, len(actions))
    whole = executor.snapshot()
    executor.reset(start)
    for begin, stop in ((0, 1), (1, 2), (2, len(actions))):
        executor.run(compiled, begin, stop)
    spans = executor.snapshot()
    expected = {A: {"crafting_table": 1, "oak_planks": 4}, B: {}}
    expect(spans.inventories == whole.inventories == expected, f"spans {spans.inventories}, once {whole.inventories}")


def a_failed_action_stops_what_waits_on_it(executor: Executor, prior: Prior) -> None:
    """The failure has a stable code; the giver's later action and the receiver's consumer never
    start; the receiver's independent walk still runs."""
    executor.reset(conformance_world(prior, {B: {"oak_planks": 3}}))
    actions: list[Action] = [
        GoTo(B, "b#1", A, "agent"),
        GiveItem(B, "b#1", A, "oak_planks", 8),
        GoTo(A, "a#1", "order_chest", "ref"),
        GoTo(B, "b#2", "chest_a", "ref"),
        CraftItem(A, "a#2", "crafting_table", 1, "oak_planks", None),
    ]
    records = executor.run(conformance_program(actions, {4: (1,)}), 0, len(actions))
    ran = [r.index for r in records]
    expect(ran == [0, 1, 2], f"the give, its prerequisite and the independent walk run; got {ran}")
    expect(failure_code(records[1]) == Reason.MISSING_ITEMS, f"MISSING_ITEMS, got {failure_code(records[1])}")
    message = "" if records[1].failure is None else records[1].failure.message
    expect("3 oak_planks" in message and "needs 8" in message, f"the message names the numbers: {message!r}")
    expect(records[2].ok, f"the independent walk succeeds, got {failure_code(records[2])}")
    expect(executor.snapshot().inventories[B] == {"oak_planks": 3}, "nothing is half-done")


def a_rejected_handoff_stops_its_consumer(executor: Executor, prior: Prior) -> None:
    """The hook sees the hand-over's inventories; rejecting it stops the consumer like a failure."""
    executor.reset(conformance_world(prior, {B: {"oak_planks": 8}}))
    actions: list[Action] = [
        GoTo(B, "b#1", A, "agent"),
        GiveItem(B, "b#1", A, "oak_planks", 8),
        GoTo(A, "a#1", "crafting_station", "ref"),
        CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station"),
        GoTo(B, "b#2", "chest_a", "ref"),
    ]
    seen: list[tuple[int, int, int]] = []

    def reject(
        index: int,
        before: Mapping[str, Mapping[str, int]],
        after: Mapping[str, Mapping[str, int]],
        delivered: int | None,
    ) -> bool:
        seen.append((index, before.get(A, {}).get("oak_planks", 0), after.get(A, {}).get("oak_planks", 0)))
        return False

    records = executor.run(conformance_program(actions, {3: (1,)}, handoffs=(1,)), 0, len(actions), reject)
    expect(seen == [(1, 0, 8)], f"the hook judges the hand-over once, seeing 0→8 planks; saw {seen}")
    ran = [r.index for r in records]
    expect(ran == [0, 1, 2], f"the consumer and the giver's next action never start; ran {ran}")
    expect(all(r.ok for r in records), f"what ran succeeded, got {[failure_code(r) for r in records]}")
    expect(executor.snapshot().inventories[A] == {"oak_planks": 8}, "nothing was crafted from the rejected items")


def _crowd(prior: Prior, counts: Sequence[int]) -> tuple[WorldSpec, list[str]]:
    """A receiver and one giver per count, on a line at different distances, each holding its planks."""
    givers = [f"giver_{i + 1}" for i in range(len(counts))]
    xs = [2 * i - len(counts) + 1 for i in range(len(counts))]  # -7, -5, ... 7 for eight: every walk a different length
    agents = (
        AgentSpec(A, (0.0, 64.0, 3.0), {}),
        *(AgentSpec(g, (float(x), 64.0, 7.0), {"oak_planks": n}) for g, x, n in zip(givers, xs, counts, strict=True)),
    )
    return WorldSpec(agents, dict(prior.default_episode.refs), {}), givers


def _overlapping(executor: Executor, prior: Prior, counts: Sequence[int], seed: int, lost: int | None) -> None:
    """Every giver walks to the receiver and throws at once; the receiver's craft waits for all of them."""
    world, givers = _crowd(prior, counts)
    executor.reset(world)
    order = list(range(len(givers)))
    random.Random(seed).shuffle(order)  # the program lists the givers in any order
    actions: list[Action] = []
    gives: dict[int, int] = {}  # action index → giver number
    for number in order:
        actions.append(GoTo(givers[number], f"g{number}#1", A, "agent"))
        gives[len(actions)] = number
        actions.append(GiveItem(givers[number], f"g{number}#1", A, "oak_planks", counts[number]))
    total = sum(counts)
    actions.append(CraftItem(A, "a#1", "stick", total // 2, "oak_planks", None))
    program = conformance_program(actions, {len(actions) - 1: tuple(gives)}, handoffs=tuple(gives))
    credited: dict[int, int] = {}

    def own(
        index: int,
        before: Mapping[str, Mapping[str, int]],
        after: Mapping[str, Mapping[str, int]],
        delivered: int | None,
    ) -> bool:
        change = after.get(A, {}).get("oak_planks", 0) - before.get(A, {}).get("oak_planks", 0)
        credited[index] = change if delivered is None else delivered
        return credited[index] >= counts[gives[index]]

    if lost is not None:
        assert isinstance(executor, Changeable)
        executor.change(LoseThrow(givers[lost]))
    records = {r.index: r for r in executor.run(program, 0, len(actions), own)}
    expected = {index: 0 if number == lost else counts[number] for index, number in gives.items()}
    expect(
        credited == expected, f"each hand-over credits only its own planks: expected {expected}, credited {credited}"
    )
    craft = len(actions) - 1
    if lost is None:
        expect(
            all(r.ok for r in records.values()),
            f"every action succeeds: {[failure_code(r) for r in records.values()]}",
        )
        sticks = executor.snapshot().inventories[A].get("stick", 0)
        expect(sticks == 4 * (total // 2), f"the receiver crafted from all {total} planks: {sticks} sticks")
        expect(records[craft].start_s >= max(records[i].end_s for i in gives), "the craft starts after every hand-over")
        return
    failed = [index for index, record in records.items() if not record.ok]
    named = [index for index, number in gives.items() if number == lost]
    expect(failed == named, f"exactly the lost hand-over fails: failed {failed}, lost {named}")
    expect(craft not in records, "the consumer of a lost hand-over never starts")


def overlapping_handoffs_are_each_their_own(executor: Executor, prior: Prior) -> None:
    """k = 2, 5 and 8 givers hand one item to one receiver at once, listed in any order: each
    hand-over is credited with its own items only (the world's attribution, or counts that no
    other delivery moved), and the receiver's craft starts once all of them have landed."""
    for seed, counts in enumerate(([3, 1], [2, 1, 4, 1, 2], [1, 2, 3, 1, 1, 2, 3, 1])):
        _overlapping(executor, prior, counts, seed, lost=None)


def a_lost_overlapping_handoff_fails_alone(executor: Executor, prior: Prior) -> None:
    """One of four overlapping hand-overs is lost in flight: that one, and only that one, is not
    credited and fails; the others land; the consumer never starts. Asked of a world that can change."""
    if isinstance(executor, Changeable):
        _overlapping(executor, prior, [2, 1, 3, 2], seed=7, lost=2)


def agents_work_at_once(executor: Executor, prior: Prior) -> None:
    """Two agents with nothing between them: each one's work overlaps the other's in time."""
    executor.reset(conformance_world(prior, {A: {"cobblestone": 2}}))
    actions: list[Action] = [
        GoTo(A, "a#1", "chest_a", "ref"),
        Deposit(A, "a#1", "chest_a", "cobblestone", 2),
        GoTo(B, "b#1", "lumber_yard", "ref"),
        ObtainBlock(B, "b#1", "lumber_yard", "oak_planks"),
    ]
    records = executor.run(conformance_program(actions), 0, len(actions))
    expect(all(r.ok for r in records), f"every action succeeds, got {[failure_code(r) for r in records]}")
    a_ends, b_starts = records[1].end_s, records[2].start_s
    expect(b_starts < a_ends, f"{B} starts ({b_starts:.2f} s) before {A} has finished ({a_ends:.2f} s)")
    final = executor.snapshot()
    expect(final.containers["chest_a"] == {"cobblestone": 2}, f"chest_a: {final.containers['chest_a']}")
    expect(final.inventories[B] == {"oak_planks": 1}, f"{B}: {final.inventories[B]}")


def missing_ingredient_and_no_recipe_are_different_failures(executor: Executor, prior: Prior) -> None:
    go = GoTo(A, "a#1", "crafting_station", "ref")
    executor.reset(conformance_world(prior, {A: {"oak_planks": 2}}))
    table = CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station")
    short = executor.run(conformance_program([go, table]), 0, 2)
    executor.reset(conformance_world(prior, {A: {"oak_planks": 2}}))
    axe = CraftItem(A, "a#1", "stone_axe", 1, "oak_planks", "crafting_station")
    nonsense = executor.run(conformance_program([go, axe]), 0, 2)
    expect(len(short) == 2 and len(nonsense) == 2, "both crafts are attempted")
    short_failure, nonsense_failure = short[1].failure, nonsense[1].failure
    expect(
        short_failure is not None
        and (short_failure.code, short_failure.message)
        == (Reason.MISSING_INGREDIENT, "missing ingredient: 2 oak_planks"),
        f"a short craft is MISSING_INGREDIENT naming the shortfall, got {short_failure}",
    )
    expect(
        nonsense_failure is not None
        and nonsense_failure.code == Reason.NO_RECIPE
        and "stone_axe" in nonsense_failure.message,
        f"a craft with no recipe from these items is NO_RECIPE, got {nonsense_failure}",
    )


def deposits_withdrawals_and_placements_show_in_ground_truth(executor: Executor, prior: Prior) -> None:
    executor.reset(conformance_world(prior, {A: {"cobblestone": 6}}, contents={"chest_b": {"stick": 4}}))
    actions: list[Action] = [
        GoTo(A, "a#1", "chest_a", "ref"),
        Deposit(A, "a#1", "chest_a", "cobblestone", 4),
        GoTo(A, "a#2", "site_a", "ref"),
        PlaceBlock(A, "a#2", "site_a", "cobblestone"),
        PlaceBlock(A, "a#2", "site_a", "cobblestone"),
        GoTo(A, "a#3", "chest_b", "ref"),
        Withdraw(A, "a#3", "chest_b", "stick", 4),
    ]
    records = executor.run(conformance_program(actions), 0, len(actions))
    expect(all(r.ok for r in records), f"every action succeeds, got {[failure_code(r) for r in records]}")
    final = executor.snapshot()
    expect(final.containers["chest_a"] == {"cobblestone": 4}, f"chest_a: {final.containers['chest_a']}")
    expect(final.containers["chest_b"] == {}, f"chest_b: {final.containers['chest_b']}")
    expect(final.sites["site_a"] == {"cobblestone": 2}, f"site_a: {final.sites['site_a']}")
    expect(final.inventories[A] == {"stick": 4}, f"{A}: {final.inventories[A]}")
    expect(final.credits.get("site_a", {}).get(A) == {"cobblestone": 2}, "site_a credits the placer")
    expect(final.credits.get("chest_a", {}).get(A) == {"cobblestone": 4}, "chest_a credits the depositor")


def acting_out_of_reach_fails(executor: Executor, prior: Prior) -> None:
    executor.reset(conformance_world(prior, {A: {"cobblestone": 1}}))
    records = executor.run(conformance_program([Deposit(A, "a#1", "depot_chest", "cobblestone", 1)]), 0, 1)
    expect(len(records) == 1 and failure_code(records[0]) == Reason.OUT_OF_REACH, "a deposit from afar is OUT_OF_REACH")


def a_giver_follows_a_receiver_that_moved_on(executor: Executor, prior: Prior) -> None:
    """The receiver walked off after the giver came up to it (to dig, to a station): the giver
    walks up to it again and hands over, as a player would; the stack is not thrown into the void."""
    executor.reset(conformance_world(prior, {B: {"oak_planks": 4}}))
    actions: list[Action] = [
        GoTo(B, "b#1", A, "agent"),
        GoTo(A, "a#1", "depot_chest", "ref"),
        GiveItem(B, "b#1", A, "oak_planks", 4),
    ]
    records = executor.run(conformance_program(actions, {1: (0,), 2: (1,)}, handoffs=(2,)), 0, len(actions))
    expect([r.ok for r in records] == [True] * 3, f"every action succeeds, got {[failure_code(r) for r in records]}")
    final = executor.snapshot()
    expect(final.inventories[A] == {"oak_planks": 4}, f"{A} holds the 4 planks, has {final.inventories[A]}")


def a_workcell_refuses_what_its_mode_forbids(executor: Executor, prior: Prior) -> None:
    executor.reset(conformance_world(prior, {B: {"oak_planks": 2}}, forbidden={B: frozenset({"craft_item"})}))
    records = executor.run(conformance_program([CraftItem(B, "b#1", "stick", 1, "oak_planks", None)]), 0, 1)
    expect(
        len(records) == 1 and failure_code(records[0]) == Reason.WORKCELL_CANNOT, "a forbidden craft is WORKCELL_CANNOT"
    )


def a_refused_transfer_moves_nothing(executor: Executor, prior: Prior) -> None:
    full = {"chest_a": {"dirt": 27 * 64}}
    executor.reset(conformance_world(prior, {A: {"cobblestone": 4}}, contents=full))
    actions: list[Action] = [GoTo(A, "a#1", "chest_a", "ref"), Deposit(A, "a#1", "chest_a", "cobblestone", 4)]
    records = executor.run(conformance_program(actions), 0, 2)
    expect(len(records) == 2 and failure_code(records[1]) == Reason.NO_SPACE, "a deposit into a full chest is NO_SPACE")
    after = executor.snapshot()
    expect(after.inventories[A] == {"cobblestone": 4}, "the depositor keeps its items")
    expect(after.containers["chest_a"] == {"dirt": 27 * 64}, "the full chest is unchanged")


def a_furnace_smelts_at_vanilla_speed(executor: Executor, prior: Prior) -> None:
    """Input and fuel go in, the smelted item comes out after 200 ticks (10 s); wrong loads are refused."""
    executor.reset(conformance_world(prior, {A: {"raw_iron": 2, "oak_planks": 1, "stick": 1}}))
    actions: list[Action] = [
        GoTo(A, "a#1", "furnace_station", "ref"),
        FurnaceLoad(A, "a#1", "furnace_station", "input", "stick", 1),
        FurnaceLoad(A, "a#1", "furnace_station", "input", "raw_iron", 1),
        FurnaceLoad(A, "a#1", "furnace_station", "fuel", "oak_planks", 1),
        FurnaceCollect(A, "a#1", "furnace_station", "iron_ingot", 2),
        FurnaceCollect(A, "a#1", "furnace_station", "iron_ingot", 1),
    ]
    records = [executor.run(conformance_program(actions), i, i + 1)[0] for i in range(len(actions))]
    codes = [failure_code(r) for r in records]
    expected = [None, "NOT_SMELTABLE", None, None, "FURNACE_SHORT", None]
    expect(codes == expected, f"walk, stick refused, load, fuel, two asked of one, collect: {codes}")
    smelted = records[5].end_s - records[3].end_s
    expect(smelted >= 9.5, f"one item smelts in 10 s (200 ticks); collected {smelted:.1f} s after the fuel went in")
    final = executor.snapshot().inventories[A]
    expect(final == {"iron_ingot": 1, "raw_iron": 1, "stick": 1}, f"{A} after smelting: {final}")


def changes_show_in_the_world(executor: Executor, prior: Prior) -> None:
    """For a world that can change mid-run (the gate's anomalies): each change has its effect.

    A blocked route turns a direct walk away and lets a detour in; a taken station refuses to
    craft and says how long to wait, then serves; a dug-out source yields nothing; lost items
    are gone. An executor that cannot change is not asked (it refuses such episodes instead).
    """
    if not isinstance(executor, Changeable):
        return
    start = conformance_world(prior, {A: {"oak_planks": 4, "stick": 5}})
    executor.reset(replace(start, blocked=frozenset({"crafting_station"}), busy_until={"crafting_station": 8.0}))
    actions: list[Action] = [
        GoTo(A, "a#1", "crafting_station", "ref"),
        GoTo(A, "a#1", "crafting_station", "ref", detour=True),
        CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station"),
        Wait(A, "a#1", 180),
        CraftItem(A, "a#1", "crafting_table", 1, "oak_planks", "crafting_station"),
    ]
    records = [executor.run(conformance_program(actions), i, i + 1)[0] for i in range(len(actions))]
    codes = [failure_code(r) for r in records]
    expect(
        codes == [Reason.PATH_BLOCKED, None, Reason.STATION_BUSY, None, None],
        f"blocked, detour, busy, wait, craft: {codes}",
    )
    busy = records[2].failure
    expect(busy is not None and (busy.retry_after_s or 0) > 0, f"a busy station says how long to wait: {busy}")
    executor.change(DepleteSource("lumber_yard"))
    executor.change(RemoveItems(A, "stick", 2))
    go, dig = GoTo(B, "b#1", "lumber_yard", "ref"), ObtainBlock(B, "b#1", "lumber_yard", "oak_planks")
    dug = executor.run(conformance_program([go, dig]), 0, 2)
    expect([failure_code(r) for r in dug] == [None, Reason.SOURCE_EXHAUSTED], f"a dug-out source: {dug}")
    after = executor.snapshot()
    expect(after.inventories[A] == {"crafting_table": 1, "stick": 3}, f"2 of 5 sticks lost: {after.inventories[A]}")
    executor.reset(start)  # a new episode: no wall, no busy station
    [walk] = executor.run(conformance_program([GoTo(A, "a#1", "crafting_station", "ref")]), 0, 1)
    expect(walk.ok, f"the next episode's world has no wall: {failure_code(walk)}")


def misuse_is_a_typed_error(executor: Executor, prior: Prior) -> None:
    """After ``close``, ``run`` and ``snapshot`` fail with CALL_ORDER, not with whatever breaks inside."""
    executor.close()
    for name, call in (("snapshot", executor.snapshot), ("run", lambda: executor.run(conformance_program([]), 0, 0))):
        try:
            call()
        except CallOrderError as error:
            expect(error.reason == Reason.NOT_RESET, f"{name} before reset: reason NOT_RESET, got {error.reason}")
        except Exception as error:  # the check's point: anything else is the violation
            raise ExpectationError(f"{name} before reset raised {type(error).__name__}, not CallOrderError") from None
        else:
            raise ExpectationError(f"{name} before reset did not fail")
