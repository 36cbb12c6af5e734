"""What each trainer reads: one typed config per trainer, from the command line or a TOML file.

Four trainers share no option set: the tiny model trained from scratch, the tiny team model,
the paper's fine-tune of a local Hugging Face checkpoint, and a LoRA adapter on a pretrained
base. Each config forbids keys it does not read, so an option given to the wrong trainer
(``--renaming`` with ``--records team``, ``--layers`` with ``--model``) is refused by name
rather than silently ignored. Torch loads only when a config trains (:meth:`train`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, ValidationError, model_validator

from gencoord._config import parse_toml, read_text, validation_message
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError, did_you_mean
from gencoord.models.variant import Horizon, ModelSpec, Records, Target, TeamRoles, Templates
from gencoord.prior.views import PriorView
from gencoord.reasons import Reason
from gencoord.train.team_data import SMALL_TEAMS

if TYPE_CHECKING:
    from gencoord.models.manifest import TrainReport

Log = Callable[[int, float], None]
Share = Annotated[float, Field(ge=0.0, le=1.0)]
Rate = Annotated[float, Field(ge=1e-6, le=1.0)]


class _Training(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)

    out: Path
    seed: int = 0


class _Sized(_Training):
    """A model built here (not loaded): its width, depth and optimizer, on the CPU."""

    steps: PositiveInt = 4000
    layers: Annotated[int, Field(ge=1, le=12)]
    hidden: Annotated[int, Field(ge=16, le=1024)]
    batch: PositiveInt
    threads: PositiveInt = 2
    lr: Rate
    warmup: NonNegativeInt
    evaluate: NonNegativeInt = 64

    @model_validator(mode="after")
    def _heads_divide(self) -> _Sized:
        if self.hidden % 16:
            raise ValueError(f"hidden must be a multiple of 16 (4 heads of a multiple of 4), not {self.hidden}")
        return self


class TinyTraining(_Sized):
    """The tiny commitment model from scratch on the suites' rows (``gencoord train``)."""

    trainer: Literal["tiny"] = "tiny"
    target: Target = Target.DIRECT
    surface: SurfaceName = SurfaceName.DSL
    horizon: Horizon = Horizon.MULTI
    records: Records = Records.ALL
    view: PriorView = PriorView.NONE
    templates: Templates = Templates.TRAINING
    layers: Annotated[int, Field(ge=1, le=12)] = 2
    hidden: Annotated[int, Field(ge=16, le=1024)] = 64
    batch: PositiveInt = 8
    lr: Rate = 5e-3
    warmup: NonNegativeInt = 50
    renaming: Share = 0.0
    restructuring: Share = 0.0
    siblings: Share = 0.0
    place_siblings: Share = 0.0
    slot_names: bool = False

    @model_validator(mode="after")
    def _not_team(self) -> TinyTraining:
        if self.records is Records.TEAM:
            raise ValueError("team records train with the team trainer (trainer = 'team')")
        return self

    def train(self, log: Log) -> TrainReport:
        from gencoord.train.tiny import TinyPreset, train_tiny  # noqa: PLC0415  (torch loads only to train)

        preset = TinyPreset(
            layers=self.layers,
            hidden=self.hidden,
            head_dim=self.hidden // TinyPreset.heads,
            ffn=4 * self.hidden,
            renaming=self.renaming,
            restructuring=self.restructuring,
            siblings=self.siblings,
            place_siblings=self.place_siblings,
            batch=self.batch,
            slot_names=self.slot_names,
            threads=self.threads,
            lr=self.lr,
            warmup=self.warmup,
        )
        spec = ModelSpec(self.target, self.surface, self.view, True, self.horizon, self.records, self.templates)
        return train_tiny(spec, self.out, self.steps, self.seed, self.evaluate, preset=preset, log=log)


