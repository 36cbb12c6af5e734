"""Learned-backend costs on the CPU, measured side by side in one run (a tiny Table 2 and Table 3).

* Surfaces: the committed tiny Direct representation models for the Short DSL, the JSON
  surface and controlled free-form dialogue (experiments/checkpoints/tiny-dsl-rep,
  tiny-json-rep, tiny-freeform-rep: trained on the paper's eight templates), each on
  its own surface: success, model calls, input/output tokens (the model's tokenizer), wire
  bytes (the REQ; every turn for free-form) and time to commitment (TTC, wall clock, all
  model calls) over the 40-cluster timing pool × 2 roles. Ratios: JSON/DSL output tokens
  (paper 3.40 with Qwen's tokenizer), free-form/DSL wire bytes (paper 13.9).
* Backends: Direct Short DSL against Factor-Code + Rule (a tiny factor model trained here,
  300 steps) on the same episodes; the factor/direct TTC ratio (paper 0.34 on a GPU).
Results are printed and written to benchmarks/results/learned.json. Not a test.
"""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.local import LocalModelBackend
from gencoord.dsl.surface import SurfaceName
from gencoord.models.variant import ModelSpec, Target
from gencoord.prior import default_prior
from gencoord.run.episode import run_episode
from gencoord.tasks import build_episode, default_suites, paper_pool
from gencoord.train.tiny import train_tiny

ROOT = Path(__file__).parents[1]
OUT = Path(__file__).parent / "results" / "learned.json"
FIXTURES = ROOT / "experiments" / "checkpoints"


def _episodes(checkpoint: Path, surface: SurfaceName) -> dict[str, float]:
    prior, suites = default_prior(), default_suites()
    backend = LocalModelBackend(checkpoint, prior)
    ttc, tokens_in, tokens_out, calls, wire, wins = [], [], [], [], [], 0
    specs = [build_episode(c, role, 0, prior, suites, surface) for c in paper_pool("timing") for role in (0, 1)]
    for spec in specs:
        result = run_episode(spec, backends={agent: backend for agent in spec.contexts}, prior=prior, suites=suites)
        generations = result.protocol.trace.generations
        ttc.append(result.seconds["protocol"])
        tokens_in.append(sum(g.reply.input_tokens or 0 for g in generations))
        tokens_out.append(sum(g.reply.output_tokens or 0 for g in generations))
        calls.append(result.protocol.trace.calls)
        wire.append(result.protocol.trace.wire.total_bytes)
        wins += result.outcome.success
    return {
        "episodes": len(specs),
        "success": wins / len(specs),
        "calls": statistics.mean(calls),
        "input_tokens": statistics.mean(tokens_in),
        "output_tokens": statistics.mean(tokens_out),
        "wire_bytes": statistics.mean(wire),
        "ttc_p50_ms": 1000 * statistics.median(ttc),
        "ttc_p95_ms": 1000 * sorted(ttc)[int(0.95 * (len(ttc) - 1))],
    }


def main() -> None:
    torch.set_num_threads(1)  # every model decodes under the same conditions, one after another
    with tempfile.TemporaryDirectory() as folder:
        factor_dir = Path(folder) / "factor"
        trained = train_tiny(ModelSpec(target=Target.FACTOR), factor_dir, steps=300, seed=0, evaluate=48)
        rows = {
            "Direct Short DSL": _episodes(FIXTURES / "tiny-dsl-rep", SurfaceName.DSL),
            "Direct JSON": _episodes(FIXTURES / "tiny-json-rep", SurfaceName.JSON),
            "Controlled free-form": _episodes(FIXTURES / "tiny-freeform-rep", SurfaceName.FREEFORM),
            "Factor-Code + Rule (DSL)": _episodes(factor_dir, SurfaceName.DSL),
        }
    dsl, json_row, free, factor = rows.values()
    ratios = {
        "json_over_dsl_output_tokens": json_row["output_tokens"] / dsl["output_tokens"],
        "freeform_over_dsl_wire_bytes": free["wire_bytes"] / dsl["wire_bytes"],
        "freeform_over_dsl_ttc": free["ttc_p50_ms"] / dsl["ttc_p50_ms"],
        "factor_over_direct_ttc": factor["ttc_p50_ms"] / dsl["ttc_p50_ms"],
    }
    table = Table(title="Tiny CPU models on the 40-cluster timing pool × 2 roles")
    for column in ("backend", "success", "calls", "in tok", "out tok", "wire B", "TTC p50 ms", "TTC p95 ms"):
        table.add_column(column)
    for name, row in rows.items():
        table.add_row(
            name,
            f"{100 * row['success']:.1f}%",
            f"{row['calls']:.2f}",
            f"{row['input_tokens']:.0f}",
            f"{row['output_tokens']:.1f}",
            f"{row['wire_bytes']:.1f}",
            f"{row['ttc_p50_ms']:.0f}",
            f"{row['ttc_p95_ms']:.0f}",
        )
    console = Console(width=120)
    console.print(table)
    console.print(
        f"JSON/DSL output tokens {ratios['json_over_dsl_output_tokens']:.2f} (paper 3.40); free-form/DSL wire bytes "
        f"{ratios['freeform_over_dsl_wire_bytes']:.2f} (paper 13.9), TTC {ratios['freeform_over_dsl_ttc']:.2f} "
        f"(paper 3.15); factor/direct TTC {ratios['factor_over_direct_ttc']:.2f} (paper 0.34); factor model trained "
        f"in {trained.seconds:.1f} s to {100 * (trained.exact_match or 0):.0f}%"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.write_text(json.dumps({"meta": meta, "rows": rows, **ratios}, indent=2) + "\n")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
