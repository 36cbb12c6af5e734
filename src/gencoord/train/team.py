"""A tiny team model trained on the CPU: one checkpoint for the lead and the peer roles, or for one of them.

Rows come fresh every step from generated MINDcraft-format tasks (:mod:`gencoord.train.team_data`),
so the model sees a new task each time rather than memorizing a set. Its tokenizer holds no item
name: every item is read and written through a name slot (:class:`TextCodec`), and ``=`` and ``,``
stand apart from names, so a name never seen in training is copied like a familiar one. Batches
hold the three stages in fixed shares (the lead's proposal is the rarest row and the hardest); a checkpoint
for one role (``roles``) trains on that role's stages only, with all its steps, and rows of the other
role are dropped as they come.
Training stops at a step budget or a time budget, whichever comes first; the report scores greedy
exact match per stage on rows of training families and of held-out families.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.models.codec import SLOT_TOKENS, TextCodec
from gencoord.models.manifest import TrainReport
from gencoord.models.variant import ModelSpec, Records, TeamRoles
from gencoord.prior.load import team_prior
from gencoord.protocol.generation import Stage
from gencoord.reasons import Reason
from gencoord.train.common import after_warmup, masked_batch, optimizer_step, scored, use_threads, warmup_cosine
from gencoord.train.data import SupervisionRow
from gencoord.train.team_data import HELD_OUT, SMALL_TEAMS, TRAINING, team_rows
from gencoord.train.tiny import TinyPreset, build_model, build_tokenizer, save

TEAM_PIECES = r"[a-z_]+\.[a-z_]+\(|[A-Za-z_]+|\d| > |\n|."
"""Skill calls stay whole; a name is its own piece (``tuff=4`` is ``tuff``, ``=``, ``4``), so it can be a slot."""

SHARES = ((Stage.TEAM_LEAD, 0.5), (Stage.TEAM_HAVE, 0.2), (Stage.TEAM_RESPONSE, 0.3))
"""Each batch's rows by stage."""


def role_shares(roles: TeamRoles) -> tuple[tuple[Stage, float], ...]:
    """The batch shares of the roles' stages (their weights relative to each other as in ``SHARES``)."""
    if roles is TeamRoles.LEAD:
        return tuple(share for share in SHARES if share[0] is Stage.TEAM_LEAD)
    if roles is TeamRoles.PEERS:
        return tuple(share for share in SHARES if share[0] is not Stage.TEAM_LEAD)
    return SHARES


VOCABULARY_ROWS = 2_000


@dataclass(frozen=True)
class TeamPreset(TinyPreset):
    layers: int = 3
    hidden: int = 128
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 32
    ffn: int = 512
    lr: float = 3e-3
    warmup: int = 100
    batch: int = 16
    slot_names: bool = True
    context: int = 1024  # a four-agent lead's view and plan run past 512 tokens
    dealt_at_random: bool = False  # slots dealt at random per row; False: in order of first occurrence, as at run time


def by_stage(rows: Iterator[SupervisionRow], roles: TeamRoles = TeamRoles.EVERY) -> Callable[[Stage], SupervisionRow]:
    """Draw the next row of a given stage from one endless stream: rows of the roles' other stages wait their
    turn, rows of stages outside the roles are dropped."""
    waiting: dict[str, deque[SupervisionRow]] = {stage.value: deque() for stage, _ in role_shares(roles)}

    def next_of(stage: Stage) -> SupervisionRow:
        while not waiting[stage.value]:
            row = next(rows)
            if row.stage in waiting:
                waiting[row.stage].append(row)
        return waiting[stage.value].popleft()

    return next_of


def stage_batch(
    next_of: Callable[[Stage], SupervisionRow], size: int, rng: random.Random, roles: TeamRoles
) -> list[SupervisionRow]:
    stages = [stage for stage, _ in role_shares(roles)]
    weights = [share for _, share in role_shares(roles)]
    return [next_of(stage) for stage in rng.choices(stages, weights, k=size)]


def item_names() -> frozenset[str]:
    """Every item the game knows: none enters the tokenizer, each is copied through a slot."""
    game = team_prior().game
    return frozenset({*game.stack_sizes, *game.recipes})


FINE_TUNE_ROWS = 4_000
"""Rows of a fine-tune's fixed training set (the paper's fine-tunes train on a fixed set of ~2,000 rows)."""


def fixed_team_rows(
    count: int = FINE_TUNE_ROWS, surface: SurfaceName = SurfaceName.DSL, roles: TeamRoles = TeamRoles.EVERY
) -> list[SupervisionRow]:
    """The one set of team rows a fine-tune trains on, for every seed (as the paper's seeds share one data hash)."""
    stages = {stage.value for stage, _ in role_shares(roles)}
    rows = (row for row in team_rows(team_prior(), 0, TRAINING, surface) if row.stage in stages)
    return list(itertools.islice(rows, count))