class TeamTraining(_Sized):
    """The tiny team model from scratch on generated team tasks (``gencoord train --records team``)."""

    trainer: Literal["team"] = "team"
    surface: SurfaceName = SurfaceName.DSL
    roles: TeamRoles = TeamRoles.EVERY
    # team sizes of the generated tasks, drawn uniformly from this list (a size listed twice is drawn twice as often)
    team_sizes: tuple[Annotated[int, Field(ge=2, le=8)], ...] = SMALL_TEAMS
    minutes: Annotated[float, Field(ge=0.1)] | None = None
    layers: Annotated[int, Field(ge=1, le=12)] = 3
    hidden: Annotated[int, Field(ge=16, le=1024)] = 128
    batch: PositiveInt = 16
    lr: Rate = 3e-3
    warmup: NonNegativeInt = 100

    def train(self, log: Log) -> TrainReport:
        from gencoord.train.team import TeamPreset, train_team  # noqa: PLC0415  (torch loads only to train)

        preset = TeamPreset(
            layers=self.layers,
            hidden=self.hidden,
            head_dim=self.hidden // TeamPreset.heads,
            ffn=4 * self.hidden,
            batch=self.batch,
            threads=self.threads,
            lr=self.lr,
            warmup=self.warmup,
        )
        return train_team(
            str(self.out),
            self.steps,
            self.seed,
            self.minutes,
            self.evaluate,
            preset,
            log,
            self.surface,
            self.roles,
            self.team_sizes,
        )


class CheckpointTraining(_Training):
    """The paper's fine-tune of a local Hugging Face causal LM (``gencoord train --model``)."""

    trainer: Literal["checkpoint"] = "checkpoint"
    model: Path
    target: Target = Target.DIRECT
    surface: SurfaceName = SurfaceName.DSL
    horizon: Horizon = Horizon.MULTI
    records: Records = Records.ALL
    roles: TeamRoles = TeamRoles.EVERY
    view: PriorView = PriorView.FULL
    templates: Templates = Templates.TRAINING
    epochs: PositiveInt = 2
    micro_batch: PositiveInt = 4
    evaluate: NonNegativeInt = 64

    @model_validator(mode="after")
    def _roles_of_a_team(self) -> CheckpointTraining:
        if self.roles is not TeamRoles.EVERY and self.records is not Records.TEAM:
            raise ValueError(f"roles = {self.roles.value!r} trains a team checkpoint: give records = 'team'")
        return self

    def spec(self) -> ModelSpec:
        return ModelSpec(self.target, self.surface, self.view, False, self.horizon, self.records, self.templates)

    def train(self, log: Log) -> TrainReport:
        from gencoord.train.data import fixed_training_rows, write_rows  # noqa: PLC0415
        from gencoord.train.hf import PaperSettings, train_checkpoint  # noqa: PLC0415  (torch loads only to train)
        from gencoord.train.team import fixed_team_rows, team_evaluation_rows  # noqa: PLC0415

        spec, evaluation = self.spec(), None
        if spec.records is Records.TEAM:
            rows = fixed_team_rows(surface=spec.surface, roles=self.roles)
            evaluation = team_evaluation_rows(self.evaluate, self.seed, spec.surface, self.roles)
        else:
            rows = fixed_training_rows(spec)  # the same for every seed, as the paper's seeds share one data hash
        write_rows(rows, self.out / "data", "training", spec)
        settings = PaperSettings(epochs=self.epochs, micro_batch=self.micro_batch)
        return train_checkpoint(self.model, rows, spec, self.out, settings, self.seed, log, self.evaluate, evaluation)


