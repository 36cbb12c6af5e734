"""Paper-style tables computed from a run's episode records, with the paper's figures beside.

Every number here is computed from our records; the "paper" column is read from
``data/paper.toml`` and only printed, never used. A cell the paper does not report is "–".
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from gencoord._config import package_text, parse_toml
from gencoord.backends.spec import recorded_label
from gencoord.errors import ConfigError
from gencoord.eval.stats import (
    Estimate,
    block_bootstrap_mean,
    bootstrap_mean,
    clopper_pearson,
    cluster_means,
    paired_difference,
    percentile,
    strict_successes,
)
from gencoord.run.episode import Condition

if TYPE_CHECKING:
    from gencoord.eval.kinds.episodes import EpisodeExperimentConfig as ExperimentConfig

Record = Mapping[str, Any]
DASH = "–"
DIMENSIONS = ("condition", "fault", "backend_set", "surface")


@dataclass
class Table:
    key: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""
    differences: list[str] = field(default_factory=list)
    """How our rows are computed differently from the paper's figures printed beside them (once per table)."""

    def markdown(self, level: int = 2) -> str:
        """The table as Markdown under a heading of ``level``: what report.md and the results page show."""
        lines = [f"{'#' * level} {self.title}", "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "".join(" --- |" if text else " ---: |" for text in self.text_columns()))
        lines += ["| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in self.rows]
        if self.caption:
            lines += ["", self.caption]
        if self.differences:
            lines += ["", "*Computed differently from the paper:* " + " ".join(self.differences)]
        return "\n".join(lines)

    def compacted(self) -> Table:
        """This table without the columns no row has a value in (a rule row has no tokens), saying which went."""
        if not self.rows:
            return self
        empty = [i for i in range(1, len(self.columns)) if all(row[i] == DASH for row in self.rows)]
        if not empty:
            return self
        kept = [i for i in range(len(self.columns)) if i not in empty]
        note = "Left out as no row has a value: " + ", ".join(self.columns[i] for i in empty) + "."
        return replace(
            self,
            columns=[self.columns[i] for i in kept],
            rows=[[row[i] for i in kept] for row in self.rows],
            caption=f"{self.caption} {note}".strip(),
        )

    def text_columns(self) -> list[bool]:
        """Which columns hold words rather than figures (set left, where figures are set right)."""
        return [
            index == 0 or not all(_is_figure(row[index]) for row in self.rows) for index in range(len(self.columns))
        ]


_UNITS = re.compile(r"\b(n/a|of|vs|steps|episode|pp|ms|s|B)\b")


def _is_figure(cell: object) -> bool:
    """A number, interval, fraction or dash, perhaps with a unit: no words left once units are taken out."""
    rest = _UNITS.sub("", str(cell))
    return not any(ch.isalpha() for ch in rest) and (any(ch.isdigit() for ch in rest) or str(cell) in (DASH, "n/a"))


def _markdown_cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


@dataclass(frozen=True)
class Row:
    """One group of episodes (a condition, fault, backend set and surface) and its statistics."""

    key: tuple[str, ...]
    label: str
    records: tuple[Record, ...]
    success: Estimate  # cluster bootstrap, fraction
    per_cluster: Mapping[str, float]


@cache
def paper_figures() -> dict[str, Any]:
    return parse_toml(package_text("gencoord.eval", "paper.toml"), "paper.toml", ConfigError)


def paper_cell(config: ExperimentConfig, table: str, cell: str) -> Any:
    return paper_figures().get(config.kind, {}).get(table, {}).get(cell)


def counted(count: int, noun: str) -> str:
    """``1 agent``, ``3 agents``: a count with its noun in the number it takes."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def percent_cell(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{100 * value:.{digits}f}%"


def _ci(estimate: Estimate, scale: float = 100.0, digits: int = 1) -> str:
    return f"[{estimate.low * scale:.{digits}f}, {estimate.high * scale:.{digits}f}]"


def mean_of(values: Iterable[float]) -> float | None:
    data = list(values)
    return sum(data) / len(data) if data else None


def number_cell(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


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


def _wire(record: Record, kind: str) -> int:
    return sum(m["bytes"] for m in record["protocol"]["messages"] if m["kind"] == kind)


def _cost(records: Sequence[Record]) -> str:
    """The row's priced API calls summed, and the mean per episode (– where no call was priced)."""
    charges = [[g.get("charge") for g in r["protocol"]["generations"]] for r in records]
    if not any(charge is not None for episode in charges for charge in episode):
        return DASH
    total = sum(charge or 0.0 for episode in charges for charge in episode)
    return f"{total:.6g} ({total / len(records):.3g}/episode)"


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
            "parameters, trained on this CPU), not the paper's Qwen3.5-0.8B."
        )
    return notes


def headline_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """What a reader looks for first: each row's success, its interval and the paper's figure for the same row."""
    table = Table(
        "headline",
        "Headline: original-task success by row",
        ["row", "episodes", "success", "95% CI", "paper success"],
        caption=(
            "Success is original-task success G (cluster means over roles and seeds); the interval is a "
            f"{config.bootstrap.resamples:,}-resample percentile cluster bootstrap. The detail tables below break "
            "each row down."
        ),
    )
    table.differences += against_paper_model(rows)
    for row in rows:
        paper = paper_cell(config, "success", row_cell(row, config))
        table.rows.append(
            [
                row.label,
                str(len(row.records)),
                percent_cell(row.success.value),
                _ci(row.success),
                f"{paper:.1f}%" if isinstance(paper, int | float) else DASH,
            ]
        )
    return table


def outcome_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    table = Table(
        "outcomes",
        "Outcomes by row in detail",
        [
            "row",
            "how",
            "agents played by",
            "episodes",
            "clusters",
            "success",
            "95% CI",
            "strict",
            "strict 95% CI",
            "model calls",
            "generations",
            "in tok",
            "out tok",
            "REQ B",
            "response B",
            "state B",
            "TTC p50 ms",
            "TTC p95 ms",
            "episode p50 s",
            "V(30)",
            "V(60)",
            "API cost",
        ],
        caption=(
            "Success is original-task success G, averaged within cluster over roles and seeds; the 95% CI is a "
            f"{config.bootstrap.resamples:,}-resample percentile cluster bootstrap. Strict: clusters whose every "
            "repetition succeeded, with its exact (Clopper–Pearson) 95% interval. TTC: measured wall time on this "
            "machine's CPU from the first generation to the dispatch plan. Episode time is world time (simulated on "
            "the simulator). V(30)/V(60): G reached with TTC plus world time within 30/60 s, as the paper counts them. "
            "API cost: the row's API calls summed at the configured prices ($GENCOORD_API_PRICE_IN / _OUT per "
            "million tokens), with the mean per episode; – where nothing was priced."
        ),
    )
    table.differences += against_paper_model(rows)
    if any(row.key[0] in (Condition.LOCAL_ONLY.value, Condition.CENTRALIZED.value) for row in rows):
        table.differences.append(
            "local_only and centralized are one learned call each, as in the paper, and the peer takes the REQ on "
            "without a call or a reply (response B 0: the paper's 0 B from the peer). We also count the REQ those "
            "two conditions deliver (REQ B), which the paper's measured component leaves out. state B is the "
            "peer's local view uploaded for centralized planning (the paper's state aggregation, 956 B mean there; "
            "ours renders a different view)."
        )
    for row in rows:
        records = row.records
        ttc = [1000 * r["seconds"]["protocol"] for r in records]
        durations = [r["outcome"]["duration_s"] for r in records if r["outcome"]["duration_s"] is not None]
        strict, clusters = strict_successes((r["cluster"], success(r)) for r in records)
        table.rows.append(
            [
                row.label,
                method(row),
                ", ".join(sorted({str(name) for r in records for name in r["backends"].values()})),
                str(len(records)),
                str(len(row.per_cluster)),
                percent_cell(row.success.value),
                _ci(row.success),
                f"{strict}/{clusters}",
                _ci(clopper_pearson(strict, clusters)),
                number_cell(mean_of(r["protocol"]["model_calls"] for r in records), 2),
                number_cell(mean_of(len(r["protocol"]["generations"]) for r in records), 2),
                number_cell(tokens_in(records, "input_tokens")),
                number_cell(tokens_in(records, "output_tokens")),
                number_cell(mean_of(_wire(r, "REQ") for r in records)),
                number_cell(mean_of(_wire(r, "RESPONSE") for r in records)),
                number_cell(mean_of(_wire(r, "STATE") for r in records)),
                number_cell(percentile(ttc, 50), 3),
                number_cell(percentile(ttc, 95), 3),
                number_cell(percentile(durations, 50), 2),
                percent_cell(mean_of(float(r["outcome"]["V30"]) for r in records)),
                percent_cell(mean_of(float(r["outcome"]["V60"]) for r in records)),
                _cost(records),
            ]
        )
    return table


def backend_kinds(row: Row) -> frozenset[str]:
    """What kind of backend wrote the row's records (``direct``, ``factor``, ``rule-sender`` ...)."""
    return frozenset(name.split(":")[0] for record in row.records for name in record["backends"].values())


def _reference_for(row: Row, references: Sequence[Row]) -> Row:
    """The reference row to pair ``row`` with.

    The same backend set, fault and surface if that was run; else the same fault and
    surface with the same kind of backend (a single-step direct model against the
    multi-step direct model); else the first reference row.
    """
    exact = next((ref for ref in references if ref.key[1:] == row.key[1:]), None)
    if exact is not None:
        return exact
    fault, surface = row.key[1], row.key[3]
    return next(
        (
            ref
            for ref in references
            if (ref.key[1], ref.key[3]) == (fault, surface) and backend_kinds(ref) == backend_kinds(row)
        ),
        references[0],
    )


def paired_table(rows: Sequence[Row], config: ExperimentConfig) -> Table | None:
    """Reference − each other row, cluster-aligned, with a paired cluster-bootstrap interval."""
    if config.reference is None:
        return None
    references = [row for row in rows if row.key[0] == config.reference.value]
    if not references:
        return None
    table = Table(
        "paired",
        f"Paired differences: {config.reference.value} − condition (percentage points)",
        ["condition", "against", "Δ success (pp)", "95% CI", "paper Δ", "paper CI"],
        caption="Cluster-aligned differences against the reference row with the same backend set and surface, "
        "else the same kind of backend, else the first reference row; percentile cluster bootstrap with the "
        "paper's paired seeds.",
    )
    table.differences += against_paper_model(rows)
    for index, row in enumerate(r for r in rows if r.key[0] != config.reference.value):
        reference = _reference_for(row, references)
        seed = config.bootstrap.paired_seed + index
        estimate = paired_difference(reference.per_cluster, row.per_cluster, config.bootstrap.resamples, seed)
        paper = paper_cell(config, "paired", row.key[0])
        table.rows.append(
            [
                row.label,
                reference.label,
                f"{100 * estimate.value:+.1f}",
                _ci(estimate),
                DASH if paper is None else f"{paper[0]:+.1f}",
                DASH if paper is None else f"[{paper[1]:.1f}, {paper[2]:.1f}]",
            ]
        )
    return table


def block_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """The pair-block sensitivity analysis: average both capability worlds of a pair, resample pairs."""
    table = Table(
        "blocks",
        "Matched-pair block bootstrap (sensitivity)",
        ["condition", "pair blocks", "success", "95% CI", "paper CI (primary)"],
        caption="Both capability worlds of each goal–world pair are averaged; whole pair blocks are resampled.",
    )
    for index, row in enumerate(rows):
        pairs = {str(r["cluster"]): str(r["pair"]) for r in row.records}
        seed = config.bootstrap.block_seed + index
        estimate = block_bootstrap_mean(row.per_cluster, pairs, config.bootstrap.resamples, seed)
        paper = paper_cell(config, "ci", row.key[0])
        table.rows.append(
            [
                row.label,
                str(len(set(pairs.values()))),
                percent_cell(estimate.value),
                _ci(estimate),
                DASH if paper is None else f"[{paper[0]:.0f}, {paper[1]:.0f}]",
            ]
        )
    return table


def generic_tables(rows: Sequence[Row], config: ExperimentConfig) -> list[Table]:
    """The tables every pair-episode report opens with: outcomes by row, and paired differences where set."""
    paired = paired_table(rows, config)
    return [outcome_table(rows, config), *([paired] if paired is not None else [])]
