"""Causal-LM SFT for commitment backends: a from-scratch ``tiny`` preset on the CPU.

The tiny preset is a Qwen3-architecture decoder (2 layers, hidden 64, 0.2 M parameters)
with a word-level tokenizer built from the supervision rows: DSL punctuation stays with
its keyword (``resource.deliver(``, ``,item=``, `` > ``), names stay whole, digits are
single tokens so any quantity can be copied. Loss is on the target tokens only (the
prompt is masked). Rows are drawn fresh from the training split every step: a tiny model
memorizes a fixed small set instead of learning to copy. A name outside the vocabulary is
spelled a character per token (:class:`TextCodec`), and with ``TinyPreset.renaming`` a
row's instance names are replaced by fresh ones (:mod:`gencoord.train.renaming`), so the
model must copy names from the task structure in view rather than recall them, which is what
a held-out template asks of it; ``TinyPreset.restructuring`` also replaces a row's paths and
quantities (:mod:`gencoord.train.restructure`), so that it cannot recall a template's
structure either, and ``TinyPreset.siblings`` makes restructured bindings variants of each
other, one step apart or (``TinyPreset.place_siblings``) one place apart, as real templates'
branches are; ``TinyPreset.slot_names`` keeps every instance name out of the vocabulary, so
familiar names are copied through slots as held-out ones are. Held-out templates reach 11–22%
exact match with renaming, 31–39% with restructuring too, 48–55% with siblings and 3 layers,
45–70% (three seeds) with slot names as well, and 89.1% with place siblings and batch 16
(seed 1; benchmarks/held_out_names.py, docs/models.md).
"""

from __future__ import annotations

import hashlib
import json
import platform
import random
import re
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import Qwen3Config, Qwen3ForCausalLM

from gencoord import __version__
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.models.codec import PAPER_SLOTS, SLOT_TOKENS, TextCodec
from gencoord.models.manifest import CheckpointManifest, TrainReport
from gencoord.models.variant import Horizon, ModelSpec, Records, Target
from gencoord.prior.load import default_prior
from gencoord.prior.views import PriorView
from gencoord.reasons import Reason
from gencoord.tasks.cluster import draw_pool, forward_space
from gencoord.tasks.suites import default_suites
from gencoord.train.common import after_warmup, masked_batch, optimizer_step, scored, use_threads, warmup_cosine
from gencoord.train.data import SupervisionRow, build_rows, evaluation_rows, training_split
from gencoord.train.renaming import instance_names, renamed
from gencoord.train.restructure import StepPool, restructured
from gencoord.train.rounds import fresh_rows, training_rounds

SPECIAL = ("[PAD]", "[UNK]", "[EOS]")
PIECES = r"[a-z_]+\.[a-z_]+\(|,?[a-z_]+=|[A-Za-z_]+|\d| > |\n|."


@dataclass(frozen=True)
class TinyPreset:
    layers: int = 2
    hidden: int = 64
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 16
    ffn: int = 256
    lr: float = 5e-3
    warmup: int = 50
    batch: int = 8
    clip: float = 1.0
    threads: int = 2
    renaming: float = 0.0  # chance that each instance name of a training row is replaced by a fresh one
    restructuring: float = 0.0  # chance that a full-view row's task structure is replaced by a random one
    siblings: float = 0.0  # of restructured views, the share whose bindings differ from each other in one step
    place_siblings: float = 0.0  # of those bindings, the share one place apart rather than one step
    slot_names: bool = False  # the tokenizer holds no instance name: every one is read and written as a name slot
    context: int = 512  # positions the model reads and writes (max_position_embeddings): prompt and answer together


def pieces(text: str, pattern: str = PIECES) -> list[str]:
    return re.findall(pattern, text, flags=re.DOTALL)


def _renamed_row(
    row: SupervisionRow, names: frozenset[str], templates: frozenset[str], rate: float, rng: random.Random
) -> SupervisionRow:
    prompt, target = renamed(row.prompt, row.target, names, rate, rng, templates)
    return replace(row, prompt=prompt, target=target)


