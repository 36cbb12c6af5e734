"""The construction planner: who places which cell, in which order, and which materials change hands.

Every draft is a Short DSL commitment: per agent, the hand-overs it makes, then one
``build.place`` task. Every agent holds the blueprint (as MINDcraft gives it), so the task
names the agent's **share** of it, a few bytes per material (``dsl/cells.py``); the per-cell
form, ``cells``, spells out every cell for a blueprint one side does not hold. Drafts:

* **own** — every cell goes to an agent that holds its block, split by how many each
  holds and, within a block, by position (each agent takes a contiguous stretch along x),
  so nothing changes hands;
* **regions** — every cell, whatever its block, split into equal stretches along x, one per
  builder, so each builds its columns from the ground up and waits on a teammate only at
  the seams (with *own*, each material splits on its own, and a block often rests on a
  teammate's block of another material: on MINDcraft's 4- and 5-agent houses builders
  idled more than half the time, waiting for it); what a stretch uses beyond its builder's
  bag is handed over first;
* **alone** — only when none of those builds on the dry run (builders in each other's
  way): the lead places everything, handed what the others hold.

Parts of the blueprint that touch nothing standing get **scaffolding** (``worlds/placing.py``):
temporary blocks of what the team holds spare (the dirt MINDcraft gives), placed by the
builder of the cell they hold up, in the blueprint's support order, and broken again by the
same builder at the end of its task. Each agent places in that support order (any face, the
underside of a block above included, across levels), row by row within a rank. Every draft
is dry-run on the simulator from the lead's view of the bags and the least makespan wins.
Whether the team can build the blueprint at all is judged first, naming what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.dsl.cells import TEMPORARY, Cell, Placement, format_cells, format_share
from gencoord.planning.planner import dry_run
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.blueprint import AIR, score_build
from gencoord.tasks.build import BuildTask
from gencoord.tasks.world import BUILD_SITE, build_world
from gencoord.worlds.placing import (
    ABOVE,
    Scaffolding,
    build_order,
    cells_by_block,
    offset,
    placed_cells,
    plan_scaffold,
    two_high,
)

BUILD_SKILL = "build.place"
GIVE_SKILL = "resource.deliver"
SCAFFOLD_BLOCKS = ("dirt", "coarse_dirt", "netherrack")
"""Blocks a team builds scaffolding of: cheap, quick to break by hand, and they do not fall."""

CellForm = Literal["share", "cells"]


@dataclass(frozen=True, slots=True)
class Unbuildable:
    """A blueprint cell no build can fill as asked, and why: the rest is built and the check counts it."""

    cell: Cell
    block: str
    why: str

    def describe(self) -> str:
        x, y, z = self.cell
        return f"{self.block} at offset {x},{y},{z}: {self.why}"


@dataclass(frozen=True, slots=True)
class BuildVerdict:
    """Whether the team can build; a feasible verdict with ``UNSUPPORTED_CELL`` builds all but ``unbuildable``."""

    feasible: bool
    code: Reason | None  # MISSING_MATERIALS, NO_BUILDER; UNSUPPORTED_CELL when feasible but not every cell
    reason: str
    unbuildable: tuple[Unbuildable, ...] = ()


@dataclass(frozen=True, slots=True)
class BuildPlan:
    proposal: Proposal
    makespan_s: float | None  # the dry run's finish on the simulator; None when no draft succeeded there
    draft: str  # own, regions, or alone (one builder: the fallback when the team's drafts fail on the dry run)
    scaffolding: int = 0  # temporary blocks placed (and broken again)


def unbuildable(task: BuildTask) -> tuple[Unbuildable, ...]:
    """The cells vanilla cannot hold as the blueprint asks, first by level.

    MINDcraft's generator leaves a carpet over air now and then (a room's floor carved out
    under it), or a door whose upper half the blueprint fills with a wall block. Vanilla
    drops a carpet once the block under it goes, and a door takes both its cells, so such a
    cell costs one mismatch whatever is built: it is left out, and the rest is built.
    """
    blocks = task.blueprint.blocks()
    found = [
        Unbuildable(
            cell,
            blocks[cell],
            f"it fills the cell above it too, where the blueprint wants {blocks.get(offset(cell, ABOVE), AIR)}",
        )
        for cell in placed_cells(blocks)
        if two_high(blocks[cell]) and blocks.get(offset(cell, ABOVE)) != blocks[cell]
    ]
    found += [
        Unbuildable(
            cell,
            blocks[cell],
            "it stands only on a block below it, and the blueprint leaves that cell empty "
            "(vanilla drops it once the block under it is broken)",
        )
        for cell in scaffolding(task).stranded
    ]
    return tuple(sorted(found, key=lambda u: (u.cell[1], u.cell[2], u.cell[0])))


def placements(task: BuildTask) -> dict[Cell, str]:
    """The cells an agent places: a door's upper half comes with its lower half, and no unbuildable cell."""
    blocks = task.blueprint.blocks()
    skipped = {u.cell for u in unbuildable(task)}
    return {cell: blocks[cell] for cell in placed_cells(blocks) if cell not in skipped}


