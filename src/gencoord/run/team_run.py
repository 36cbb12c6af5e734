"""The frame every kind's runner fills: a team task's result, the run set up around it, and its one ending.

Crafting, cooking and construction differ in who leads, what the lead plans and what the task's
own test is; everything else is shared here. :func:`start_run` sets a run up (the clock, the
task's public episode and world, the wire, the peers, the result they fill); :meth:`TeamRun.finish`
ends one before any action, with every message written so far; :func:`executed` runs an agreed
commitment and judges it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gencoord.backends.base import Backend
from gencoord.backends.peer import RulePeer
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import WORLD_OUTAGES, WorldError
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.commitment import Commitment
from gencoord.protocol.generation import Generation
from gencoord.protocol.plan import DispatchPlan
from gencoord.protocol.wire import Wire
from gencoord.reasons import Reason
from gencoord.run.execution import run_checked
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_exchange import Peers
from gencoord.runtime.thinking import Thinking, after_thinking
from gencoord.runtime.verify import Execution, Outcome, judge
from gencoord.tasks.blueprint import BuildScore
from gencoord.tasks.build import BuildTask
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import TeamTask
from gencoord.worlds.actions import Program
from gencoord.worlds.executor import Executor, WorldSnapshot
from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.spec import WorldSpec


@dataclass(frozen=True)
class TeamResult:
    """How one team task ended (any kind): success, code and message, the exchange, the commitment and the
    execution; ``task_record`` turns it into the record ``gencoord tasks run`` writes."""

    task: TeamTask | BuildTask | CookingTask
    mode: TeamMode
    surface: SurfaceName
    lead: str
    backend: str
    feasible: bool  # the team judged the goal reachable
    success: bool  # the task's own test, on the final world, within its time limit
    code: str | None
    message: str | None
    wire: Wire
    generations: tuple[Generation, ...] = ()
    rounds: int = 0
    commitment: Commitment | None = None
    plan: DispatchPlan | None = None
    execution: Execution | None = None
    outcome: Outcome | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # measured: protocol, world
    planned_makespan_s: float | None = None  # the commitment's dry run on the simulator, from the true bags
    single_crafter_s: float | None = None  # the fastest plan in which one agent makes everything, likewise
    built: BuildScore | None = None  # a construction task: the blueprint check on the final world
    recipe_bytes: int = 0  # a cooking task: what teaching recipes cost on the wire (deliveries and ACKs)
    thinking_s: float = 0.0  # world time the exchange's messages took to write (time to commitment); 0: none
    failure: str | None = None  # the class of the error that stopped the exchange (PARSE_FAILURE, CONTRACT_REJECT …)

    @property
    def model_calls(self) -> int:
        return sum(generation.reply.model_calls for generation in self.generations)

    @property
    def tokens(self) -> int | None:
        """Input and output tokens of every message a model wrote (None: no model with a tokenizer spoke)."""
        counted = [
            (g.reply.input_tokens or 0) + (g.reply.output_tokens or 0)
            for g in self.generations
            if g.reply.input_tokens is not None or g.reply.output_tokens is not None
        ]
        return sum(counted) if counted else None

    @property
    def duration_s(self) -> float | None:
        """Simulated (or real) seconds the world ran; None when nothing ran."""
        return None if self.execution is None else self.execution.final.clock_s


@dataclass
class TeamRun:
    """One team task's run as every kind's runner sets it up: the clock (when the protocol began), the task's
    public episode and world, the wire, the peers and the world that acts; ``result`` is what the run fills, and
    ``generations`` the lead's messages as they are written (one a later stage rejects included)."""

    clock: float
    episode: PublicEpisode
    world: WorldSpec
    wire: Wire
    peers: Peers
    executor: Executor
    result: TeamResult
    generations: list[Generation] = field(default_factory=list)

    @property
    def lead(self) -> str:
        return self.result.lead

    def said(self) -> TeamResult:
        """The result with every message written so far: the lead's (one a round) and the peers'."""
        spoken = tuple(self.generations) + tuple(self.peers.generations)
        return replace(self.result, generations=spoken, rounds=len(self.generations))

    def finish(
        self,
        *,
        code: str | None = None,
        message: str | None = None,
        feasible: bool = True,
        success: bool = False,
        failure: str | None = None,
    ) -> TeamResult:
        """How the run ended before any action, with every message written so far and the protocol's time."""
        seconds = {"protocol": time.perf_counter() - self.clock}
        return replace(
            self.said(),
            seconds=seconds,
            code=code,
            message=message,
            feasible=feasible,
            success=success,
            failure=failure,
        )

    def execute(
        self,
        commitment: Commitment,
        plan: DispatchPlan,
        program: Program,
        verdict: Callable[[WorldSnapshot], Verdict],
        thinking: Thinking | None,
    ) -> TeamResult:
        """Run the agreed commitment in this run's world and judge it (:func:`executed`)."""
        return executed(
            self.said(), commitment, plan, program, self.world, self.executor, self.clock, verdict, thinking
        )


