"""run_team_task: a team task from private bags to a verified world, through typed messages only.

The lead (the agent that must hold the goal, else the first that can look the plan up) knows its own bag,
its blocked skills, the shared prior and the public goal. Everything it learns about a
teammate crosses the wire, counted byte by byte:

1. If the lead's own bag makes the goal sooner than any hand-over could land, it commits its own
   path (``REQ -``): no message. Otherwise it asks, and its plan alone is one candidate among the
   team's: it wins only where it is really the fastest.
2. Otherwise one bounded supply question to each peer (``ASK``, the items the goal's
   recipes can use) and one answer from each (``HAVE``: counts of those items only, and
   the skills it cannot use). The lead now judges feasibility: an unreachable goal is
   refused here, before any action, with what is missing.
3. The lead's backend writes the n-party SELF+REQ; it is parsed and contract-checked,
   and each peer named in it receives its projection (its own REQ line and the lines of
   whoever hands it items, still n-party DSL) and answers ACCEPT, COUNTER (``item``/``have``:
   it holds less than it is asked to hand over) or REJECT (``skill``: it cannot use a
   skill of its path). A counter or reject corrects the lead's view and the lead tries
   again, at most :data:`MAX_ROUNDS` times.
4. Once every peer accepts, the commitment is resolved (ledgers start from what the lead
   knows each agent holds), materialized, compiled, executed and verified: an H check per
   hand-over, T, and G judged by the task's own test (the goal held within its time limit).

The centralized reference skips step 2: its planner sees every bag, so the difference in
messages and bytes is the cost of privacy. The free-form surface says the same content in
controlled sentences (``dsl/team_dialogue.py``), so bytes compare on identical tasks.
Peers answer through a backend of their own (``backends/peer.py``): by default the truthful
rule from their own bag (zero model calls, and said so), or any model that writes HAVE and
decision lines; what a peer says is parsed like any message from the wire.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gencoord.backends.base import Backend, speaks
from gencoord.backends.peer import RulePeer
from gencoord.backends.planner import PlannerBackend
from gencoord.dsl import team_dialogue
from gencoord.dsl.ast import Proposal
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import WORLD_OUTAGES, ConfigError, GencoordError, OperationalError, WorldError
from gencoord.planning.feasibility import diagnose, quick_runs
from gencoord.planning.planner import makespan, plan_team, single_crafter_makespan
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.commitment import Commitment
from gencoord.protocol.generation import Generation, GenerationRequest, Stage
from gencoord.protocol.plan import DispatchPlan
from gencoord.protocol.response import Response
from gencoord.protocol.supply import parse_answer
from gencoord.protocol.wire import Wire
from gencoord.reasons import Reason
from gencoord.run.execution import run_checked
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_exchange import (
    Agreement,
    Peers,
    Speaker,
    negotiate,
    projected,
    supply_question,
)
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.runtime.thinking import Thinking, after_thinking
from gencoord.runtime.verify import Execution, Outcome, judge
from gencoord.tasks.blueprint import BuildScore
from gencoord.tasks.build import BuildTask
from gencoord.tasks.context import LocalContext
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import ANY, TeamAgent, TeamTask
from gencoord.tasks.world import team_world
from gencoord.worlds.actions import Program
from gencoord.worlds.executor import Executor, WorldSnapshot
from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.sim.physics import TICKS_PER_S, default_physics
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


def lead_of(task: TeamTask) -> str:
    """Who writes the team's plan: the goal's named holder, else the first agent that can look the
    plan up (MINDcraft's ``!getCraftingPlan``), else the first agent, from the shared prior alone."""
    names = [agent.name for agent in task.agents]
    if task.goal.holder in names:
        return task.goal.holder
    return next((agent.name for agent in task.agents if agent.can_plan), names[0])


def _context(view: TeamTask, lead: str, episode: PublicEpisode, surface: SurfaceName) -> LocalContext:
    own = next(agent for agent in view.agents if agent.name == lead)
    peers = ",".join(agent.name for agent in view.agents if agent.name != lead) or "-"
    return LocalContext(lead, "lead", peers, None, (), {}, own.inventory, episode.refs, {}, surface, view)


def run_team_task(
    task: TeamTask,
    prior: Prior,
    *,
    mode: TeamMode = TeamMode.PRIVATE,
    surface: SurfaceName = SurfaceName.DSL,
    lead_backend: Backend | None = None,
    peer_backend: Backend | None = None,
    executor: Executor | None = None,
    thinking: Thinking | None = None,
) -> TeamResult:
    """One team task end to end; never raises for a task that cannot be coordinated (the result says why).

    ``lead_backend`` writes the lead's proposals (default: the planner); ``peer_backend`` answers
    for every peer (default: the rule peer). For a task of any kind, :func:`gencoord.run_task`.
    """
    if not isinstance(task, TeamTask):
        raise ConfigError(
            Reason.UNSUPPORTED_TASK_KIND,
            f"run_team_task runs crafting tasks and {getattr(task, 'id', '?')} is not one: use gencoord.run_task",
        )
    clock = time.perf_counter()
    backend = lead_backend or PlannerBackend(prior)
    episode, world = team_world(task, prior)
    lead, wire = lead_of(task), Wire()
    peers = Peers(peer_backend or RulePeer(prior), task, episode.refs, surface)
    result = TeamResult(task, mode, surface, lead, backend.name, True, False, None, None, wire)
    executor = executor or SimExecutor(prior.game)
    generations: list[Generation] = []

    def finish(**changes: object) -> TeamResult:
        seconds = {"protocol": time.perf_counter() - clock}
        said = tuple(generations) + tuple(peers.generations)
        rounds = len(generations)  # the lead's messages: one a round, a malformed last one included
        return replace(result, seconds=seconds, generations=said, rounds=rounds, **changes)  # type: ignore[arg-type]

    holders = [a for a in task.agents if task.goal.holder in (ANY, a.name)]
    if any(agent.inventory.get(task.goal.item, 0) >= task.goal.count for agent in holders):
        return finish(message="the goal already holds: nothing to coordinate", success=True)
    speaker = Speaker(surface, prior, wire, task)
    try:
        view = _lead_view(task, lead, mode, prior, speaker, peers)
        judged = diagnose(view, prior)
        if not judged.feasible:
            return finish(feasible=False, code=judged.code, message=judged.reason)
        leading = _BackendLead(lead, backend, prior, episode, surface, speaker, peers, generations)
        agreed = negotiate(view, leading, prior, episode)
        commitment, proposal = agreed.commitment, agreed.proposal
        if commitment is None or proposal is None:
            return finish(feasible=agreed.feasible, code=agreed.code, message=agreed.message)
        plan = materialize(commitment, prior, episode)
        program = compile_plan(plan, world, prior.game)
        result = replace(
            result,
            generations=tuple(generations) + tuple(peers.generations),
            rounds=len(generations),
            planned_makespan_s=makespan(task, proposal, lead, prior),
            single_crafter_s=single_crafter_makespan(task, lead, prior),
        )
    except GencoordError as error:  # NO_ASSIGNMENT: the lead finds the goal out of the team's reach after all
        if isinstance(error, OperationalError) and error.outage:  # an endpoint gone: no outcome of the team's
            raise
        feasible = error.reason != Reason.NO_ASSIGNMENT
        return finish(code=error.reason, message=error.message, failure=str(error.code), feasible=feasible)
    goal = task.goal

    def verdict(final: WorldSnapshot) -> Verdict:
        if task.goal_met(final.inventories, final.containers):
            return Verdict(True)
        return Verdict(False, "GOAL_UNMET", f"nobody holds {goal.count} {goal.item} at the end")

    return executed(result, commitment, plan, program, world, executor, clock, verdict, thinking)


def _lead_view(task: TeamTask, lead: str, mode: TeamMode, prior: Prior, speaker: Speaker, peers: Peers) -> TeamTask:
    """What the lead plans from: the whole task (centralized), its own bag alone where that makes the goal
    before any hand-over could land (nobody to ask), or its bag and what the peers answered."""
    if mode is TeamMode.CENTRALIZED:
        return task
    own = next(agent for agent in task.agents if agent.name == lead)
    solo = task.model_copy(update={"agents": [own]})
    if task.goal.holder in (ANY, lead) and _quicker_alone(solo, lead, prior):
        return solo
    return _gather_view(task, lead, prior, speaker, peers)


@dataclass
class _BackendLead:
    """A lead whose backend writes each proposal (a model, the planner, an endpoint), heard by the peers through the
    exchange's surface. Under the free-form surface a speaking lead's words are its message, read by the
    extractor and relayed as said. A refusal that leaves the view short of the goal ends the exchange as
    infeasible."""

    name: str
    backend: Backend
    prior: Prior
    episode: PublicEpisode
    surface: SurfaceName
    speaker: Speaker
    peers: Peers
    generations: list[Generation]
    said: str = ""  # the lead's last message as written
    spoken: bool = False  # written in its own words

    def propose(self, view: TeamTask, round_index: int) -> Proposal:
        others = ",".join(a.name for a in view.agents if a.name != self.name)
        request = GenerationRequest(self.name, Stage.TEAM_LEAD, others, round=round_index)
        reply = self.backend.generate(_context(view, self.name, self.episode, self.surface), request)
        self.generations.append(Generation(self.name, Stage.TEAM_LEAD.value, reply))
        self.said, self.spoken = reply.text, self.speaker.free and speaks(self.backend)
        return (
            team_dialogue.hear_proposal(reply.text, self.prior.vocab) if self.spoken else self.prior.parse(reply.text)
        )

    def answer(self, proposal: Proposal, peer: str) -> Response:
        if self.spoken:
            heard, words = self.speaker.relay(self.said, self.name, peer)
        else:
            heard, words = self.speaker.propose(projected(proposal, peer), self.name, peer)
        said = self.peers.decide(peer, self.name, heard, self.prior, words)
        return self.speaker.respond(said, heard, peer, self.name, self.peers.spoken)

    def reconsider(self, view: TeamTask) -> Agreement | None:
        judged = diagnose(view, self.prior)
        if judged.feasible:
            return None
        return Agreement(None, None, tuple(self.generations), judged.code, judged.reason, feasible=False)


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


HANDOVER_FLOOR_S = (default_physics().toss_ticks + default_physics().pickup_delay_ticks) / TICKS_PER_S
"""The least time a hand-over takes (the toss, then vanilla's pickup delay): no plan that moves an
item between agents ends sooner, so a lead that finishes alone within it need not ask."""


def _quicker_alone(solo: TeamTask, lead: str, prior: Prior) -> bool:
    """Whether the lead's own bag, with nothing gathered, makes the goal within a hand-over's time."""
    bag = from_the_bag(solo)
    if quick_runs(bag, prior) is None:
        return False
    alone = plan_team(bag, lead, prior).makespan_s
    return alone is not None and alone <= HANDOVER_FLOOR_S


def from_the_bag(task: TeamTask) -> TeamTask:
    """``task`` in a world that offers nothing to gather: what its agents' bags alone can make."""
    return task.model_copy(update={"world": task.world.model_copy(update={"resources": []})})


def _gather_view(task: TeamTask, lead: str, prior: Prior, speaker: Speaker, peers: Peers) -> TeamTask:
    """The lead's view after one bounded supply question to every peer."""
    query = supply_question(task, prior)
    agents = []
    for agent in task.agents:
        if agent.name == lead:
            agents.append(agent)
            continue
        heard = speaker.ask(query, lead, agent.name)
        told = speaker.have(peers.have(agent.name, lead, heard), agent.name, lead, query, peers.spoken)
        said = parse_answer(told, query)
        agents.append(TeamAgent(name=agent.name, inventory=dict(said.holds), blocked=list(said.cannot)))
    return task.model_copy(update={"agents": agents})
