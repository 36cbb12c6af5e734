"""Semantic clusters and the pools the experiments draw them from.

A cluster is the statistical unit: one template instance (binding, parameters, world
variant). Forward clusters come in matched pairs that share one world and differ only
in the sender's private binding; Goal×Capability clusters come in pairs that share the
requester's view and differ only in the peer's private workcell mode.

Splits are fixed by construction, not by filtering: held-out templates and the
held-out (template, parameter) cross-products never enter the training split, and
every split draws its world variants from its own seed namespace.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from gencoord.errors import ConfigError
from gencoord.prior.load import default_prior
from gencoord.reasons import Reason
from gencoord.tasks.suites import SuiteDocument, default_suites


class Split(StrEnum):
    TRAINING = "training"
    IN_DISTRIBUTION = "in_distribution"
    HELD_OUT_TEMPLATE = "held_out_template"
    CROSS_PRODUCT = "cross_product"
    GOAL_CAPABILITY = "goal_capability"
    # the paper's eight templates (suites' representation_templates): its representation
    # models' training split, and the unseen worlds its representation pool is drawn from
    REPRESENTATION_TRAINING = "representation_training"
    REPRESENTATION = "representation"
    # the task-structure visibility pool (paper S9): each topology motif's templates in turn,
    # the unseen motifs' (suites' structure_templates) drawn by no other split
    VISIBILITY = "visibility"


PAPER_POOLS: dict[str, tuple[Split, int]] = {
    "representation": (Split.REPRESENTATION, 128),
    "visibility": (Split.VISIBILITY, 96),
    "timing": (Split.IN_DISTRIBUTION, 40),
    "request_intervention": (Split.IN_DISTRIBUTION, 160),
    "held_out_templates": (Split.HELD_OUT_TEMPLATE, 80),
    "cross_products": (Split.CROSS_PRODUCT, 60),
    "matched_backend": (Split.IN_DISTRIBUTION, 128),
    "goal_capability": (Split.GOAL_CAPABILITY, 40),
    "training": (Split.TRAINING, 480),
    "representation_training": (Split.REPRESENTATION_TRAINING, 480),
    "goal_capability_training": (Split.GOAL_CAPABILITY, 160),
}
"""The paper's evidence pools: name → (split, clusters)."""

FIRST_PAIR = {"timing": 10_000, "goal_capability_training": 10_000}
"""Where a pool's pairs (Goal×Capability: worlds) start in its split's sequence (default 0).
The in-distribution quality pools share one sequence (the smaller nested in the larger);
the representation pool has a split of its own, as it spans the paper's eight templates;
the timing pool is drawn far past all of them, so it is disjoint from every quality pool,
and the Goal×Capability training pool (160 clusters: the paper's 320 records per stage
over two roles) is disjoint from the 40-cluster evaluation pool the same way."""


@dataclass(frozen=True, slots=True)
class WorldVariant:
    """What varies between worlds of one template: layout, quantities, tools, distractors."""

    key: str  # the namespace:seed:index the variant was drawn from
    params: Mapping[str, int]
    param_choice: int
    offsets: Mapping[str, tuple[int, int]]  # ref or distractor → (dx, dz)
    spawns: tuple[tuple[int, int, int], ...]  # per agent slot
    tools: tuple[tuple[str, ...], ...]  # per agent slot
    distractors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cluster:
    id: str
    suite: Literal["forward", "goal_capability"]
    template: str
    binding: str | None  # forward: the sender's private binding; Goal×Capability: None
    mode: str | None  # Goal×Capability: the peer's private workcell mode
    pair: str  # clusters sharing this id share the world (and the requester's view)
    split: Split
    variant: WorldVariant


def _variant(
    rng: random.Random, key: str, params: Mapping[str, int], choice: int, suites: SuiteDocument, refs: list[str]
) -> WorldVariant:
    space = suites.variants
    names = [d.name for d in space.distractors]
    count = rng.randint(0, min(space.max_distractors, len(names)))
    distractors = tuple(sorted(rng.sample(names, count)))
    jitter = space.jitter
    offsets = {name: (rng.randint(-jitter, jitter), rng.randint(-jitter, jitter)) for name in [*refs, *names]}
    spawns = tuple(
        (x + rng.randint(-jitter, jitter), y, z + rng.randint(-jitter, jitter)) for x, y, z in space.agent_spawn
    )
    tools = tuple(tuple(rng.choice(space.tool_tiers)) for _ in space.agent_spawn)
    return WorldVariant(key, dict(params), choice, offsets, spawns, tools, distractors)