def start_run(
    task: TeamTask | BuildTask | CookingTask,
    prior: Prior,
    made: tuple[PublicEpisode, WorldSpec],
    lead: str,
    backend: str,
    *,
    mode: TeamMode,
    surface: SurfaceName,
    peer_backend: Backend | None,
    executor: Executor | None,
    clock: float,
) -> TeamRun:
    """The run every kind's runner starts from: ``made`` is the task's public episode and world, ``lead`` who
    leads it and ``backend`` the name its record gives the lead's writer; peers answer through ``peer_backend``
    (default the rule peer), and the world acts through ``executor`` (default the simulator)."""
    episode, world = made
    wire = Wire()
    peers = Peers(peer_backend or RulePeer(prior), task, episode.refs, surface)
    result = TeamResult(task, mode, surface, lead, backend, True, False, None, None, wire)
    return TeamRun(clock, episode, world, wire, peers, executor or SimExecutor(prior.game), result)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A task's own success test on the final world: met or not, why not, and what the record adds."""

    met: bool
    code: str | None = None
    message: str | None = None
    extra: dict[str, object] = field(default_factory=dict)  # TeamResult fields the test fills (a build's score)


def executed(
    result: TeamResult,
    commitment: Commitment,
    plan: DispatchPlan,
    program: Program,
    world: WorldSpec,
    executor: Executor,
    clock: float,
    verdict: Callable[[WorldSnapshot], Verdict],
    thinking: Thinking | None = None,
) -> TeamResult:
    """Run an agreed commitment and judge it: H per hand-over, T, and the task's own test within its time limit.

    The one ending of every team run (crafting, cooking, construction). A world that refuses the team is
    the task's outcome, never an exception; an outage (a dead server or bridge) raises: the task did not
    run. ``clock`` is when the protocol began. Under ``thinking``, nobody acts before the exchange's
    messages are written: every agent first waits the time to commitment.
    """
    protocol_s = time.perf_counter() - clock
    thought = (thinking or Thinking()).total(result.generations)
    program = after_thinking(program, thought)
    result = replace(result, thinking_s=thought)
    started = time.perf_counter()
    try:
        execution = run_checked(plan, program, world, executor)
    except WorldError as error:  # a world that cannot host this team: the task's outcome; an outage is not one
        if error.outage:
            raise
        seconds = {"protocol": protocol_s, "world": time.perf_counter() - started}
        return replace(
            result, code=error.reason, message=error.message, commitment=commitment, plan=plan, seconds=seconds
        )
    died = next(
        (r.failure for r in execution.records if r.failure is not None and r.failure.code in WORLD_OUTAGES), None
    )
    if died is not None:  # the server, bridge or a bot's connection died mid-episode: no outcome of the team's
        raise WorldError(Reason(died.code), died.message)
    outcome = judge(plan, (), execution)
    judged = verdict(execution.final)
    in_time = execution.final.clock_s <= result.task.time_limit_s
    success = outcome.fulfilled is True and judged.met and in_time
    code, message = outcome.reason, outcome.message
    if outcome.failure is None and not judged.met:
        code, message = judged.code, judged.message
    elif outcome.failure is None and not in_time:
        code = "TIME_LIMIT"
        message = f"the goal held after {execution.final.clock_s:.1f} s; the limit is {result.task.time_limit_s:.0f} s"
    seconds = {"protocol": protocol_s, "world": time.perf_counter() - started}
    return replace(
        result,
        success=success,
        code=None if success else code,
        message=None if success else message,
        commitment=commitment,
        plan=plan,
        execution=execution,
        outcome=replace(outcome, success=success),
        seconds=seconds,
        **judged.extra,  # type: ignore[arg-type]
    )
