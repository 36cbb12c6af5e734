"""Margin-guided upgrade against its controls (v2 Tables S38–S39), side by side in one run.

The shipped upgrade (``selector:upgrade``) routes TF-IDF nearest neighbour's descriptions
whose margin is below 0.15 to embedding retrieval. At the same quota (the number of cases
that threshold upgrades), this compares routing by margin with routing at random (its exact
expectation) and by the cheap selector's top score (maximum similarity), on the held-out
description conditions (C1 unseen openers, C2 paraphrases, C3 paraphrases with an
irrelevant sentence) and on C2+C3 pooled. It also reports the AUROC with which margin and
top score rank the cheap selector's correct choices above its wrong ones.

Computed differently from the paper: the paper routes embedding retrieval to its Factor
model and scores task success G over episodes with three checkpoints (640 descriptions);
here TF-IDF retrieval is routed to embedding retrieval and scored by assignment accuracy
(a correct code is what a successful episode needs; the composer and world add nothing
for a correct code). Results: benchmarks/results/selector_routing.json. Not a test.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.selectors import EmbeddingRetrieval, TfidfNearest
from gencoord.eval.routing_tables import RoutedCase, RoutingControls, routing_controls
from gencoord.tasks.descriptions import CONDITIONS, descriptions

OUT = Path(__file__).parent / "results" / "selector_routing.json"
MARGIN = 0.15  # the shipped upgrade's threshold
PAPER = {"margin_guided": 88.4, "random_expected": 85.1, "score_guided": 85.4, "auroc_difference": 0.176}


def main() -> None:
    rows = descriptions()
    train = [row for row in rows if row.condition == "train"]
    cheap, strong = TfidfNearest(), EmbeddingRetrieval()
    for selector in (cheap, strong):
        selector.fit([row.text for row in train], [row.binding for row in train])
    cases: dict[str, list[RoutedCase]] = {}
    for condition in CONDITIONS:
        for row in (row for row in rows if row.condition == condition):
            first, second = cheap.select(row.text), strong.select(row.text)
            case = RoutedCase(first.binding == row.binding, second.binding == row.binding, first.margin, first.score)
            cases.setdefault(condition, []).append(case)
    cases["C2+C3"] = cases["C2"] + cases["C3"]
    results: dict[str, RoutingControls] = {}
    for name, group in cases.items():
        quota = sum(case.margin < MARGIN for case in group)
        results[name] = routing_controls(group, quota)

    def pct(value: float) -> str:
        return f"{100 * value:.1f}%"

    def auc(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    table = Table(title=f"Upgrade routing at matched quotas: TF-IDF nearest → embedding retrieval (margin < {MARGIN})")
    for column in (
        "descriptions",
        "n",
        "upgraded",
        "TF-IDF",
        "embedding",
        "margin-guided",
        "random (exp.)",
        "score-guided",
        "AUROC margin",
        "AUROC score",
    ):
        table.add_column(column)
    for name, result in results.items():
        table.add_row(
            name,
            str(result.cases),
            f"{result.upgraded} ({pct(result.upgraded / result.cases)})",
            pct(result.cheap),
            pct(result.strong),
            pct(result.margin_guided),
            pct(result.random_expected),
            pct(result.score_guided),
            auc(result.margin_auroc),
            auc(result.score_auroc),
        )
    table.add_row(
        "paper (G, retrieval → Factor)",
        "3,840",
        "15.2%",
        "82.2%",
        "95.9%",
        f"{PAPER['margin_guided']}%",
        f"{PAPER['random_expected']}%",
        f"{PAPER['score_guided']}%",
        f"margin − score +{PAPER['auroc_difference']}",
        "",
    )
    Console(width=200).print(table)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "meta": {"gencoord": __version__, "python": platform.python_version()},
                "cheap": cheap.name,
                "strong": strong.name,
                "margin": MARGIN,
                "results": {name: vars_of(result) for name, result in results.items()},
                "paper": PAPER,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    Console().print(f"→ {OUT}")


def vars_of(result: RoutingControls) -> dict[str, object]:
    return {field: getattr(result, field) for field in result.__dataclass_fields__}


if __name__ == "__main__":
    main()
