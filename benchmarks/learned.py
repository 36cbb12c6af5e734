"""Learned-backend costs on the CPU, measured side by side in one run.

* Direct Short DSL (the committed tiny checkpoint, tests/fixtures/tiny-dsl) against
  Factor-Code + Rule (a tiny factor model trained here, 300 steps): success, model calls,
  input/output tokens and time to commitment (TTC, wall clock, both model calls) over the
  40-cluster timing pool × 2 roles; the factor/direct TTC ratio (paper: 0.34 on a GPU).
* Output length of the two surfaces: tokens of the canonical sender records in Short DSL
  and in JSON under one word-level tokenizer built from both (what a model that reproduces
  its target emits); the JSON/DSL ratio (paper, with Qwen's tokenizer: 3.40).
Results are printed and written to benchmarks/results/learned.json. Not a test.
"""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.local import LocalModelBackend
from gencoord.dsl.surface import SurfaceName
from gencoord.prior import default_prior
from gencoord.run.episode import run_episode
from gencoord.tasks import build_episode, default_suites, paper_pool
from gencoord.train.data import RowSpec, Target, build_rows
from gencoord.train.tiny import build_tokenizer, train_tiny

ROOT = Path(__file__).parents[1]
OUT = Path(__file__).parent / "results" / "learned.json"
FIXTURE = ROOT / "tests" / "fixtures" / "tiny-dsl"


def _episodes(checkpoint: Path) -> dict[str, float]:
    prior, suites = default_prior(), default_suites()
    backend = LocalModelBackend(checkpoint, prior)
    ttc, tokens_in, tokens_out, calls, wins = [], [], [], [], 0
    specs = [build_episode(c, role, 0, prior, suites) for c in paper_pool("timing") for role in (0, 1)]
    for spec in specs:
        result = run_episode(spec, backends={agent: backend for agent in spec.contexts}, prior=prior, suites=suites)
        generations = result.protocol.trace.generations
        ttc.append(result.seconds["protocol"])
        tokens_in.append(sum(g.reply.input_tokens or 0 for g in generations))
        tokens_out.append(sum(g.reply.output_tokens or 0 for g in generations))
        calls.append(result.protocol.trace.calls)
        wins += result.outcome.success
    return {
        "episodes": len(specs),
        "success": wins / len(specs),
        "calls": statistics.mean(calls),
        "input_tokens": statistics.mean(tokens_in),
        "output_tokens": statistics.mean(tokens_out),
        "ttc_p50_ms": 1000 * statistics.median(ttc),
        "ttc_p95_ms": 1000 * sorted(ttc)[int(0.95 * (len(ttc) - 1))],
    }


def _surface_tokens() -> dict[str, float]:
    prior, suites = default_prior(), default_suites()
    clusters = paper_pool("timing")
    rows = {
        name: [r for r in build_rows(clusters, prior, suites, RowSpec(surface=name)) if r.stage == "sender_initial"]
        for name in (SurfaceName.DSL, SurfaceName.JSON)
    }
    tokenizer = build_tokenizer([row.target for batch in rows.values() for row in batch])
    means = {
        name.value: statistics.mean(len(tokenizer.encode(r.target).ids) for r in batch) for name, batch in rows.items()
    }
    return {"dsl_tokens": means["dsl"], "json_tokens": means["json"], "json_over_dsl": means["json"] / means["dsl"]}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        factor_dir = Path(folder) / "factor"
        trained = train_tiny(RowSpec(target=Target.FACTOR), factor_dir, steps=300, seed=0, evaluate=48)
        factor = _episodes(factor_dir)
    direct = _episodes(FIXTURE)
    surfaces = _surface_tokens()
    ratio = factor["ttc_p50_ms"] / direct["ttc_p50_ms"]
    table = Table(title="Tiny CPU backends on the 40-cluster timing pool × 2 roles")
    for column in ("backend", "success", "calls", "in tok", "out tok", "TTC p50 ms", "TTC p95 ms"):
        table.add_column(column)
    for name, row in (("Direct Short DSL (fixture)", direct), ("Factor-Code + Rule", factor)):
        table.add_row(
            name,
            f"{100 * row['success']:.1f}%",
            f"{row['calls']:.1f}",
            f"{row['input_tokens']:.0f}",
            f"{row['output_tokens']:.0f}",
            f"{row['ttc_p50_ms']:.0f}",
            f"{row['ttc_p95_ms']:.0f}",
        )
    console = Console(width=120)
    console.print(table)
    console.print(
        f"factor/direct TTC (p50): {ratio:.2f} (paper 0.34); JSON/DSL tokens of the sender record: "
        f"{surfaces['json_over_dsl']:.2f} ({surfaces['json_tokens']:.0f} vs {surfaces['dsl_tokens']:.0f}; paper 3.40 "
        f"with Qwen's tokenizer); factor model trained in {trained.seconds:.1f} s to "
        f"{100 * (trained.exact_match or 0):.0f}%"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    results = {"meta": meta, "direct": direct, "factor": factor, "factor_over_direct_ttc": ratio, **surfaces}
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
