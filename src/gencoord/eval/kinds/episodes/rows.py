"""Pair-episode rows: the records grouped by what the config varies, each with its cluster-bootstrap success.

The episode kind's tables and figures are made of these rows; the paper's cell for a row is
named by the dimension the config varies (a condition, a fault, a backend set or a surface).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gencoord.backends.families import recorded_label
from gencoord.eval.stats import Estimate, bootstrap_mean, cluster_means
from gencoord.eval.tables import Record, mean_of, paper_figures
from gencoord.run.episode import Condition

if TYPE_CHECKING:
    from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig as ExperimentConfig

DIMENSIONS = ("condition", "fault", "backend_set", "surface")


@dataclass(frozen=True)
class Row:
    """One group of episodes (a condition, fault, backend set and surface) and its statistics."""

    key: tuple[str, ...]
    label: str
    records: tuple[Record, ...]
    success: Estimate  # cluster bootstrap, fraction
    per_cluster: Mapping[str, float]


def paper_cell(config: ExperimentConfig, table: str, cell: str) -> Any:
    return paper_figures().get(config.kind, {}).get(table, {}).get(cell)


def success(record: Record) -> bool:
    return bool(record["outcome"]["G"])


def _varying(config: ExperimentConfig) -> list[str]:
    sizes = {
        "condition": len(config.conditions),
        "fault": len(config.faults),
        "backend_set": len(config.backends),
        "surface": len(config.surfaces),
    }
    return [name for name in DIMENSIONS if sizes[name] > 1] or ["condition"]


def group_rows(records: Sequence[Record], config: ExperimentConfig) -> list[Row]:
    """Rows in config order, each with its cluster-bootstrap success estimate."""
    groups: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for record in records:
        groups[tuple(str(record[d]) for d in DIMENSIONS)].append(record)
    order: dict[str, list[str]] = {
        "condition": [c.value for c in config.conditions],
        "fault": [f.value for f in config.faults],
        "backend_set": list(config.backends),
        "surface": [s.value for s in config.surfaces],
    }
    varying = _varying(config)
    rows = []
    for index, key in enumerate(
        sorted(
            groups,
            key=lambda k: tuple(order[d].index(v) if v in order[d] else 99 for d, v in zip(DIMENSIONS, k, strict=True)),
        )
    ):
        members = tuple(groups[key])
        per_cluster = cluster_means((r["cluster"], float(success(r))) for r in members)
        estimate = bootstrap_mean(per_cluster, config.bootstrap.resamples, config.bootstrap.condition_seed + index)
        label = " · ".join(
            _dimension_label(dimension, value)
            for dimension, value in zip(DIMENSIONS, key, strict=True)
            if dimension in varying
        )
        rows.append(Row(key, label, members, estimate, per_cluster))
    if len({row.label for row in rows}) < len(rows):  # two backends share a short name: show them as written
        rows = [
            replace(row, label=" · ".join(v for d, v in zip(DIMENSIONS, row.key, strict=True) if d in varying))
            for row in rows
        ]
    return rows


def _dimension_label(dimension: str, value: str) -> str:
    return recorded_label(value) if dimension == "backend_set" else value


def row_cell(row: Row, config: ExperimentConfig) -> str:
    """The name the paper's tables use for this row's varying dimension."""
    dimension = _varying(config)[0]
    return row.key[DIMENSIONS.index(dimension)]


def tokens_in(records: Sequence[Record], field: str) -> float | None:
    """Mean tokens per episode over the generations that report them (None: no model counted any)."""
    counts = [
        sum(g[field] for g in r["protocol"]["generations"])
        for r in records
        if r["protocol"]["generations"] and all(g.get(field) is not None for g in r["protocol"]["generations"])
    ]
    return mean_of(counts)


RULE_KINDS = frozenset(
    {"rule-sender", "request-realizer", "branch-guesser", "rule-requester", "composer", "factorized-rule"}
)
"""Deterministic backends: their success on the paper's suites is fixed by how they are built."""


def method(row: Row) -> str:
    """How a row's records were written, and what that fixes in advance."""
    kinds = backend_kinds(row)
    if kinds <= RULE_KINDS:
        if "branch-guesser" in kinds:
            return "rule: a receiver guessing one of two branches, 50% by construction"
        if "factorized-rule" in kinds:
            return "rule: the private binding, its paths read back from the view shown, so the view sets the outcome"
        if "rule-sender" in kinds and row.key[0] == Condition.ALTERNATIVE_REQUEST.value:
            return "rule: the correct-binding sender's request swapped for the other branch, 0% by construction"
        if "rule-sender" in kinds:
            return "rule: the correct-binding sender, 100% by construction when its own request is delivered"
        if "rule-requester" in kinds:
            return "rule: a fixed revision table, so the condition sets the outcome by construction"
        return "rule: deterministic, so the outcome is set by construction"
    learned = sorted(kinds - RULE_KINDS)
    return "model: " + ", ".join(learned) + (" (with rule peers)" if kinds & RULE_KINDS else "")


def against_paper_model(rows: Sequence[Row]) -> list[str]:
    """The difference notes for a table whose paper column (a fine-tuned 0.8B model) sits beside our rows."""
    notes = []
    rules = [kinds for row in rows if (kinds := backend_kinds(row)) <= RULE_KINDS]
    if any("factorized-rule" not in kinds for kinds in rules):
        notes.append(
            "The paper's figures come from its fine-tuned Qwen3.5-0.8B model; rows whose 'how' says 'rule' are our "
            "deterministic backends, which reproduce the paper's mechanism rows by construction (a guesser is 50%, "
            "the correct-binding rule 100%): they check the mechanism, they do not measure a model."
        )
    if any("factorized-rule" in kinds for kinds in rules):
        notes.append(
            "Rows of the factorized rule (the paper's symbolic reference) are deterministic: under each view its "
            "outcome follows from what that view lists and in which order, so they check the views, not a model."
        )
    if any(backend_kinds(row) - RULE_KINDS for row in rows):
        notes.append(
            "Rows whose 'how' says 'model' are the models named there (the committed tiny checkpoints are 0.2 M "
            "parameters trained from scratch, the smollm2 ones SmolLM2-135M-Instruct with a LoRA adapter, each "
            "trained on this CPU), not the paper's Qwen3.5-0.8B."
        )
    return notes


def backend_kinds(row: Row) -> frozenset[str]:
    """What kind of backend wrote the row's records (``direct``, ``factor``, ``rule-sender`` ...)."""
    return frozenset(name.split(":")[0] for record in row.records for name in record["backends"].values())