def _held_out_choice(template: str, suites: SuiteDocument) -> int:
    """The parameter choice of a seen template kept out of training (the cross-product)."""
    seen = [name for name in suites.forward.library if name not in suites.forward.held_out_templates]
    return seen.index(template) % len(suites.forward.templates[template].params)


def _kept_choices(name: str, suites: SuiteDocument) -> list[int]:
    """A template's parameter choices but the cross-product of a seen library template."""
    forward = suites.forward
    seen = name in forward.library and name not in forward.held_out_templates
    return [
        choice
        for choice in range(len(forward.templates[name].params))
        if not seen or choice != _held_out_choice(name, suites)
    ]


def _interleaved(groups: dict[str, list[tuple[str, int]]]) -> list[tuple[str, int]]:
    """Round r lists every group's r-th entry (cycling its own), over as many rounds as make
    each group come out whole, so that any run of pairs drawn in order spreads evenly."""
    rounds = math.lcm(*(len(entries) for entries in groups.values()))
    return [entries[r % len(entries)] for r in range(rounds) for entries in groups.values()]


def _representation_space(suites: SuiteDocument) -> list[tuple[str, int]]:
    """The representation splits' (template, parameter choice) combinations, interleaved by
    template: the 128-cluster pool holds 16 of each of the eight, as the paper's does."""
    return _interleaved(
        {
            name: [(name, choice) for choice in _kept_choices(name, suites)]
            for name in sorted(suites.forward.representation_templates)
        }
    )


def _visibility_space(suites: SuiteDocument) -> list[tuple[str, int]]:
    """The visibility pool's combinations, interleaved by motif: 96 clusters hold 32 of each of three."""
    motifs = suites.forward.visibility_motifs
    if not motifs:
        raise ConfigError(
            Reason.NO_VISIBILITY_MOTIFS, "the suites name no visibility motifs to draw a visibility pool from"
        )
    return _interleaved(
        {
            motif: [(name, choice) for name in sorted(names) for choice in _kept_choices(name, suites)]
            for motif, names in motifs.items()
        }
    )


def forward_space(split: Split, suites: SuiteDocument) -> list[tuple[str, int]]:
    """(template, parameter choice) combinations a split may draw."""
    if split in (Split.REPRESENTATION, Split.REPRESENTATION_TRAINING):
        return _representation_space(suites)
    if split is Split.VISIBILITY:
        return _visibility_space(suites)
    forward = suites.forward
    space = []
    for name in forward.library:
        held_out = name in forward.held_out_templates
        for choice in range(len(forward.templates[name].params)):
            if split is Split.HELD_OUT_TEMPLATE:
                keep = held_out
            elif held_out:
                keep = False
            elif split is Split.CROSS_PRODUCT:
                keep = choice == _held_out_choice(name, suites)
            else:
                keep = choice != _held_out_choice(name, suites)
            if keep:
                space.append((name, choice))
    return space


