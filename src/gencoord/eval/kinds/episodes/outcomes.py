"""The tables every pair-episode report opens with: the headline, outcomes by row, paired differences, blocks.

Every number is computed from our records; the paper's figures (``data/paper.toml``) are only
printed beside them. The shared table types and cells are :mod:`gencoord.eval.tables`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gencoord.eval.kinds.episodes.rows import (
    Row,
    against_paper_model,
    backend_kinds,
    method,
    paper_cell,
    row_cell,
    success,
    tokens_in,
)
from gencoord.eval.stats import (
    block_bootstrap_mean,
    clopper_pearson,
    paired_difference,
    percentile,
    strict_successes,
)
from gencoord.eval.tables import DASH, Record, Table, ci_cell, mean_of, number_cell, percent_cell
from gencoord.run.episode import Condition

if TYPE_CHECKING:
    from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig as ExperimentConfig


def _wire(record: Record, kind: str) -> int:
    return sum(m["bytes"] for m in record["protocol"]["messages"] if m["kind"] == kind)


def _cost(records: Sequence[Record]) -> str:
    """The row's priced API calls summed, and the mean per episode (– where no call was priced)."""
    charges = [[g.get("charge") for g in r["protocol"]["generations"]] for r in records]
    if not any(charge is not None for episode in charges for charge in episode):
        return DASH
    total = sum(charge or 0.0 for episode in charges for charge in episode)
    return f"{total:.6g} ({total / len(records):.3g}/episode)"


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
                ci_cell(row.success),
                f"{paper:.1f}%" if isinstance(paper, int | float) else DASH,
            ]
        )
    return table


OUTCOME_COLUMNS = [
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
]
"""The detailed outcome table's columns, one cell of :func:`_outcome_row` each."""


def outcome_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """Every row's outcomes in detail: success with its intervals, cost in calls, tokens and bytes, and time."""
    table = Table(
        "outcomes",
        "Outcomes by row in detail",
        list(OUTCOME_COLUMNS),
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
    table.rows += [_outcome_row(row) for row in rows]
    return table


def _outcome_row(row: Row) -> list[str]:
    records = row.records
    ttc = [1000 * r["seconds"]["protocol"] for r in records]
    durations = [r["outcome"]["duration_s"] for r in records if r["outcome"]["duration_s"] is not None]
    strict, clusters = strict_successes((r["cluster"], success(r)) for r in records)
    return [
        row.label,
        method(row),
        ", ".join(sorted({str(name) for r in records for name in r["backends"].values()})),
        str(len(records)),
        str(len(row.per_cluster)),
        percent_cell(row.success.value),
        ci_cell(row.success),
        f"{strict}/{clusters}",
        ci_cell(clopper_pearson(strict, clusters)),
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
                ci_cell(estimate),
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
                ci_cell(estimate),
                DASH if paper is None else f"[{paper[0]:.0f}, {paper[1]:.0f}]",
            ]
        )
    return table


def generic_tables(rows: Sequence[Row], config: ExperimentConfig) -> list[Table]:
    """The tables every pair-episode report opens with: outcomes by row, and paired differences where set."""
    paired = paired_table(rows, config)
    return [outcome_table(rows, config), *([paired] if paired is not None else [])]
