"""The task-suite document (``data/suites.toml``): original-task goals, parameters, splits.

Loaded once and validated against the prior: every template and binding exists, every
goal names a real ref or role and item, every parameter set composes into a contract-
valid proposal. A user suite file gets the same checks and a stable error code.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from gencoord._config import load_model, package_text, read_text
from gencoord.errors import ConfigError, GencoordError
from gencoord.prior.compose import compose
from gencoord.prior.contract import check_proposal
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.runtime.verify import Kind, Requirement

ROLES = ("sender", "receiver")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GoalSpec(_Strict):
    kind: Kind
    holder: str
    item: str
    q: int | str
    by: Literal["sender", "receiver"] | None = None

    def requirement(self, params: dict[str, int], agents: dict[str, str]) -> Requirement:
        """The goal conjunct for one episode: parameters filled, roles replaced by agent ids."""
        quantity = self.q if isinstance(self.q, int) else params[self.q]
        holder = agents.get(self.holder, self.holder)
        return Requirement(self.kind, holder, self.item, quantity, None if self.by is None else agents[self.by])


class ForwardTemplate(_Strict):
    params: list[dict[str, PositiveInt]] = Field(min_length=1)
    goals: dict[str, list[GoalSpec]]


class ForwardSuite(_Strict):
    held_out_templates: list[str]
    representation_templates: list[str] = Field(min_length=1)
    structure_templates: list[str] = []  # drawn by the visibility pool only (paper S9)
    visibility_motifs: dict[str, list[str]] = {}  # topology motif → its templates
    templates: dict[str, ForwardTemplate]

    @property
    def library(self) -> list[str]:
        """The templates every split but the visibility pool draws (training ones and held-out ones)."""
        return sorted(name for name in self.templates if name not in self.structure_templates)

    def motif_of(self, template: str) -> str | None:
        return next((motif for motif, names in self.visibility_motifs.items() if template in names), None)


class CapabilityGoal(_Strict):
    initial: str
    params: dict[str, PositiveInt]
    goal: list[GoalSpec] = Field(min_length=1)
    mode_goal: dict[str, list[GoalSpec]] = {}


class WorkcellMode(_Strict):
    forbids: list[str]


class CapabilitySuite(_Strict):
    world_variants: PositiveInt
    goals: dict[str, CapabilityGoal]
    modes: dict[str, WorkcellMode]


class Distractor(_Strict):
    name: str
    kind: Literal["container", "resource", "site"]
    block: str | None = None
    contents: dict[str, PositiveInt] = {}


class VariantSpace(_Strict):
    jitter: int = Field(ge=0)
    agent_spawn: list[tuple[int, int, int]] = Field(min_length=2)
    tool_tiers: list[list[str]] = Field(min_length=1)
    max_distractors: int = Field(ge=0)
    distractors: list[Distractor]


class SuiteDocument(_Strict):
    forward: ForwardSuite
    goal_capability: CapabilitySuite
    variants: VariantSpace


def _goal_problems(goals: list[GoalSpec], params: dict[str, int], prior: Prior, where: str) -> list[str]:
    refs = prior.default_episode.refs
    problems = []
    for goal in goals:
        if goal.holder not in ROLES and goal.holder not in refs:
            problems.append(f"{where}: goal holder {goal.holder!r} is neither a ref nor a role")
        if not prior.game.is_item(goal.item):
            problems.append(f"{where}: {goal.item!r} is not a Minecraft item")
        if isinstance(goal.q, str) and goal.q not in params:
            problems.append(f"{where}: goal quantity {goal.q!r} is not a template parameter")
    return problems


def _check_composes(prior: Prior, template: str, binding: str, params: dict[str, int], where: str) -> list[str]:
    sender, receiver = prior.default_episode.agents[:2]
    episode = prior.episode(template)
    try:
        proposal = compose(prior, template, binding, sender=sender, receiver=receiver, params=params)
        check_proposal(proposal, sender, prior, episode)
    except GencoordError as error:
        return [f"{where}: {error}"]
    return []


def _variant_problems(space: VariantSpace, prior: Prior) -> list[str]:
    problems = []
    names = [d.name for d in space.distractors]
    for distractor in space.distractors:
        where = f"variants.distractors.{distractor.name}"
        if distractor.name in prior.default_episode.refs or names.count(distractor.name) > 1:
            problems.append(f"{where}: the name is already taken")
        if distractor.kind == "resource" and distractor.block not in prior.game.blocks:
            problems.append(f"{where}: a resource needs a breakable block, not {distractor.block!r}")
        problems += [
            f"{where}: {item!r} is not a Minecraft item" for item in distractor.contents if not prior.game.is_item(item)
        ]
    problems += [
        f"variants.tool_tiers: {tool!r} is not a Minecraft item"
        for tier in space.tool_tiers
        for tool in tier
        if not prior.game.is_item(tool)
    ]
    return problems


def validate(document: SuiteDocument, prior: Prior) -> None:
    """Refuse a suite whose templates, goals, splits or variants do not fit ``prior`` (the first problem, counted)."""
    problems = _forward_problems(document.forward, prior)
    problems += _split_problems(document.forward)
    problems += _capability_problems(document.goal_capability, prior)
    problems += _variant_problems(document.variants, prior)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(Reason.INVALID_SUITE, problems[0] + more)


def _forward_problems(forward: ForwardSuite, prior: Prior) -> list[str]:
    """Each forward template: in the prior, its goals covering its bindings, every goal composable."""
    problems: list[str] = []
    for name, spec in forward.templates.items():
        template = prior.templates.get(name)
        if template is None:
            problems.append(f"forward.templates.{name}: the prior has no such template")
            continue
        if set(spec.goals) != set(template.bindings):
            problems.append(f"forward.templates.{name}: goals must cover exactly {sorted(template.bindings)}")
        for binding, goals in spec.goals.items():
            for params in spec.params:
                where = f"forward.templates.{name}.{binding} {params}"
                problems += _goal_problems(goals, params, prior, where)
                if binding in template.bindings:
                    problems += _check_composes(prior, name, binding, params, where)
    return problems


def _split_problems(forward: ForwardSuite) -> list[str]:
    """The held-out, representation and structure splits and the visibility motifs: forward templates, apart."""
    motif_templates = [name for names in forward.visibility_motifs.values() for name in names]
    problems: list[str] = []
    for field, names in (
        ("held_out_templates", forward.held_out_templates),
        ("representation_templates", forward.representation_templates),
        ("structure_templates", forward.structure_templates),
        ("visibility_motifs", motif_templates),
    ):
        problems += [
            f"forward.{field}: {name!r} is not a forward template" for name in names if name not in forward.templates
        ]
    problems += [
        f"forward.structure_templates: {name!r} is also held out or a representation template"
        for name in forward.structure_templates
        if name in forward.held_out_templates or name in forward.representation_templates
    ]
    problems += [
        f"forward.structure_templates: {name!r} belongs to no visibility motif"
        for name in forward.structure_templates
        if name not in motif_templates
    ]
    problems += [
        f"forward.visibility_motifs: {name!r} is in more than one motif"
        for name in set(motif_templates)
        if motif_templates.count(name) > 1
    ]
    problems += [
        f"forward.visibility_motifs.{motif}: lists no template"
        for motif, names in forward.visibility_motifs.items()
        if not names
    ]
    return problems


def _capability_problems(capability: CapabilitySuite, prior: Prior) -> list[str]:
    """Each Goal×Capability goal: a binding of its template, composable, its modes the prior's workcell modes."""
    problems: list[str] = []
    for name, goal in capability.goals.items():
        template = prior.templates.get(name)
        if template is None or goal.initial not in template.bindings:
            problems.append(f"goal_capability.goals.{name}: {goal.initial!r} is not a binding of {name!r}")
            continue
        problems += _goal_problems(goal.goal, goal.params, prior, f"goal_capability.goals.{name}")
        for mode, extra in goal.mode_goal.items():
            if mode not in capability.modes:
                problems.append(f"goal_capability.goals.{name}.mode_goal: {mode!r} is not a listed mode")
            problems += _goal_problems(extra, goal.params, prior, f"goal_capability.goals.{name}.mode_goal.{mode}")
        problems += [
            p
            for binding in template.bindings
            for p in _check_composes(prior, name, binding, goal.params, f"goal_capability.goals.{name}.{binding}")
        ]
    for mode in capability.modes:
        if mode not in prior.workcell_modes:
            problems.append(f"goal_capability.modes.{mode}: the prior has no such workcell mode")
    return problems


def load_suites(path: Path | None = None, prior: Prior | None = None) -> SuiteDocument:
    """The suite document at ``path`` (default: the package's), validated against ``prior``."""
    origin = str(path) if path else "suites.toml"
    text = package_text("gencoord.tasks", "suites.toml") if path is None else read_text(path, ConfigError)
    document = load_model(SuiteDocument, text, origin, ConfigError, Reason.INVALID_SCHEMA)
    validate(document, prior or default_prior())
    return document


@cache
def default_suites() -> SuiteDocument:
    """The paper's task suites as shipped (loaded once)."""
    return load_suites()
