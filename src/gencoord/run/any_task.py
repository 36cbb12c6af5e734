"""run_task: one call for any team task, whatever its kind (crafting, cooking, construction).

The kinds each have their runner (``run/team.py``, ``run/cooking.py``, ``run/build.py``) with
the arguments that kind needs. A user with a task in hand, read from a MINDcraft file or
built in Python, should not have to know which: this looks the runner up from the task's
kind, loads the team prior (the skills team tasks use: placing stations, smelting, building),
names the players as ``gencoord tasks run --team`` does and makes the world as ``--world``
does, then closes the world it made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gencoord.backends.registry import team_players
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import BackendError, OperationalError
from gencoord.prior.load import team_prior
from gencoord.run.kinds import task_kind
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_record import team_record
from gencoord.run.team_run import TeamResult
from gencoord.worlds.choice import WorldChoice, make_executor

if TYPE_CHECKING:
    from gencoord.prior.prior import Prior
    from gencoord.tasks.task_format import AnyTask
    from gencoord.worlds.executor import Executor


OUTAGE_RETRIES = 1
"""Times a task an outage ended is run again from its start (the world restarts) before the run stops."""


def run_through_outages(run: Callable[[], TeamResult]) -> TeamResult:
    """``run``, again from the start after an outage; an outage that persists stops the run, resumably.

    An outage (a server, bridge or model endpoint that died or stopped answering) is no outcome of
    the team's: the task gets no record, so the report counts it as not run and the next run of the
    same command runs it.
    """
    for attempt in range(OUTAGE_RETRIES + 1):
        try:
            return run()
        except OperationalError as error:
            if not error.outage:
                raise
            if attempt == OUTAGE_RETRIES:
                down = "the model endpoint" if isinstance(error, BackendError) else "the world"
                raise type(error)(
                    error.reason,
                    f"{error.message} ({down} stayed down through {OUTAGE_RETRIES + 1} starts of this task, "
                    "which is not recorded; run the same command again to resume)",
                ) from None
    raise AssertionError("unreachable: the loop returns or raises")


def run_task(
    task: AnyTask,
    *,
    team: str = "planner",
    world: str | WorldChoice = "sim",
    mode: TeamMode | str = TeamMode.PRIVATE,
    surface: SurfaceName | str = SurfaceName.DSL,
    prior: Prior | None = None,
    executor: Executor | None = None,
) -> TeamResult:
    """Coordinate, execute and verify one task of any kind; never raises for a task the team cannot do.

    ``team`` names who plays (``planner``; ``lead=model:<checkpoint>,peers=api:<url>#<model>``),
    ``world`` where actions run (``sim``, ``minecraft`` or a plugin's, or a :class:`WorldChoice`
    with Minecraft's settings). Pass ``executor`` to run many tasks on one warm world; a world
    made here is closed before returning. An outage (a server, bridge or model endpoint that dies)
    runs the task again from its start once, then raises it (a :class:`WorldError` or
    :class:`BackendError` whose ``outage`` is true): it is no outcome. The result's
    ``success``, ``code`` and ``message`` say how it ended; :func:`task_record` turns it into the
    record ``gencoord tasks run`` writes.
    """
    prior = prior or team_prior()
    players = team_players(team, prior)
    choice = world if isinstance(world, WorldChoice) else WorldChoice(kind=world)
    made = executor is None
    world_executor = make_executor(choice) if executor is None else executor
    try:
        return run_through_outages(
            lambda: task_kind(task).play(task, prior, TeamMode(mode), SurfaceName(surface), players, world_executor)
        )
    finally:
        if made:
            world_executor.close()


def task_record(result: TeamResult, file: str = "", world: str = "sim") -> dict[str, Any]:
    """The JSON record of ``result``, as ``gencoord tasks run`` appends it to ``episodes.jsonl``."""
    return team_record(result, file, world)