def build_tokenizer(
    texts: Sequence[str], withheld: frozenset[str] = frozenset(), pattern: str = PIECES, slots: int = PAPER_SLOTS
) -> Tokenizer:
    """Pieces seen in ``texts`` but ``withheld``, the name slots, and every printable character as a fallback.

    The slots carry a prompt's names the pieces lack (:class:`TextCodec`). A single
    character is produced by encoding only where a piece is neither known nor a prompt's
    name, but a decoder may need them: under a grammar, a prefix like ``agent`` must still
    be completable to ``agent_b`` one character at a time. A withheld name
    (``TinyPreset.slot_names``) is always read through a slot: a model then copies a
    familiar name the way it copies a held-out one, with one circuit, instead of writing a
    familiar one from memory.
    """
    vocabulary = {token: index for index, token in enumerate((*SPECIAL, *SLOT_TOKENS[:slots]))}
    for character in string.ascii_letters + string.digits + string.punctuation + " \n":
        vocabulary.setdefault(character, len(vocabulary))
    for text in texts:
        for piece in pieces(text, pattern):
            if piece not in withheld:
                vocabulary.setdefault(piece, len(vocabulary))
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()  # pieces join without separators, as they were cut
    return tokenizer


def build_model(vocab: int, preset: TinyPreset, seed: int) -> Qwen3ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=vocab,
        hidden_size=preset.hidden,
        intermediate_size=preset.ffn,
        num_hidden_layers=preset.layers,
        num_attention_heads=preset.heads,
        num_key_value_heads=preset.kv_heads,
        head_dim=preset.head_dim,
        max_position_embeddings=preset.context,
        tie_word_embeddings=True,
    )
    return Qwen3ForCausalLM(config)


VOCABULARY_ROWS = "its split's 480-cluster training pool and the first round of training rows (training seeds only)"
"""Where the tiny tokenizer's pieces come from: rows the model trains on, never an evaluation pool."""


def vocabulary_rows(spec: ModelSpec, seed: int) -> list[SupervisionRow]:
    """The rows :data:`VOCABULARY_ROWS` names."""
    rows = build_rows(draw_pool(training_split(spec), 480), default_prior(), default_suites(), spec)
    return rows + next(training_rounds(spec, seed))


