"""The paper's training rows as an endless stream of rounds, each over every training template once.

Models that learn from fresh rows every step draw from here: the tiny models trained from scratch and LoRA
adapters on a pretrained base. A fixed small set is memorized, not learned; new worlds every round make a model
copy from the task in view.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from gencoord.models.variant import ModelSpec
from gencoord.prior.load import default_prior
from gencoord.tasks.cluster import Cluster, Split, draw_pool, forward_space
from gencoord.tasks.cross_products import observed_cases
from gencoord.tasks.suites import default_suites
from gencoord.train.data import SupervisionRow, build_rows, observed_rows, training_split


def fresh_rows(spec: ModelSpec, seed: int) -> Iterator[SupervisionRow]:
    """Endless training rows: every round draws new world variants from a new seed.

    Each round covers every (template, parameter set) of the training split once (a pool
    twice the size of that space, in matched pairs) plus one Goal×Capability block, so no
    template is starved by the order pools enumerate them in; a composition model's round is
    two training worlds of each of the library's complete cases.
    """
    for rows in training_rounds(spec, seed):
        yield from rows


def training_rounds(spec: ModelSpec, seed: int) -> Iterator[list[SupervisionRow]]:
    """The rounds :func:`fresh_rows` draws from, each shuffled; deterministic in ``seed``."""
    prior, suites = default_prior(), default_suites()
    rng = random.Random(seed)
    split = training_split(spec)
    forward = 2 * len(forward_space(split, suites))
    block = len(suites.goal_capability.goals) * len(suites.goal_capability.modes)
    while True:
        # both seeds are drawn whatever the record set, so no set shifts another's rounds
        forward_seed, capability_seed = rng.randrange(1_000_000), rng.randrange(1_000_000)
        if "composition" in spec.records.suites:
            cases = 2 * len(observed_cases(prior, suites))
            rows = observed_rows(cases, rng.randrange(1_000_000), prior, suites, spec, Split.TRAINING)
            rng.shuffle(rows)
            yield rows
            continue
        clusters: tuple[Cluster, ...] = ()
        if "forward" in spec.records.suites:
            clusters += draw_pool(split, forward, seed=forward_seed)
        if "goal_capability" in spec.records.suites:
            clusters += draw_pool(Split.GOAL_CAPABILITY, block, seed=capability_seed)
        rows = build_rows(clusters, prior, suites, spec, seed=rng.randrange(1000))
        rng.shuffle(rows)
        yield rows
