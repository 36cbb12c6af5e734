"""The gate's built-in task graphs: per-agent task chains with cross-agent dependencies.

(Called "jobs" before 0.2, a word the runner uses for its units of work.) Declared in
``data/task_graphs.toml`` (validated: every task parses and passes the contract for
its actor, every dependency exists, the dependency graph is acyclic) and instantiated
for concrete agent ids.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from gencoord._config import load_model, package_text
from gencoord.dsl.ast import Task
from gencoord.errors import ConfigError, GencoordError
from gencoord.prior.contract import check_proposal
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.reasons import Reason
from gencoord.runtime.verify import Requirement
from gencoord.tasks.suites import GoalSpec

AGENT_IDS = ("agent_a", "agent_b", "agent_c", "agent_d")


class NodeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    agent: int = Field(ge=0, le=3)
    task: str
    deps: list[str] = []
    critical: bool = True


class TaskGraphSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    agents: int = Field(ge=2, le=4)
    start: list[dict[str, int]]
    goal: list[GoalSpec] = Field(min_length=1)
    nodes: list[NodeSpec] = Field(min_length=1)


class TaskGraphDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    jobs: dict[str, TaskGraphSpec]


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    agent: str
    task: Task
    deps: tuple[str, ...]
    critical: bool


@dataclass(frozen=True)
class TaskGraph:
    """One job of the gate suite: a team's task graph, who does each node, and what each agent starts with.

    (The experiment runner's work unit is ``gencoord.eval.jobs.Job``; this is the team's work itself.)
    """

    name: str
    agents: tuple[str, ...]
    nodes: tuple[Node, ...]
    start: dict[str, dict[str, int]]
    goal: tuple[Requirement, ...]  # what the world must show at the end
    spec: TaskGraphSpec | None = None  # the declaration it came from (None: built from a team task's plan)

    def node(self, ident: str) -> Node:
        return next(node for node in self.nodes if node.id == ident)

    def downstream(self, ident: str) -> set[str]:
        """Every node that (transitively) waits for ``ident``."""
        found: set[str] = set()
        frontier = [ident]
        while frontier:
            current = frontier.pop()
            for node in self.nodes:
                if current in node.deps and node.id not in found:
                    found.add(node.id)
                    frontier.append(node.id)
        return found


def _parse_task(text: str, agent: str, prior: Prior, episode: PublicEpisode) -> Task:
    proposal = prior.parse(f"SELF {text}\nREQ -")
    check_proposal(proposal, agent, prior, episode)
    [task] = proposal.self_plan
    return task


def instantiate(name: str, spec: TaskGraphSpec, prior: Prior) -> TaskGraph:
    agents = AGENT_IDS[: spec.agents]
    names = {f"a{i}": agent for i, agent in enumerate(agents)}
    episode = prior.episode(None, agents)
    nodes = []
    for node in spec.nodes:
        if node.agent >= spec.agents:
            raise ConfigError(
                Reason.BAD_JOB, f"jobs.{name}.{node.id}: agent {node.agent} but the job has {spec.agents}"
            )
        agent = agents[node.agent]
        try:
            task = _parse_task(node.task.format(**names), agent, prior, episode)
        except (GencoordError, KeyError, IndexError) as exc:
            raise ConfigError(Reason.BAD_JOB, f"jobs.{name}.{node.id}: {exc}") from None
        nodes.append(Node(node.id, agent, task, tuple(node.deps), node.critical))
    known = {made.id for made in nodes}
    for made in nodes:
        missing = [dep for dep in made.deps if dep not in known]
        if missing:
            raise ConfigError(Reason.BAD_JOB, f"jobs.{name}.{made.id}: unknown dependency {missing[0]!r}")
    try:
        tuple(graphlib.TopologicalSorter({node.id: node.deps for node in nodes}).static_order())
    except graphlib.CycleError:
        raise ConfigError(Reason.BAD_JOB, f"jobs.{name}: the dependencies form a cycle") from None
    if len(spec.start) != spec.agents:
        raise ConfigError(
            Reason.BAD_JOB, f"jobs.{name}: start lists {len(spec.start)} inventories for {spec.agents} agents"
        )
    start = {agent: dict(items) for agent, items in zip(agents, spec.start, strict=True)}
    goal = tuple(goal.requirement({}, {}) for goal in spec.goal)
    return TaskGraph(name, agents, tuple(nodes), start, goal, spec)


@cache
def default_task_graphs(prior: Prior) -> dict[str, TaskGraph]:
    document = load_model(
        TaskGraphDocument,
        package_text("gencoord.gate", "task_graphs.toml"),
        "task_graphs.toml",
        ConfigError,
        Reason.INVALID_TASK_GRAPHS,
    )
    return {name: instantiate(name, spec, prior) for name, spec in document.jobs.items()}