def train_tiny(
    spec: ModelSpec,
    out: Path,
    steps: int,
    seed: int = 0,
    evaluate: int = 64,
    preset: TinyPreset | None = None,
    log: Callable[[int, float], None] | None = None,
) -> TrainReport:
    """Train, score greedy exact match on ``evaluate`` rows each of the training and the held-out templates, save
    model + tokenizer + manifest."""
    if steps <= 0:
        raise ConfigError(Reason.BAD_STEPS, "steps must be positive")
    preset = preset or TinyPreset()
    if spec.records is Records.TEAM:
        raise ConfigError(Reason.RECORDS_SURFACE, "team rows train with gencoord.train.team (--records team)")
    if not (0.0 < preset.lr <= 1.0 and preset.warmup >= 0):
        raise ConfigError(
            Reason.BAD_LR, f"the learning rate is in (0, 1] and warm-up at least 0, not {preset.lr}, {preset.warmup}"
        )
    if not 0.0 <= preset.renaming <= 1.0:
        raise ConfigError(Reason.BAD_RENAMING, f"renaming is a probability in [0, 1], not {preset.renaming}")
    rates = (
        ("restructuring", preset.restructuring),
        ("siblings", preset.siblings),
        ("place siblings", preset.place_siblings),
    )
    for name, rate in rates:
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(Reason.BAD_RESTRUCTURING, f"{name} is a probability in [0, 1], not {rate}")
    if preset.siblings and not preset.restructuring:
        raise ConfigError(Reason.BAD_RESTRUCTURING, "siblings shape restructured views: give restructuring too")
    if preset.place_siblings and not preset.siblings:
        raise ConfigError(Reason.BAD_RESTRUCTURING, "place siblings are a kind of sibling: give siblings too")
    if preset.batch < 1:
        raise ConfigError(Reason.BAD_BATCH, f"a batch holds at least one row, not {preset.batch}")
    copies_paths = spec.view is PriorView.FULL and spec.surface is SurfaceName.DSL and spec.target is Target.DIRECT
    if preset.restructuring and not (copies_paths and spec.horizon is Horizon.MULTI):
        raise ConfigError(
            Reason.BAD_RESTRUCTURING,
            "restructuring rewrites full-view Short DSL rows of a direct multi-step model only",
        )
    use_threads(preset.threads)
    names = instance_names(default_prior())
    templates = frozenset(default_suites().forward.templates)
    texts = [text for row in vocabulary_rows(spec, seed) for text in (row.prompt, row.target)]
    codec = TextCodec(build_tokenizer(texts, names | templates if preset.slot_names else frozenset()))
    model = build_model(codec.tokenizer.get_vocab_size(), preset, seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=preset.lr, betas=(0.9, 0.95), weight_decay=0.01)

    scheduler = warmup_cosine(optimizer, preset.warmup, after_warmup(preset.warmup, steps), 0.1)
    rows = fresh_rows(spec, seed)
    renaming = random.Random(seed)
    trained = frozenset(template for template, _ in forward_space(training_split(spec), default_suites()))
    steps_pool = StepPool.of(default_prior(), trained)
    started = time.perf_counter()
    losses: list[float] = []
    model.train()
    for step in range(steps):
        batch = _varied([next(rows) for _ in range(preset.batch)], preset, steps_pool, names, templates, renaming)
        ids, labels, mask = masked_batch(batch, codec, renaming)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        losses.append(optimizer_step(model.parameters(), optimizer, scheduler, loss, preset.clip))
        if log is not None and (step % 50 == 0 or step == steps - 1):
            log(step, losses[-1])
    model.train(False)
    seconds = time.perf_counter() - started
    report = scored(losses, seconds, model, codec, *evaluation_rows(spec, evaluate, seed))
    save(out, model, codec, spec, preset, seed, report)
    return report


def _varied(
    batch: list[SupervisionRow],
    preset: TinyPreset,
    steps_pool: StepPool,
    names: frozenset[str],
    templates: frozenset[str],
    rng: random.Random,
) -> list[SupervisionRow]:
    """The rows as the preset varies them: task structures recombined (restructuring), then names renamed, each
    row with the preset's chance, so the model learns to copy from its view rather than recall."""
    if preset.restructuring:
        batch = [
            restructured(row, steps_pool, rng, preset.siblings, preset.place_siblings)
            if rng.random() < preset.restructuring
            else row
            for row in batch
        ]
    if preset.renaming:
        batch = [_renamed_row(row, names, templates, preset.renaming, rng) for row in batch]
    return batch


def save(
    out: Path,
    model: Qwen3ForCausalLM,
    codec: TextCodec,
    spec: ModelSpec,
    preset: TinyPreset,
    seed: int,
    report: TrainReport,
    data: str = "fresh rows from the training split each step (seeded)",
    vocabulary: str = VOCABULARY_ROWS,
) -> None:
    """Model, tokenizer and manifest; ``data`` and ``vocabulary`` say where the rows and the pieces came from."""
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    codec.tokenizer.save(str(out / "tokenizer.json"))
    config_text = json.dumps({"spec": spec.fields(), "preset": asdict(preset)}, sort_keys=True)
    CheckpointManifest.of(
        spec,
        kind="tiny",
        seed=seed,
        config_sha256=hashlib.sha256(config_text.encode()).hexdigest(),
        settings=asdict(preset),
        data=data,
        vocabulary=vocabulary,
        report=report,
        versions={"gencoord": __version__, "torch": torch.__version__, "python": platform.python_version()},
    ).write(out)
