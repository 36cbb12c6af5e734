"""The construction planner: who places which cell, in which order, and which materials change hands.

Every draft is a Short DSL commitment: per agent, the hand-overs it makes, then one
``build.place`` task whose cell list (``dsl/cells.py``) is its placement order. Drafts:

* **own** — every cell goes to an agent that holds its block, split by how many each
  holds and, within a block, by position (each agent takes a contiguous stretch along x),
  so nothing changes hands;
* **balanced** — from *own*, the most loaded builder hands blocks of the material it has
  most cells of to the least loaded one, with those cells nearest the receiver's, until
  the loads are within a few blocks of each other.

Each agent places in support order (``worlds/placing.py``: level by level, overhangs out
from what stands) and, within a rank, in a row-by-row sweep. Every draft is dry-run on the
simulator from the lead's view of the bags and the least makespan wins. Whether the team
can build the blueprint at all is judged first, naming what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.dsl.cells import Cell, Placement, format_cells
from gencoord.planning.planner import dry_run
from gencoord.prior.prior import Prior
from gencoord.tasks.blueprint import score_build
from gencoord.tasks.build import BuildTask
from gencoord.tasks.world import BUILD_SITE, build_world
from gencoord.worlds.placing import needs_floor, offset, support_ranks, two_high

BUILD_SKILL = "build.place"
GIVE_SKILL = "resource.deliver"
BALANCE_GAP = 4
"""Blocks of load difference a hand-over is drafted to close (a hand-over costs about as much as 8 placements)."""
MAX_GIFTS = 3
"""Hand-overs one giver makes in a draft: its path stays short, and each gift is one material."""


@dataclass(frozen=True, slots=True)
class BuildVerdict:
    feasible: bool
    code: str | None  # MISSING_MATERIALS, UNSUPPORTED_CELL, NO_BUILDER
    reason: str


@dataclass(frozen=True, slots=True)
class BuildPlan:
    proposal: Proposal
    makespan_s: float | None  # the dry run's finish on the simulator; None when no draft succeeded there
    draft: str  # own or balanced


def placements(task: BuildTask) -> dict[Cell, str]:
    """The cells an agent places (a door's upper half comes with its lower half)."""
    blocks = task.blueprint.blocks()
    return {
        cell: block
        for cell, block in blocks.items()
        if not (two_high(block) and blocks.get(offset(cell, (0, -1, 0))) == block)
    }


def builders(task: BuildTask) -> list[str]:
    return [agent.name for agent in task.agents if BUILD_SKILL not in agent.blocked]


def judge_build(task: BuildTask) -> BuildVerdict:
    """Whether the team can build the blueprint from what it holds, before any action."""
    wanted = placements(task)
    needs: dict[str, int] = {}
    for block in wanted.values():
        needs[block] = needs.get(block, 0) + 1
    held = task.holdings()
    short = [
        f"{n} {block} needed, {held.get(block, 0)} held" for block, n in sorted(needs.items()) if held.get(block, 0) < n
    ]
    if short:
        return BuildVerdict(False, "MISSING_MATERIALS", "too few materials across the team: " + "; ".join(short))
    ranks = support_ranks(task.blueprint.blocks())
    floating = sorted((cell for cell in task.blueprint.blocks() if cell not in ranks), key=lambda c: (c[1], c[2], c[0]))
    if floating:
        x, y, z = floating[0]
        block = task.blueprint.blocks()[floating[0]]
        why = (
            f"a {block} stands only on a block below it"
            if needs_floor(block)
            else "no block below or beside it is in the blueprint, nor beside those"
        )
        return BuildVerdict(
            False,
            "UNSUPPORTED_CELL",
            f"{len(floating)} of the blueprint's cells cannot be placed, first {block} at offset {x},{y},{z}: "
            f"{why} (scaffolding is not planned)",
        )
    if not builders(task):
        return BuildVerdict(False, "NO_BUILDER", f"every agent blocks {BUILD_SKILL}: nobody may place blocks")
    givers = {a.name for a in task.agents if GIVE_SKILL not in a.blocked}
    can_build = set(builders(task))
    for block, n in sorted(needs.items()):
        usable = sum(a.inventory.get(block, 0) for a in task.agents if a.name in can_build or a.name in givers)
        if usable < n:
            return BuildVerdict(
                False,
                "MISSING_MATERIALS",
                f"{n} {block} needed; only {usable} are held by agents that may place or hand them over",
            )
    return BuildVerdict(True, None, "")


def _sweep(cell: Cell, rank: tuple[int, int]) -> tuple[int, int, int, int]:
    """Support rank first, then row by row, alternating direction, so a builder walks little."""
    x, _, z = cell
    return (*rank, z, x if z % 2 == 0 else -x)


def _own(task: BuildTask, wanted: dict[Cell, str]) -> dict[str, list[Cell]]:
    """Each block's cells split over the builders that hold it, by count, in stretches along x."""
    can_build = builders(task)
    shares: dict[str, list[Cell]] = {name: [] for name in can_build}
    by_block: dict[str, list[Cell]] = {}
    for cell, block in wanted.items():
        by_block.setdefault(block, []).append(cell)
    for block, unsorted in sorted(by_block.items()):
        cells = sorted(unsorted, key=lambda c: (c[0], c[2], c[1]))
        holders = [
            (a.name, a.inventory.get(block, 0)) for a in task.agents if a.name in shares and a.inventory.get(block, 0)
        ]
        pooled = sum(n for _, n in holders)
        left = len(cells)
        for index, (name, held) in enumerate(holders):
            take = left if index == len(holders) - 1 else min(held, left, math.ceil(len(cells) * held / max(pooled, 1)))
            take = min(take, held)
            shares[name] += cells[:take]
            cells = cells[take:]
            left -= take
        if cells:  # held only by agents that may not build: it is handed to the first builder
            shares[can_build[0]] += cells
    return shares


def _centre(cells: list[Cell]) -> tuple[float, float]:
    if not cells:
        return (0.0, 0.0)
    return (sum(c[0] for c in cells) / len(cells), sum(c[2] for c in cells) / len(cells))


def _balanced(
    task: BuildTask, wanted: dict[Cell, str], shares: dict[str, list[Cell]]
) -> tuple[dict[str, list[Cell]], list[tuple[str, str, str, int]]]:
    """``shares`` evened out by hand-overs (giver, receiver, block, count) from the most to the least loaded."""
    shares = {name: list(cells) for name, cells in shares.items()}
    givers = {a.name for a in task.agents if GIVE_SKILL not in a.blocked}
    gifts: list[tuple[str, str, str, int]] = []
    made: dict[str, int] = {}
    for _ in range(MAX_GIFTS * len(shares)):
        order = sorted(shares, key=lambda name: (len(shares[name]), name))
        light, heavy = order[0], order[-1]
        gap = len(shares[heavy]) - len(shares[light])
        if gap <= BALANCE_GAP or heavy not in givers or made.get(heavy, 0) >= MAX_GIFTS:
            break
        counts: dict[str, int] = {}
        for cell in shares[heavy]:
            counts[wanted[cell]] = counts.get(wanted[cell], 0) + 1
        block = max(sorted(counts), key=lambda b: counts[b])
        moved = min(gap // 2, counts[block])
        cx, cz = _centre(shares[light]) if shares[light] else _centre(shares[heavy])
        pool = sorted(
            (cell for cell in shares[heavy] if wanted[cell] == block),
            key=lambda c: ((c[0] - cx) ** 2 + (c[2] - cz) ** 2, c),
        )[:moved]
        chosen = set(pool)
        shares[heavy] = [cell for cell in shares[heavy] if cell not in chosen]
        shares[light] += pool
        gifts.append((heavy, light, block, moved))
        made[heavy] = made.get(heavy, 0) + 1
    return shares, gifts


def _task(skill: str, prior: Prior, **args: str | int) -> Task:
    return Task(skill, prior.vocab.canonical_args(skill, args))


def _paths(
    task: BuildTask,
    wanted: dict[Cell, str],
    shares: dict[str, list[Cell]],
    gifts: list[tuple[str, str, str, int]],
    prior: Prior,
) -> dict[str, list[Task]]:
    ranks = support_ranks(task.blueprint.blocks())
    bags = {agent.name: dict(agent.inventory) for agent in task.agents}
    paths: dict[str, list[Task]] = {agent.name: [] for agent in task.agents}
    received: dict[str, dict[str, int]] = {}
    for giver, receiver, block, count in gifts:
        paths[giver].append(_task(GIVE_SKILL, prior, q=count, item=block, to=receiver))
        received.setdefault(receiver, {})[block] = received.get(receiver, {}).get(block, 0) + count
    for name, cells in shares.items():  # a builder short of what its cells use is handed the rest
        uses: dict[str, int] = {}
        for cell in cells:
            uses[wanted[cell]] = uses.get(wanted[cell], 0) + 1
        for block, n in sorted(uses.items()):
            short = n - bags[name].get(block, 0) - received.get(name, {}).get(block, 0)
            donors = [d for d in sorted(bags, key=lambda d: -bags[d].get(block, 0)) if d != name]
            for donor in donors:
                if short <= 0:
                    break
                spare = bags[donor].get(block, 0) - sum(1 for c in shares.get(donor, []) if wanted[c] == block)
                spare -= sum(count for g, _, b, count in gifts if g == donor and b == block)
                give = min(short, spare)
                if give > 0:
                    paths[donor].insert(0, _task(GIVE_SKILL, prior, q=give, item=block, to=name))
                    gifts.append((donor, name, block, give))
                    short -= give
    for name, cells in shares.items():
        if cells:
            ordered: list[Placement] = [(wanted[c], c) for c in sorted(cells, key=lambda c: _sweep(c, ranks[c]))]
            paths[name].append(_task(BUILD_SKILL, prior, q=len(ordered), cells=format_cells(ordered), site=BUILD_SITE))
    return paths


def _proposal(paths: dict[str, list[Task]], lead: str) -> Proposal:
    own: Path = tuple(paths.get(lead, ()))
    requests = tuple(
        PeerRequest(agent, tuple(tasks)) for agent, tasks in sorted(paths.items()) if agent != lead and tasks
    )
    return Proposal(own, requests)


def build_makespan(task: BuildTask, proposal: Proposal, lead: str, prior: Prior) -> float | None:
    """The simulated finish of ``proposal`` from ``task``'s bags; None when it fails or leaves a mismatch."""
    episode, world = build_world(task)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    final = dry_run(proposal, lead, holdings, episode, world, prior)
    if final is None:
        return None
    built = score_build(task.blueprint.relative(), final.blocks.get(BUILD_SITE, {}))
    return final.clock_s if built.success else None


def plan_build(task: BuildTask, lead: str, prior: Prior) -> BuildPlan:
    """The least-makespan draft of those above (``own`` when the dry runs tie or all fail)."""
    wanted = placements(task)
    own = _own(task, wanted)
    drafts = {"own": _proposal(_paths(task, wanted, own, [], prior), lead)}
    balanced, gifts = _balanced(task, wanted, own)
    if gifts:
        drafts["balanced"] = _proposal(_paths(task, wanted, balanced, gifts, prior), lead)
    timed = {name: build_makespan(task, proposal, lead, prior) for name, proposal in drafts.items()}
    finished = {name: seconds for name, seconds in timed.items() if seconds is not None}
    best = min(finished, key=lambda name: (finished[name], name != "own")) if finished else "own"
    return BuildPlan(drafts[best], finished.get(best), best)


def alone_makespan(task: BuildTask, builder: str, prior: Prior) -> float | None:
    """One agent building everything, every teammate handing it what it holds first: the team's yardstick."""
    wanted = placements(task)
    paths = _paths(task, wanted, {builder: list(wanted)}, [], prior)
    return build_makespan(task, _proposal(paths, builder), builder, prior)
