"""Grammar-constrained vs free decoding of the Short DSL, side by side in one run.

A deliberately under-trained tiny Direct Short DSL model (150 steps, so that it still
makes mistakes) decodes held-out rows twice: freely, and under the grammar built from
the prior and the agent's context (xgrammar). Reported: parse failures, contract-valid
records, exact matches and milliseconds per call.
Results are printed and written to benchmarks/results/constrained.json. Not a test.
"""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.constrained import logits_processor
from gencoord.backends.context import model_input
from gencoord.errors import GencoordError
from gencoord.models.generate import generate
from gencoord.models.load import load_model
from gencoord.models.variant import ModelSpec, Target
from gencoord.prior import check_proposal, default_prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.tasks import Split, build_episode, default_suites, draw_pool
from gencoord.train.tiny import train_tiny

OUT = Path(__file__).parent / "results" / "constrained.json"
STEPS = 150  # few enough that free decoding still breaks the grammar now and then


def main() -> None:
    prior, suites = default_prior(), default_suites()
    with tempfile.TemporaryDirectory() as folder:
        train_tiny(ModelSpec(target=Target.DIRECT), Path(folder), steps=STEPS, seed=0, evaluate=8)
        loaded = load_model(Path(folder))
    cases = []
    for cluster in draw_pool(Split.IN_DISTRIBUTION, 40, seed=5):
        spec = build_episode(cluster, 0, 0, prior, suites)
        request = GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
        cases.append((spec, spec.contexts[spec.sender], request))
    results = {}
    for mode in ("free", "grammar"):
        failures = valid = exact = 0
        times = []
        reasons: dict[str, int] = {}
        for spec, context, request in cases:
            prompt = model_input(context, request, prior, loaded.spec.view, loaded.spec.compact)
            processors = [logits_processor(loaded, prior, context, request, prompt)] if mode == "grammar" else None
            started = time.perf_counter()
            text, _, _ = generate(loaded.model, loaded.codec, prompt, 512 if processors else 160, processors)
            times.append(time.perf_counter() - started)
            try:
                proposal = prior.parse(text)
            except GencoordError:
                failures += 1
                continue
            try:
                check_proposal(proposal, spec.sender, prior, spec.public)
                valid += 1
            except GencoordError as error:
                reasons[error.reason] = reasons.get(error.reason, 0) + 1
            exact += text == prior.serialize(proposal) and f"bind={spec.binding}" in text
        results[mode] = {
            "cases": len(cases),
            "parse_failures": failures,
            "contract_valid": valid,
            "binding_right": exact,
            "ms_per_call": 1000 * statistics.median(times),
            "contract_reasons": reasons,
        }
    table = Table(title="Short DSL decoding of an under-trained tiny model, free vs grammar-constrained")
    for column in ("decoding", "cases", "parse failures", "contract-valid", "right binding", "ms/call"):
        table.add_column(column)
    for mode, row in results.items():
        table.add_row(
            mode,
            str(row["cases"]),
            str(row["parse_failures"]),
            str(row["contract_valid"]),
            str(row["binding_right"]),
            f"{row['ms_per_call']:.0f}",
        )
    console = Console(width=120)
    console.print(table)
    for mode, row in results.items():
        console.print(f"{mode}: contract rejections by reason {row['contract_reasons']}", highlight=False)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version()}
    OUT.write_text(json.dumps({"meta": meta, **results}, indent=2) + "\n")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