class LoraTraining(_Training):
    """A LoRA adapter on a pretrained chat model, on the team rows or the paper's (``gencoord finetune``)."""

    trainer: Literal["lora"] = "lora"
    base: str = "smollm2-135m-instruct"
    records: Records = Records.TEAM
    target: Target = Target.DIRECT
    surface: SurfaceName = SurfaceName.DSL
    horizon: Horizon = Horizon.MULTI
    view: PriorView | None = None
    templates: Templates = Templates.TRAINING
    steps: PositiveInt = 10_000
    minutes: Annotated[float, Field(ge=0.1)] | None = None
    roles: TeamRoles = TeamRoles.EVERY
    rank: PositiveInt = 16
    batch: PositiveInt = 8
    lr: Rate = 1e-3
    threads: PositiveInt = 2
    evaluate: NonNegativeInt = 8

    @model_validator(mode="after")
    def _team_or_paper(self) -> LoraTraining:
        """Team rows have one shape (direct, multi-step, no prior view); the paper's rows take no team roles."""
        if self.records is Records.TEAM:
            given = {"target": self.target is not Target.DIRECT, "horizon": self.horizon is not Horizon.MULTI}
            given |= {"view": self.view is not None, "templates": self.templates is not Templates.TRAINING}
            named = [key for key, differs in given.items() if differs]
            if named:
                raise ValueError(f"{named[0]} shapes the paper's rows: give records other than 'team'")
        elif self.roles is not TeamRoles.EVERY:
            raise ValueError(f"roles = {self.roles.value!r} trains a team adapter: give records = 'team'")
        return self

    def spec(self) -> ModelSpec:
        """What the adapter reads and writes; the paper's rows show the full prior view unless told otherwise (a
        pretrained model copies names from its view, as the held-out templates ask)."""
        if self.records is Records.TEAM:
            return ModelSpec(records=Records.TEAM, surface=self.surface, compact=True)
        view = PriorView.FULL if self.view is None else self.view
        return ModelSpec(self.target, self.surface, view, True, self.horizon, self.records, self.templates)

    def train(self, log: Log) -> TrainReport:
        from gencoord.train.lora import LoraSettings, train_lora  # noqa: PLC0415  (torch loads only to train)

        settings = LoraSettings(
            rank=self.rank,
            alpha=2 * self.rank,
            lr=self.lr,
            batch=self.batch,
            micro_batch=min(4, self.batch),
            threads=self.threads,
        )
        return train_lora(
            self.out,
            self.base,
            self.steps,
            self.minutes,
            self.seed,
            self.evaluate,
            settings,
            log,
            self.roles,
            spec=self.spec(),
        )


AnyTraining = TinyTraining | TeamTraining | CheckpointTraining | LoraTraining
TRAINERS: dict[str, type[AnyTraining]] = {
    "tiny": TinyTraining,
    "team": TeamTraining,
    "checkpoint": CheckpointTraining,
    "lora": LoraTraining,
}
SELECTED_BY = {
    "tiny": "the default",
    "team": "--records team",
    "checkpoint": "--model",
    "lora": "gencoord finetune",
}
"""How the command line chooses each trainer, for the refusal of an option it does not read."""


def _option(key: str, flags: bool) -> str:
    return f"--{key.replace('_', '-')}" if flags else key


def training_config(data: dict[str, Any], origin: str = "the command line") -> AnyTraining:
    """``data`` (a TOML document or the options given) as its trainer's config; its ``trainer`` key picks it.

    A key the chosen trainer does not read is refused (``OPTION_NOT_READ``) with the trainers
    that do read it; any other problem is ``CONFIG_INVALID`` naming the field.
    """
    flags = origin == "the command line"
    name = str(data.get("trainer", "tiny"))
    model = TRAINERS.get(name)
    if model is None:
        raise ConfigError(Reason.UNKNOWN_TRAINER, f"{origin}: unknown trainer {name!r}; one of {', '.join(TRAINERS)}")
    unread = [key for key in data if key not in model.model_fields]
    if unread:
        key = unread[0]
        readers = [other for other, fields in TRAINERS.items() if key in fields.model_fields]
        chosen = f"the {name} trainer ({SELECTED_BY[name]})" if flags else f"the {name} trainer"
        which = f"the {', '.join(readers)} trainer{'s read' if len(readers) > 1 else ' reads'} it"
        hint = f"; {which}" if readers else did_you_mean(key, model.model_fields)
        said = "" if flags else f"{origin}: "
        raise ConfigError(Reason.OPTION_NOT_READ, f"{said}{_option(key, flags)} is not read by {chosen}{hint}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = validation_message(exc, model=model)
        if flags:  # "out: Field required" as the option a user types
            field, _, said = problem.partition(": ")
            problem = f"{_option(field, flags)}: {said}" if field in model.model_fields else problem
        else:
            problem = f"{origin}: {problem}"
        raise ConfigError(Reason.CONFIG_INVALID, problem) from None


def load_training(path: Path, given: dict[str, Any] | None = None) -> AnyTraining:
    """A training config from a TOML file, with ``given`` (options on the command line) over its keys."""
    data = parse_toml(read_text(path, ConfigError), str(path), ConfigError)
    return training_config({**data, **(given or {})}, str(path))
