"""The task kinds a team run knows, in one registry: crafting, cooking and construction.

Everything that differs between kinds sits behind one :class:`TaskKind`: how a task is
judged before any action (``gencoord tasks check``), how it is run end to end, and how its
goal is written in a record and in a table. Callers look a task's kind up by its
``task_kind`` and never branch on its type: the kinds are the fifth registry
(:data:`TASK_KINDS`), and a package adds one through the ``gencoord.task_kinds`` entry points.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from gencoord._registry import Registry
from gencoord.backends.registry import TeamPlayers
from gencoord.dsl.surface import SurfaceName
from gencoord.planning.build import judge_build
from gencoord.planning.cooking import plan_cooking
from gencoord.planning.feasibility import diagnose
from gencoord.prior.prior import Prior
from gencoord.protocol.wire import Wire
from gencoord.reasons import Reason
from gencoord.run.build import build_lead, run_build_task
from gencoord.run.cooking import cooking_lead, run_cooking_task
from gencoord.run.team import lead_of, run_team_task
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_run import TeamResult
from gencoord.tasks.build import BuildTask
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import TaskBase, TeamTask
from gencoord.worlds.executor import Executor


@dataclass(frozen=True, slots=True)
class Judgement:
    """A task judged before any action: reachable or not, and why not."""

    feasible: bool | None
    code: Reason | str | None
    reason: str


class _Verdict(Protocol):
    @property
    def feasible(self) -> bool | None: ...
    @property
    def code(self) -> Reason | str | None: ...
    @property
    def reason(self) -> str: ...


Runner = Callable[[Any, Prior, TeamMode, SurfaceName, TeamPlayers, Executor | None], TeamResult]


@dataclass(frozen=True, slots=True)
class TaskKind:
    """How one kind of goal is judged before acting, run end to end, recorded and tabled: register one to add a
    kind of task (see the manual's Extending page) without touching the engine."""

    name: str
    judge: Callable[[Any, Prior], Judgement]
    run: Runner
    goal: Callable[[Any], dict[str, Any]]  # the record's ``goal``
    describe: Callable[[Any], str]  # the goal in a table cell
    axes: Callable[[Any], dict[str, str]]  # where the task sits on what MINDcraft's generators vary
    lead: Callable[[Any], str] = lambda task: task.agents[0].name  # who leads it (named in a refusal's record)
    commitment: str = ""  # the kind whose commitment its lead writes (a plugin's may reuse crafting's); "": its own

    def play(
        self,
        task: Any,
        prior: Prior,
        mode: TeamMode,
        surface: SurfaceName,
        team: TeamPlayers,
        executor: Executor | None,
    ) -> TeamResult:
        """``run``, when the team's lead writes this kind's commitment (its family says which kinds' it writes);
        otherwise a result that says so, and nothing runs."""
        written = self.commitment or self.name
        if team.commitments is None or written in team.commitments:
            return self.run(task, prior, mode, surface, team, executor)
        message = f"{team.lead.name} cannot lead {self.name} tasks: its family writes only "
        message += f"{', '.join(sorted(team.commitments))} commitments; lead with a family that writes {written}'s"
        message += " (the planner writes every kind's)"
        return TeamResult(
            task,
            mode,
            surface,
            self.lead(task),
            team.lead.name,
            True,
            False,
            Reason.UNSUPPORTED_BACKEND,
            message,
            Wire(),
        )


def _judged(verdict: _Verdict) -> Judgement:
    return Judgement(verdict.feasible, verdict.code, verdict.reason)


def _crafting_goal(task: TeamTask) -> dict[str, Any]:
    return {"item": task.goal.item, "count": task.goal.count, "holder": task.goal.holder}


def _cooking_goal(task: CookingTask) -> dict[str, Any]:
    return {"goals": [{"items": dict(goal.items), "holder": goal.holder} for goal in task.goals]}


def _build_goal(task: BuildTask) -> dict[str, Any]:
    width, levels, depth = task.blueprint.size()
    return {"blueprint": {"size": [width, levels, depth], "blocks": sum(task.blueprint.needs().values())}}


def _build_text(task: BuildTask) -> str:
    width, levels, depth = task.blueprint.size()
    return f"blueprint {width}×{levels}×{depth}, {sum(task.blueprint.needs().values())} blocks"


def _crafting_axes(task: TeamTask) -> dict[str, str]:
    """MINDcraft's crafting axes: who may look the plan up, the recipe depth its id names, blocked commands."""
    planners = sum(agent.can_plan for agent in task.agents)
    plan = "full" if planners == len(task.agents) else "none" if planners == 0 else "partial"
    depth = re.search(r"depth_(\d+)", task.id)
    blocked = planners < len(task.agents) or any(agent.blocked for agent in task.agents)  # !getCraftingPlan too
    return {
        "plan available": plan,
        "depth": depth.group(1) if depth else "–",
        "blocked actions": "some" if blocked else "none",
    }


def _cooking_axes(task: CookingTask) -> dict[str, str]:
    """MINDcraft's cooking variant: hells kitchen, a recipe withheld from some agent, or plain."""
    variant = "hells kitchen" if task.own_work else "blocked recipe" if task.recipes else "plain"
    return {"variant": variant, "dishes": str(len(task.goal_items()))}


def _judge_cooking(task: CookingTask, prior: Prior) -> Judgement:
    planned = plan_cooking(task, cooking_lead(task), prior)
    return Judgement(planned.feasible, planned.code, planned.reason)


CRAFTING = TaskKind(
    "crafting",
    lambda task, prior: _judged(diagnose(task, prior)),
    lambda task, prior, mode, surface, team, executor: run_team_task(
        task,
        prior,
        mode=mode,
        surface=surface,
        lead_backend=team.lead,
        peer_backend=team.peers,
        executor=executor,
        thinking=team.thinking,
    ),
    _crafting_goal,
    lambda task: f"{task.goal.count} {task.goal.item}",
    _crafting_axes,
    lead_of,
)
COOKING = TaskKind(
    "cooking",
    _judge_cooking,
    lambda task, prior, mode, surface, team, executor: run_cooking_task(
        task,
        prior,
        mode=mode,
        surface=surface,
        backend=team.lead.name,
        peer_backend=team.peers,
        executor=executor,
        thinking=team.thinking,
    ),
    _cooking_goal,
    lambda task: "; ".join(goal.describe() for goal in task.goals),
    _cooking_axes,
    cooking_lead,
)
CONSTRUCTION = TaskKind(
    "construction",
    lambda task, prior: _judged(judge_build(task)),
    lambda task, prior, mode, surface, team, executor: run_build_task(
        task,
        prior,
        mode=mode,
        surface=surface,
        backend=team.lead.name,
        peer_backend=team.peers,
        executor=executor,
        thinking=team.thinking,
    ),
    _build_goal,
    _build_text,
    lambda task: {"levels": str(task.blueprint.size()[1])},
    build_lead,
)

TASK_KINDS: Registry[TaskKind] = Registry(
    "task kind",
    "gencoord.task_kinds",
    TaskKind,
    {
        "crafting": "gencoord.run.kinds:CRAFTING",
        "cooking": "gencoord.run.kinds:COOKING",
        "construction": "gencoord.run.kinds:CONSTRUCTION",
    },
)
"""The fifth registry: a task's ``task_kind`` names the entry that judges, runs and records it."""


def register_task_kind(kind: TaskKind) -> TaskKind:
    """Make ``kind`` run the tasks whose ``task_kind`` is its name (a plugin's: ``gencoord.task_kinds``)."""
    return TASK_KINDS.register(kind)


def task_kind(task: TaskBase) -> TaskKind:
    """The kind that judges, runs and records ``task``."""
    return TASK_KINDS.get(task.task_kind)
