"""The team experiment's config: what its TOML file holds, validated when it loads."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from gencoord.backends.families import TeamRolesName, parse_team_roles
from gencoord.dsl.surface import SurfaceName
from gencoord.eval.config import NAME_PATTERN, BootstrapSpec, ExecutionSpec
from gencoord.run.team_choices import TeamMode
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.task_format import AnyTask
from gencoord.tasks.team_files import AUTO, Refusal, TaskFormatName
from gencoord.worlds.choice import WorldChoice


class TeamExperimentConfig(BaseModel):
    """Team tasks: the tasks of task files × information modes × surfaces × who plays (lead and peers)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    kind: Literal["team"] = "team"
    description: str = ""
    tasks: list[str] = Field(min_length=1)  # task files (gencoord or MINDcraft), relative to the config
    format: TaskFormatName = AUTO
    modes: list[TeamMode] = Field(default=[TeamMode.PRIVATE], min_length=1)
    surfaces: list[Literal[SurfaceName.DSL, SurfaceName.FREEFORM]] = Field(default=[SurfaceName.DSL], min_length=1)
    backends: list[TeamRolesName] = Field(default=[parse_team_roles("planner")], min_length=1)  # who plays
    thinking: Thinking = Thinking()  # how long writing a message keeps its writer from acting (default: no time)
    clusters: PositiveInt | None = None  # keep only the first N tasks (a team task is its own cluster): reduced runs
    match: list[str] = []  # keep only tasks whose id matches one of these shell patterns (``*golden*``, an exact id)
    repeats: PositiveInt = 1  # run each task N times, each a task of its own (``<id>#2``…): its own seed and record
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0
    bootstrap: BootstrapSpec = BootstrapSpec()
    world: WorldChoice = WorldChoice()
    execution: ExecutionSpec = ExecutionSpec()

    def summary(self) -> str:
        clusters = f" (first {self.clusters} tasks)" if self.clusters else ""
        clusters += f" matching {' or '.join(self.match)}" if self.match else ""
        clusters += f", each {self.repeats} times" if self.repeats > 1 else ""
        return (
            f"tasks from {', '.join(self.tasks)}{clusters}; modes {', '.join(self.modes)}; "
            f"surfaces {', '.join(self.surfaces)}; "
            f"backends {', '.join(backend.label for backend in self.backends)}"
            + ("" if self.thinking.none else f"; {self.thinking.describe()}")
        )


TeamTasks = tuple[tuple[str, AnyTask | Refusal], ...]
"""(file, task or its refusal) for every task of a config: loaded once on the driver, shipped to the workers."""
