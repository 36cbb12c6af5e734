"""run_build_task: a construction task from private bags to a blueprint checked cell by cell.

The same exchange as a crafting team task (``run/team.py``), with the blueprint as the public
goal. The lead (the first agent that may look the plan up) knows its own bag:

1. One bounded supply question to each peer, ``ASK <block> ...`` naming the blueprint's
   blocks and the blocks scaffolding is made of, and one ``HAVE`` answer. A blueprint the team cannot build (too few
   materials, nobody allowed to place) is refused here, before any action, naming what is
   missing. Cells vanilla cannot hold as asked (a carpet over air) are left out and the rest
   is built: the outcome is ``UNSUPPORTED_CELL`` at the best score any build reaches.
2. The lead's planner (``planning/build.py``, a deterministic rule: zero model calls, and
   the record says so) writes the SELF+REQ commitment: per agent, its hand-overs and one
   ``build.place`` task whose cell list is its placement order. It is contract-checked, and
   each peer receives its projection and answers ACCEPT, COUNTER or REJECT, as in crafting.
3. The commitment is resolved, materialized and compiled (placements wait for the teammate
   block under them), executed and verified: H per hand-over, T, and G by the benchmark's own
   check of every blueprint cell, within the time limit.

The centralized reference skips step 1's exchange: its planner sees every bag.
"""

from __future__ import annotations

import time
from dataclasses import replace

from gencoord.backends.base import Backend
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import GencoordError, OperationalError
from gencoord.planning.build import SCAFFOLD_BLOCKS, alone_makespan, judge_build, plan_build, unbuildable
from gencoord.prior.prior import Prior
from gencoord.protocol.supply import MAX_ASKED, SupplyQuery
from gencoord.reasons import Reason
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_exchange import Draft, RuleLead, asked_view, negotiate
from gencoord.run.team_run import TeamResult, Verdict, start_run
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.blueprint import score_build
from gencoord.tasks.build import BuildTask
from gencoord.tasks.world import BUILD_SITE, build_world
from gencoord.worlds.executor import Executor, WorldSnapshot

PLANNER = "planner"
"""The one lead construction tasks have: the rule of ``planning/build.py`` (model leads build nothing yet)."""


def build_lead(task: BuildTask) -> str:
    """The first agent that may look the plan up, else the first agent."""
    return next((agent.name for agent in task.agents if agent.can_plan), task.agents[0].name)


def _asked(task: BuildTask) -> SupplyQuery:
    """The blueprint's blocks and what scaffolding and towers are made of: what the lead must know of each bag."""
    return SupplyQuery(tuple(sorted({*task.blueprint.needs(), *SCAFFOLD_BLOCKS}))[:MAX_ASKED])


def run_build_task(
    task: BuildTask,
    prior: Prior,
    *,
    mode: TeamMode = TeamMode.PRIVATE,
    surface: SurfaceName = SurfaceName.DSL,
    backend: str = PLANNER,
    peer_backend: Backend | None = None,
    executor: Executor | None = None,
    thinking: Thinking | None = None,
) -> TeamResult:
    """One construction task end to end; never raises for a task that cannot be built (the result says why).

    A construction commitment travels in the Short DSL and is written by the build planner: another
    ``surface`` is refused in the result (nothing runs) rather than silently replaced, and ``backend``
    is the lead's name the record gives (which families may lead which kinds is ``TaskKind.play``'s
    to check, from what each family says it writes).
    """
    clock = time.perf_counter()
    run = start_run(
        task,
        prior,
        build_world(task),
        build_lead(task),
        backend,
        mode=mode,
        surface=surface,
        peer_backend=peer_backend,
        executor=executor,
        clock=clock,
    )
    lead, wire, peers = run.lead, run.wire, run.peers
    if surface is not SurfaceName.DSL:
        return run.finish(
            code=Reason.UNSUPPORTED_SURFACE, message="construction commitments travel in the Short DSL only"
        )

    def draft(view: BuildTask) -> Draft:
        verdict = judge_build(view)
        if not verdict.feasible:
            return Draft(None, verdict.code, verdict.reason)
        drafted = plan_build(view, lead, prior)
        makespans.append(drafted.makespan_s)
        return Draft(drafted.proposal)

    makespans: list[float | None] = []
    try:
        view = task if mode is TeamMode.CENTRALIZED else asked_view(task, lead, _asked(task), wire, peers)
        agreed = negotiate(view, RuleLead(lead, draft, prior, wire, peers, run.generations), prior, run.episode)
        commitment = agreed.commitment
        if commitment is None:
            return run.finish(feasible=agreed.feasible, code=agreed.code, message=agreed.message)
        plan = materialize(commitment, prior, run.episode)
        program = compile_plan(plan, run.world, prior.game)
        alone = alone_makespan(task, lead, prior)
        run.result = replace(run.result, planned_makespan_s=makespans[-1], single_crafter_s=alone)
    except GencoordError as error:
        if isinstance(error, OperationalError) and error.outage:  # an endpoint gone: no outcome of the team's
            raise
        return run.finish(code=error.reason, message=error.message, failure=str(error.code))

    skipped = unbuildable(task)

    def blueprint_check(final: WorldSnapshot) -> Verdict:
        built = score_build(task.blueprint.relative(), final.blocks.get(BUILD_SITE, {}))
        if built.success:
            return Verdict(True, extra={"built": built})
        differ = f"{built.mismatches} of {built.matches + built.mismatches} cells differ (score {built.score:.3f})"
        if {miss.cell for miss in built.mismatched} <= {u.cell for u in skipped}:
            message = f"{differ}, each one vanilla cannot hold; first {skipped[0].describe()}"
            return Verdict(False, "UNSUPPORTED_CELL", message, {"built": built})
        first = built.mismatched[0]
        x, y, z = first.cell
        message = f"{differ}; first at offset {x},{y},{z}: {first.expected} expected, {first.actual} found"
        return Verdict(False, "BLUEPRINT_MISMATCH", message, {"built": built})

    return run.execute(commitment, plan, program, blueprint_check, thinking)