def scaffolding(task: BuildTask) -> Scaffolding:
    """The temporary blocks the blueprint needs, as every agent derives them."""
    return plan_scaffold(task.blueprint.blocks(), task.blueprint.size())


def scaffold_block(task: BuildTask, count: int) -> str | None:
    """What the team builds ``count`` scaffolding blocks of: the scaffold block it holds most spare of."""
    if not count:
        return SCAFFOLD_BLOCKS[0]
    needs, held = task.blueprint.needs(), task.holdings()
    spare = {block: held.get(block, 0) - needs.get(block, 0) for block in SCAFFOLD_BLOCKS}
    best = max(SCAFFOLD_BLOCKS, key=lambda block: spare[block])
    return best if spare[best] >= count else None


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
        return BuildVerdict(False, Reason.MISSING_MATERIALS, "too few materials across the team: " + "; ".join(short))
    scaffold = scaffolding(task)
    if scaffold_block(task, len(scaffold.cells)) is None:
        spare = ", ".join(f"{block} {max(0, held.get(block, 0) - needs.get(block, 0))}" for block in SCAFFOLD_BLOCKS)
        return BuildVerdict(
            False,
            Reason.MISSING_MATERIALS,
            f"{len(scaffold.cells)} scaffolding blocks needed (of {' or '.join(SCAFFOLD_BLOCKS)}); "
            f"the team holds spare {spare}",
        )
    if not builders(task):
        return BuildVerdict(False, Reason.NO_BUILDER, f"every agent blocks {BUILD_SKILL}: nobody may place blocks")
    givers = {a.name for a in task.agents if GIVE_SKILL not in a.blocked}
    can_build = set(builders(task))
    for block, n in sorted(needs.items()):
        usable = sum(a.inventory.get(block, 0) for a in task.agents if a.name in can_build or a.name in givers)
        if usable < n:
            return BuildVerdict(
                False,
                Reason.MISSING_MATERIALS,
                f"{n} {block} needed; only {usable} are held by agents that may place or hand them over",
            )
    skipped = unbuildable(task)
    if skipped:
        cells = len(task.blueprint.blocks())
        return BuildVerdict(
            True,
            Reason.UNSUPPORTED_CELL,
            f"{len(skipped)} of {cells} cells cannot be built as the blueprint asks, so it scores at most "
            f"{1 - len(skipped) / max(cells, 1):.3f}; the rest is built. First: {skipped[0].describe()}",
            skipped,
        )
    return BuildVerdict(True, None, "")


def _own(task: BuildTask, wanted: dict[Cell, str], scaffold: Scaffolding, material: str) -> dict[str, list[Cell]]:
    """Each block's cells split over the builders that hold it, by count, in stretches along x.

    Each scaffolding path goes to the builder of the cell it holds up.
    """
    can_build = builders(task)
    shares: dict[str, list[Cell]] = {name: [] for name in can_build}
    owner: dict[Cell, str] = {}
    for block, pooled_cells in sorted(cells_by_block(wanted).items()):
        cells = pooled_cells
        holders = [
            (a.name, a.inventory.get(block, 0)) for a in task.agents if a.name in shares and a.inventory.get(block, 0)
        ]
        pooled = sum(n for _, n in holders)
        left, total = len(cells), len(cells)
        for index, (name, held) in enumerate(holders):
            take = left if index == len(holders) - 1 else min(held, left, math.ceil(total * held / max(pooled, 1)))
            take = min(take, held)
            shares[name] += cells[:take]
            owner.update(dict.fromkeys(cells[:take], name))
            cells = cells[take:]
            left -= take
        if cells:  # held only by agents that may not build: it is handed to the first builder
            shares[can_build[0]] += cells
            owner.update(dict.fromkeys(cells, can_build[0]))
    for path, served in zip(scaffold.paths, scaffold.serves, strict=True):
        builder = owner.get(served, can_build[0])
        shares[builder] += path
        wanted.update(dict.fromkeys(path, TEMPORARY + material))
    return shares