def draw_pool(
    split: Split | str, size: int, seed: int = 0, suites: SuiteDocument | None = None, first: int = 0
) -> tuple[Cluster, ...]:
    """``size`` clusters of ``split``, in matched pairs from pair ``first`` on, deterministic in ``seed``."""
    suites = suites or default_suites()
    split = Split(split)
    refs = sorted(default_prior().default_episode.refs)
    if split is Split.GOAL_CAPABILITY:
        return _capability_pool(size, seed, suites, refs, first)
    if size <= 0 or size % 2:
        raise ConfigError(
            Reason.POOL_SIZE, f"a forward pool holds matched pairs: size must be even and positive, got {size}"
        )
    space = forward_space(split, suites)
    clusters: list[Cluster] = []
    for index in range(first, first + size // 2):
        template, choice = space[index % len(space)]
        key = f"{split.value}:{seed}:{index}"
        rng = random.Random(key)
        params = suites.forward.templates[template].params[choice]
        variant = _variant(rng, key, params, choice, suites, refs)
        pair = f"{split.value}-{seed}-{index:04d}"
        for binding in sorted(suites.forward.templates[template].goals):
            cluster_id = f"{pair}-{template}-{binding}"
            clusters.append(Cluster(cluster_id, "forward", template, binding, None, pair, split, variant))
    return tuple(clusters)


def _capability_pool(
    size: int, seed: int, suites: SuiteDocument, refs: list[str], first: int = 0
) -> tuple[Cluster, ...]:
    capability = suites.goal_capability
    goals, modes = sorted(capability.goals), sorted(capability.modes)
    block = len(goals) * len(modes)
    if size <= 0 or size % block:
        raise ConfigError(
            Reason.POOL_SIZE, f"a Goal×Capability pool holds whole goal×mode blocks: size must be a multiple of {block}"
        )
    clusters: list[Cluster] = []
    for world in range(first, first + size // block):
        for goal in goals:
            key = f"{Split.GOAL_CAPABILITY.value}:{seed}:{world}:{goal}"
            variant = _variant(random.Random(key), key, capability.goals[goal].params, 0, suites, refs)
            pair = f"gc-{seed}-{world:02d}-{goal}"
            for mode in modes:
                clusters.append(
                    Cluster(f"{pair}-{mode}", "goal_capability", goal, None, mode, pair, Split.GOAL_CAPABILITY, variant)
                )
    return tuple(clusters)


def paper_pool(name: str, seed: int = 0, suites: SuiteDocument | None = None) -> tuple[Cluster, ...]:
    """One of the paper's evidence pools by name (see PAPER_POOLS)."""
    if name not in PAPER_POOLS:
        raise ConfigError(Reason.UNKNOWN_POOL, f"unknown pool {name!r}; known: {', '.join(sorted(PAPER_POOLS))}")
    split, size = PAPER_POOLS[name]
    return draw_pool(split, size, seed, suites, FIRST_PAIR.get(name, 0))


def make_cluster(
    template: str,
    choice: str,
    seed: int = 0,
    *,
    param_choice: int = 0,
    suites: SuiteDocument | None = None,
) -> Cluster:
    """One cluster outside any pool: ``choice`` is a binding (forward) or a workcell mode.

    The world variant is drawn from ``seed`` in its own namespace, so an ad-hoc episode
    (the CLI's) never reuses a pool's world by accident.
    """
    suites = suites or default_suites()
    refs = sorted(default_prior().default_episode.refs)
    key = f"adhoc:{seed}:{template}"
    forward = suites.forward.templates.get(template)
    if forward is not None:
        if choice not in forward.goals:
            raise ConfigError(
                Reason.UNKNOWN_BINDING, f"{choice!r} is not a binding of {template}; one of {sorted(forward.goals)}"
            )
        if param_choice not in range(len(forward.params)):
            raise ConfigError(
                Reason.PARAM_CHOICE, f"{template} has {len(forward.params)} parameter sets, not {param_choice + 1}"
            )
        variant = _variant(random.Random(key), key, forward.params[param_choice], param_choice, suites, refs)
        return Cluster(
            f"adhoc-{seed}-{template}-{choice}", "forward", template, choice, None, key, Split.IN_DISTRIBUTION, variant
        )
    capability = suites.goal_capability
    if template not in capability.goals:
        known = sorted([*suites.forward.templates, *capability.goals])
        raise ConfigError(Reason.UNKNOWN_TEMPLATE, f"unknown template {template!r}; one of {', '.join(known)}")
    if choice not in capability.modes:
        raise ConfigError(Reason.UNKNOWN_MODE, f"{choice!r} is not a workcell mode; one of {sorted(capability.modes)}")
    variant = _variant(random.Random(key), key, capability.goals[template].params, 0, suites, refs)
    return Cluster(
        f"adhoc-{seed}-{template}-{choice}",
        "goal_capability",
        template,
        None,
        choice,
        key,
        Split.GOAL_CAPABILITY,
        variant,
    )
