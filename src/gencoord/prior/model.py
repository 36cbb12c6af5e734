"""The schema of prior files, validated by pydantic when a prior loads.

Cross-references (a skill naming an unknown key, a counter offer naming an unknown
binding, ...) are checked here too, so a broken prior fails at load with the field
that is wrong instead of failing later in the middle of an episode.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from gencoord.prior.public import Ref

KeyType = Literal["quantity", "item", "agent", "ref", "binding", "role", "cells", "share"]
RefKind = Literal["container", "site", "station", "resource"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KeySpec(_Strict):
    type: KeyType
    full: str
    aliases: list[str] = Field(default_factory=list)
    kinds: list[RefKind] = Field(default_factory=list)


class SkillSpec(_Strict):
    doc: str
    args: list[str]
    required: list[str] = Field(default_factory=list)
    one_of: list[list[str]] = Field(default_factory=list)
    produces: str | None = None
    consumes: str | None = None
    after: list[str] = Field(default_factory=list)
    same: str | None = None
    station_block: str | None = None
    also_at: list[str] = Field(default_factory=list)  # other station blocks that serve (a smoker cooks food)


class BindingSpec(_Strict):
    sender: str
    receiver: str


class TemplateSpec(_Strict):
    family: str
    changed_field: str
    params: dict[str, PositiveInt] = Field(default_factory=dict)
    bindings: dict[str, BindingSpec]


class WorkcellMode(_Strict):
    can: list[str]
    accept_reason: str


class CounterOffer(_Strict):
    reason: str
    moves: dict[str, str]


class Grounding(_Strict):
    agents: list[str] = Field(min_length=2)
    roles: list[str] = Field(default_factory=list)
    refs: dict[str, Ref] = Field(default_factory=dict)


class Limits(_Strict):
    max_quantity: PositiveInt
    max_path_tasks: PositiveInt = 5  # the paper's cap on one path; team priors may raise it


class Feedback(_Strict):
    reject_reason: str


class PriorDocument(_Strict):
    """All sections of a prior, merged from its files."""

    game_data: str = "minecraft_1_21_4.json"
    limits: Limits
    keys: dict[str, KeySpec]
    skills: dict[str, SkillSpec]
    grounding: Grounding
    templates: dict[str, TemplateSpec] = Field(default_factory=dict)
    workcell_modes: dict[str, WorkcellMode] = Field(default_factory=dict)
    counter_offers: dict[str, CounterOffer] = Field(default_factory=dict)
    feedback: Feedback

    @model_validator(mode="after")
    def _cross_references(self) -> PriorDocument:
        problems: list[str] = []
        spellings: dict[str, str] = {}
        for key, spec in self.keys.items():
            for spelled in (key, *spec.aliases):
                if spelled in spellings and spellings[spelled] != key:
                    problems.append(f"keys.{key}: spelling {spelled!r} already belongs to {spellings[spelled]!r}")
                spellings[spelled] = key
            if spec.type == "ref" and not spec.kinds:
                problems.append(f"keys.{key}: a ref key needs `kinds`")
        for name, skill in self.skills.items():
            where = f"skills.{name!r}"
            problems += [f"{where}.args: unknown key {k!r}" for k in skill.args if k not in self.keys]
            problems += [f"{where}.required: {k!r} is not in args" for k in skill.required if k not in skill.args]
            problems += [
                f"{where}.one_of: {k!r} is not in args" for group in skill.one_of for k in group if k not in skill.args
            ]
            for field in ("produces", "same"):
                value = getattr(skill, field)
                if value is not None and value not in skill.args:
                    problems.append(f"{where}.{field}: {value!r} is not in args")
            if skill.consumes not in (None, "recipe") and skill.consumes not in skill.args:
                problems.append(f"{where}.consumes: {skill.consumes!r} is neither 'recipe' nor in args")
            problems += [f"{where}.after: unknown skill {s!r}" for s in skill.after if s not in self.skills]
            if skill.after and skill.same is None:
                problems.append(f"{where}: `after` needs `same` (the key both tasks must share)")
        for name, ref in self.grounding.refs.items():
            if ref.kind not in ("container", "site", "station", "resource"):
                problems.append(f"grounding.refs.{name}.kind: unknown kind {ref.kind!r}")
        codebook: dict[str, str] = {}
        for template, template_spec in self.templates.items():
            for binding in template_spec.bindings:
                if binding in codebook:
                    problems.append(f"templates.{template}: binding {binding!r} already used by {codebook[binding]}")
                codebook[binding] = template
        for mode, workcell in self.workcell_modes.items():
            problems += [
                f"workcell_modes.{mode}.can: unknown skill {s!r}" for s in workcell.can if s not in self.skills
            ]
        for offer, counter in self.counter_offers.items():
            for source, target in counter.moves.items():
                if source not in codebook or target not in codebook:
                    problems.append(f"counter_offers.{offer}.moves: unknown binding in {source!r} -> {target!r}")
                elif codebook[source] != codebook[target]:
                    problems.append(
                        f"counter_offers.{offer}.moves: {source!r} and {target!r} are in different templates"
                    )
        if problems:
            raise ValueError("; ".join(problems))
        return self