def _regions(task: BuildTask, wanted: dict[Cell, str], scaffold: Scaffolding, material: str) -> dict[str, list[Cell]]:
    """The blueprint's cells, whatever their block, split into equal stretches along x, one per builder.

    Each builder's columns are its own from the ground up, so a block rests on its own
    builder's block below and nobody waits on a teammate but at the stretches' seams; what
    a builder's stretch uses beyond its bag is handed over first (``_paths``). Each
    scaffolding path goes to the builder of the cell it holds up.
    """
    can_build = builders(task)
    columns: dict[tuple[int, int], list[Cell]] = {}
    for cell in sorted(wanted, key=lambda cell: (cell[0], cell[2], cell[1])):
        columns.setdefault((cell[0], cell[2]), []).append(cell)
    shares: dict[str, list[Cell]] = {name: [] for name in can_build}
    owner: dict[Cell, str] = {}
    passed = 0
    for column in columns.values():  # a whole column to one builder: the stretch its middle falls in
        name = can_build[min(len(can_build) - 1, (2 * passed + len(column)) * len(can_build) // (2 * len(wanted)))]
        shares[name] += column
        owner.update(dict.fromkeys(column, name))
        passed += len(column)
    for path, served in zip(scaffold.paths, scaffold.serves, strict=True):
        shares[owner.get(served, can_build[0])] += path
        wanted.update(dict.fromkeys(path, TEMPORARY + material))
    return shares


def _task(skill: str, prior: Prior, **args: str | int) -> Task:
    return Task(skill, prior.vocab.canonical_args(skill, args))


def _build_task(task: BuildTask, wanted: dict[Cell, str], cells: list[Cell], form: CellForm, prior: Prior) -> Task:
    """One agent's ``build.place``: its share of the blueprint, or its cells spelled out, in build order."""
    blocks = task.blueprint.blocks()
    temporary = [cell for cell in scaffolding(task).cells]
    mine = set(cells)
    if form == "cells":
        ordered: list[Placement] = [(wanted[c], c) for c in build_order(blocks, temporary) if c in mine]
        return _task(BUILD_SKILL, prior, q=len(ordered), cells=format_cells(ordered), site=BUILD_SITE)
    indices: dict[str, list[int]] = {}
    for block, pool in cells_by_block(blocks).items():
        indices[block] = [index for index, cell in enumerate(pool) if cell in mine]
    for index, cell in enumerate(temporary):
        if cell in mine:
            indices.setdefault(wanted[cell], []).append(index)
    share = format_share({block: found for block, found in indices.items() if found})
    return _task(BUILD_SKILL, prior, q=len(mine), share=share, site=BUILD_SITE)


def _paths(
    task: BuildTask, wanted: dict[Cell, str], shares: dict[str, list[Cell]], prior: Prior, form: CellForm
) -> dict[str, list[Task]]:
    """Each agent's path: what it hands over (first), then its ``build.place`` of its share.

    A builder short of what its cells use is handed the rest by the teammates that hold most
    of it spare and may hand things over.
    """
    bags = {agent.name: dict(agent.inventory) for agent in task.agents}
    givers = [agent.name for agent in task.agents if GIVE_SKILL not in agent.blocked]
    paths: dict[str, list[Task]] = {agent.name: [] for agent in task.agents}
    given: dict[tuple[str, str], int] = {}  # (giver, item) → handed over so far

    def block(cell: Cell) -> str:
        return wanted[cell].removeprefix(TEMPORARY)

    for name, cells in shares.items():
        uses: dict[str, int] = {}
        for cell in cells:
            uses[block(cell)] = uses.get(block(cell), 0) + 1
        for item, n in sorted(uses.items()):
            short = n - bags[name].get(item, 0)
            for donor in sorted((d for d in givers if d != name), key=lambda d: -bags[d].get(item, 0)):
                if short <= 0:
                    break
                spare = bags[donor].get(item, 0) - sum(1 for c in shares.get(donor, []) if block(c) == item)
                give = min(short, spare - given.get((donor, item), 0))
                if give > 0:
                    paths[donor].insert(0, _task(GIVE_SKILL, prior, q=give, item=item, to=name))
                    given[(donor, item)] = given.get((donor, item), 0) + give
                    short -= give
    for name, cells in shares.items():
        if cells:
            paths[name].append(_build_task(task, wanted, cells, form, prior))
    return paths


def _proposal(paths: dict[str, list[Task]], lead: str) -> Proposal:
    own: Path = tuple(paths.get(lead, ()))
    requests = tuple(
        PeerRequest(agent, tuple(tasks)) for agent, tasks in sorted(paths.items()) if agent != lead and tasks
    )
    return Proposal(own, requests)


def build_makespan(task: BuildTask, proposal: Proposal, lead: str, prior: Prior) -> float | None:
    """The simulated finish of ``proposal`` from ``task``'s bags.

    None when it fails or leaves a mismatch a build could fill (the unbuildable cells aside).
    """
    episode, world = build_world(task)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    final, _ = dry_run(proposal, lead, holdings, episode, world, prior)
    if final is None:
        return None
    built = score_build(task.blueprint.relative(), final.blocks.get(BUILD_SITE, {}))
    skipped = {u.cell for u in unbuildable(task)}
    return final.clock_s if all(miss.cell in skipped for miss in built.mismatched) else None


def _drafting(task: BuildTask) -> tuple[dict[Cell, str], Scaffolding, str]:
    scaffold = scaffolding(task)
    material = scaffold_block(task, len(scaffold.cells)) or SCAFFOLD_BLOCKS[0]
    return placements(task), scaffold, material


def plan_build(task: BuildTask, lead: str, prior: Prior, form: CellForm = "share") -> BuildPlan:
    """The least-makespan draft of those above (``own`` when the dry runs tie or all fail)."""
    wanted, scaffold, material = _drafting(task)
    own = _own(task, wanted, scaffold, material)
    drafts = {"own": _proposal(_paths(task, wanted, own, prior, form), lead)}
    if len(builders(task)) > 1:
        wanted, scaffold, material = _drafting(task)
        regions = _regions(task, wanted, scaffold, material)
        drafts["regions"] = _proposal(_paths(task, wanted, regions, prior, form), lead)
    timed = {name: build_makespan(task, proposal, lead, prior) for name, proposal in drafts.items()}
    finished = {name: seconds for name, seconds in timed.items() if seconds is not None}
    if not finished:  # builders in each other's way: one builder, handed everything, as the fallback
        builder = lead if lead in builders(task) else builders(task)[0]
        alone = _alone(task, builder, prior, form)
        seconds = build_makespan(task, alone, lead, prior)
        if seconds is not None:
            return BuildPlan(alone, seconds, "alone", len(scaffold.cells))
    best = min(finished, key=lambda name: (finished[name], name != "own")) if finished else "own"
    return BuildPlan(drafts[best], finished.get(best), best, len(scaffold.cells))


def _alone(task: BuildTask, builder: str, prior: Prior, form: CellForm) -> Proposal:
    """``builder`` places every cell, scaffolding included; every teammate hands it what it holds of them."""
    wanted, scaffold, material = _drafting(task)
    wanted.update({cell: TEMPORARY + material for cell in scaffold.cells})
    return _proposal(_paths(task, wanted, {builder: [*wanted]}, prior, form), builder)


def alone_makespan(task: BuildTask, builder: str, prior: Prior) -> float | None:
    """One agent building everything, every teammate handing it what it holds first: the team's yardstick."""
    return build_makespan(task, _alone(task, builder, prior, "share"), builder, prior)