def team_evaluation_rows(
    count: int,
    seed: int,
    surface: SurfaceName = SurfaceName.DSL,
    roles: TeamRoles = TeamRoles.EVERY,
    sizes: tuple[int, ...] = SMALL_TEAMS,
) -> tuple[list[SupervisionRow], list[SupervisionRow]]:
    """``count`` rows of each of the roles' stages from training item families and from held-out ones."""
    seen = [row for rows in held_out_rows(count, seed, TRAINING, surface, roles, sizes).values() for row in rows]
    unseen = [row for rows in held_out_rows(count, seed, HELD_OUT, surface, roles, sizes).values() for row in rows]
    return seen, unseen


def held_out_rows(
    count: int,
    seed: int,
    split: str,
    surface: SurfaceName = SurfaceName.DSL,
    roles: TeamRoles = TeamRoles.EVERY,
    sizes: tuple[int, ...] = SMALL_TEAMS,
) -> dict[str, list[SupervisionRow]]:
    """``count`` rows of each of the roles' stages from ``split``, drawn with their own seed (never the training
    stream's)."""
    next_of = by_stage(team_rows(team_prior(), seed + 10_000, split, surface, sizes), roles)
    return {stage.value: [next_of(stage) for _ in range(count)] for stage, _ in role_shares(roles)}


def train_team(
    out: str,
    steps: int,
    seed: int = 0,
    minutes: float | None = None,
    evaluate: int = 32,
    preset: TeamPreset | None = None,
    log: Callable[[int, float], None] | None = None,
    surface: SurfaceName = SurfaceName.DSL,
    roles: TeamRoles = TeamRoles.EVERY,
    sizes: tuple[int, ...] = SMALL_TEAMS,
) -> TrainReport:
    """Train the team model for ``steps`` (or until ``minutes`` pass), score it, save model + tokenizer + manifest.

    ``surface``: typed lines (the Short DSL) or the team dialogue's sentences, which a model so
    trained writes and reads under the free-form surface. ``roles``: every role, or one role's
    stages alone (a lead and its peers can then be two checkpoints, neither paying for the other's rows);
    the vocabulary comes from rows of every stage either way, so both read the same prompts.
    """
    spec = ModelSpec(records=Records.TEAM, surface=surface, compact=True)
    if steps <= 0 or (minutes is not None and minutes <= 0):
        raise ConfigError(Reason.BAD_STEPS, "steps and minutes must be positive")
    preset = preset or TeamPreset()
    use_threads(preset.threads)
    prior = team_prior()
    rng = random.Random(seed)
    vocabulary_rows = list(itertools.islice(team_rows(prior, seed + 1, TRAINING, surface, sizes), VOCABULARY_ROWS))
    texts = [text for row in vocabulary_rows for text in (row.prompt, row.target)]
    codec = TextCodec(build_tokenizer(texts, item_names(), TEAM_PIECES, len(SLOT_TOKENS)))
    model = build_model(codec.tokenizer.get_vocab_size(), preset, seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=preset.lr, betas=(0.9, 0.95), weight_decay=0.01)

    scheduler = warmup_cosine(optimizer, preset.warmup, after_warmup(preset.warmup, steps), 0.1)
    next_of = by_stage(team_rows(prior, seed, TRAINING, surface, sizes), roles)
    started = time.perf_counter()
    deadline = None if minutes is None else started + 60 * minutes
    losses: list[float] = []
    model.train()
    for step in range(steps):
        batch = stage_batch(next_of, preset.batch, rng, roles)
        ids, labels, mask = masked_batch(batch, codec, rng if preset.dealt_at_random else None)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        losses.append(optimizer_step(model.parameters(), optimizer, scheduler, loss, preset.clip))
        if log is not None and (step % 50 == 0 or step == steps - 1):
            log(step, losses[-1])
        if deadline is not None and time.perf_counter() > deadline:
            break
    seconds = time.perf_counter() - started
    model.train(False)
    report = scored(losses, seconds, model, codec, *team_evaluation_rows(evaluate, seed, surface, roles, sizes))
    save(
        Path(out),
        model,
        codec,
        spec,
        preset,
        seed,
        report,
        data="fresh rows each step from generated MINDcraft-format crafting tasks of training item families (seeded)"
        + f", teams of {', '.join(str(size) for size in sorted(set(sizes)))} agents"
        + ("" if roles is TeamRoles.EVERY else f", the {roles.value} role's stages only"),
        vocabulary=f"the first {VOCABULARY_ROWS} training rows (seed + 1), item names withheld",
    )
    return report
