"""Re-measure the committed tiny checkpoints and record where their vocabularies came from.

Before 0.1.0's ship-quality pass, the tiny tokenizer's pieces were collected from the
training pool *and* the seed-0 Goal×Capability evaluation pool. This script checks, for
each committed checkpoint, that every piece of its tokenizer also occurs in the rows it
trains on (``gencoord.train.tiny.vocabulary_rows``, training seeds only): then the
evaluation pool contributed nothing the model could not have seen. It then re-runs the
greedy exact-match evaluation with today's code and writes both facts into the manifest.

Usage: .venv/bin/python scripts/remeasure_tiny.py [checkpoint folder ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gencoord.models.load import load_model
from gencoord.models.manifest import CheckpointManifest
from gencoord.train.common import exact_match
from gencoord.train.data import evaluation_rows
from gencoord.train.tiny import VOCABULARY_ROWS, build_tokenizer, vocabulary_rows

ROOT = Path(__file__).parents[1]
DEFAULT = sorted((ROOT / "experiments" / "checkpoints").glob("tiny-*"))


def remeasure(folder: Path) -> dict[str, object]:
    manifest = CheckpointManifest.read(folder)
    committed = set(json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"])
    texts = [text for row in vocabulary_rows(manifest.spec, manifest.seed) for text in (row.prompt, row.target)]
    missing = sorted(committed - set(build_tokenizer(texts).get_vocab()))
    loaded = load_model(folder)
    seen, unseen = evaluation_rows(manifest.spec, manifest.report.evaluated or 64, manifest.seed)
    seen_match = exact_match(loaded.model, loaded.codec, seen)
    unseen_match = exact_match(loaded.model, loaded.codec, unseen)
    vocabulary = (
        "trained with pieces from the training pool and the seed-0 Goal×Capability evaluation pool; re-checked: "
        + (
            "every piece also occurs in " + VOCABULARY_ROWS
            if not missing
            else f"{len(missing)} pieces do not: {missing}"
        )
    )
    report = manifest.report.model_copy(
        update={
            "exact_match": seen_match,
            "evaluated": len(seen),
            "held_out_templates": unseen_match,
            "held_out_evaluated": len(unseen),
        }
    )
    note = "re-measured by scripts/remeasure_tiny.py (greedy exact match, 512-token budget)"
    if manifest.evaluation_note:
        note += f"; earlier: {manifest.evaluation_note}"
    manifest.model_copy(update={"vocabulary": vocabulary, "report": report, "evaluation_note": note}).write(folder)
    return {
        "checkpoint": folder.name,
        "pieces_only_in_evaluation_pool": missing,
        "unseen_worlds": seen_match,
        "held_out_templates": unseen_match,
        "rows": len(seen),
    }


if __name__ == "__main__":
    folders = [Path(arg) for arg in sys.argv[1:]] or DEFAULT
    for folder in folders:
        print(json.dumps(remeasure(folder)))
