"""The gate experiment's config: what its TOML file holds, validated when it loads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from gencoord.backends.families import DEFAULT_PEERS, PeerBackendName, parse_backend
from gencoord.eval.config import NAME_PATTERN, BootstrapSpec, ExecutionSpec
from gencoord.gate.adjudicators import LOGISTIC, check_adjudicator_name
from gencoord.gate.policy import GateCondition
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.team_files import AUTO, TaskFormatName
from gencoord.worlds.choice import WorldChoice


class GateExperimentConfig(BaseModel):
    """A gate experiment: gate conditions over instances of the dynamic suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    kind: Literal["gate"] = "gate"
    description: str = ""
    instances: PositiveInt
    seed: int = 0
    split: Literal["eval", "train"] = "eval"
    tasks: list[
        str
    ] = []  # team task files (relative to the config): the dynamic team suite; none: the built-in task graphs
    format: TaskFormatName = AUTO
    conditions: list[GateCondition] = Field(min_length=1)
    reference: GateCondition | None = GateCondition.COMMUNICATION_FIRST  # paired: condition − reference
    clusters: PositiveInt | None = None  # keep only the first N instances (the gate's clusters): reduced runs
    gate_config: str | None = None  # a gate TOML (weights, thresholds, …) instead of the packaged one
    adjudicator: str = LOGISTIC  # the gray zone's judge: logistic, api:<url>#<model> or model:<checkpoint>
    budget_factor: Annotated[float, Field(gt=0)] = 2.0  # round budget = factor × clean-run rounds + margin
    budget_margin: Annotated[int, Field(ge=0)] = 10
    thinking: Thinking = Thinking()  # a message's writing time in the world (default: none)
    helpers: PeerBackendName = parse_backend(DEFAULT_PEERS)  # who answers an escalation: rule, model:, api:
    world: WorldChoice = WorldChoice()  # Minecraft runs with the simulator alongside, compared action by action
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0
    bootstrap: BootstrapSpec = BootstrapSpec()
    execution: ExecutionSpec = ExecutionSpec()

    @field_validator("adjudicator")
    @classmethod
    def _known_adjudicator(cls, name: str) -> str:
        return check_adjudicator_name(name)

    @field_validator("thinking")
    @classmethod
    def _configured_thinking(cls, thinking: Thinking) -> Thinking:
        if thinking.measured:
            raise ValueError("the gate's messages are written by rules, which measure no time: give per_message_s")
        return thinking

    def summary(self) -> str:
        count = min(self.instances, self.clusters or self.instances)
        budget = f"budget {self.budget_factor:g} × clean rounds + {self.budget_margin}"
        setting = f"seed {self.seed}, {budget}, adjudicator {self.adjudicator}"
        setting += "" if self.thinking.none else f", {self.thinking.describe()}"
        setting += "" if self.helpers == DEFAULT_PEERS else f", helpers {self.helpers.label}"
        suite = (
            f"the team suite from {', '.join(Path(p).name for p in self.tasks)}"
            if self.tasks
            else "the task-graph suite"
        )
        return f"{count} {self.split} instances of {suite} ({setting}); conditions " + ", ".join(self.conditions)
