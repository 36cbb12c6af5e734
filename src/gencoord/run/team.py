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
from dataclasses import dataclass, replace

from gencoord.backends.base import Backend, speaks
from gencoord.backends.planner import PlannerBackend
from gencoord.dsl import team_dialogue
from gencoord.dsl.ast import Proposal
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError, GencoordError, OperationalError
from gencoord.planning.feasibility import diagnose, quick_runs
from gencoord.planning.planner import makespan, plan_team, single_crafter_makespan
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.generation import Generation, GenerationRequest, Stage
from gencoord.protocol.response import Response
from gencoord.protocol.supply import parse_answer
from gencoord.reasons import Reason
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_exchange import (
    Agreement,
    Peers,
    Speaker,
    negotiate,
    projected,
    supply_question,
)
from gencoord.run.team_run import TeamResult, Verdict, start_run
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.context import LocalContext
from gencoord.tasks.team import ANY, TeamAgent, TeamTask
from gencoord.tasks.world import team_world
from gencoord.worlds.executor import Executor, WorldSnapshot
from gencoord.worlds.sim.physics import TICKS_PER_S, default_physics


def lead_of(task: TeamTask) -> str:
    """Who writes the team's plan: the goal's named holder, else the first agent that can look the
    plan up (MINDcraft's ``!getCraftingPlan``), else the first agent, from the shared prior alone."""
    names = [agent.name for agent in task.agents]
    if task.goal.holder in names:
        return task.goal.holder
    return next((agent.name for agent in task.agents if agent.can_plan), names[0])


def lead_context(view: TeamTask, lead: str, episode: PublicEpisode, surface: SurfaceName) -> LocalContext:
    """What the lead's backend is given to write a proposal from: its own bag and the team task as it sees it."""
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
    run = start_run(
        task,
        prior,
        team_world(task, prior),
        lead_of(task),
        backend.name,
        mode=mode,
        surface=surface,
        peer_backend=peer_backend,
        executor=executor,
        clock=clock,
    )
    lead, peers = run.lead, run.peers
    holders = [a for a in task.agents if task.goal.holder in (ANY, a.name)]
    if any(agent.inventory.get(task.goal.item, 0) >= task.goal.count for agent in holders):
        return run.finish(message="the goal already holds: nothing to coordinate", success=True)
    speaker = Speaker(surface, prior, run.wire, task)
    try:
        view = _lead_view(task, lead, mode, prior, speaker, peers)
        judged = diagnose(view, prior)
        if not judged.feasible:
            return run.finish(feasible=False, code=judged.code, message=judged.reason)
        leading = _BackendLead(lead, backend, prior, run.episode, surface, speaker, peers, run.generations)
        agreed = negotiate(view, leading, prior, run.episode)
        commitment, proposal = agreed.commitment, agreed.proposal
        if commitment is None or proposal is None:
            return run.finish(feasible=agreed.feasible, code=agreed.code, message=agreed.message)
        plan = materialize(commitment, prior, run.episode)
        program = compile_plan(plan, run.world, prior.game)
        run.result = replace(
            run.result,
            planned_makespan_s=makespan(task, proposal, lead, prior),
            single_crafter_s=single_crafter_makespan(task, lead, prior),
        )
    except GencoordError as error:  # NO_ASSIGNMENT: the lead finds the goal out of the team's reach after all
        if isinstance(error, OperationalError) and error.outage:  # an endpoint gone: no outcome of the team's
            raise
        feasible = error.reason != Reason.NO_ASSIGNMENT
        return run.finish(code=error.reason, message=error.message, failure=str(error.code), feasible=feasible)
    goal = task.goal

    def verdict(final: WorldSnapshot) -> Verdict:
        if task.goal_met(final.inventories, final.containers):
            return Verdict(True)
        return Verdict(False, "GOAL_UNMET", f"nobody holds {goal.count} {goal.item} at the end")

    return run.execute(commitment, plan, program, verdict, thinking)


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
        reply = self.backend.generate(lead_context(view, self.name, self.episode, self.surface), request)
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
