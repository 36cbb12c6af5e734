"""Receiver processing time (v2 Tables S26–S28), three receivers on the same saved sender outputs.

The committed tiny Direct Short DSL model writes each sender record of the 40-cluster timing
pool × 2 roles once; its delivered REQ is then handed to each receiver in turn: the learned
receiver (the same tiny model), the deterministic path realizer (it adopts the REQ) and the
directory lookup (the REQ's binding code selects a stored receiver path). For each receiver:
how many answers resolve forward with the sender's record (a formed commitment), and the
processing time per answer in milliseconds (median, mean, p95, maximum), measured around
the receiver call alone, ``--repeats`` times per answer, with the rule backends' memoized
compositions dropped before each call so that every call does its whole work. Results:
benchmarks/results/receivers.json. Not a test.

Computed differently from the paper: its learned receiver is Qwen3.5-0.8B on a GPU (856 ms
median), ours a 0.2 M-parameter model on this CPU; its deterministic receivers also parse and
check what they received, which ours leave to the protocol (parsing and the contract check
run in every condition alike).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.base import Backend
from gencoord.backends.local import LocalModelBackend
from gencoord.backends.rule import DirectoryLookup, RequestRealizer, forget_memoized
from gencoord.dsl.ast import Proposal
from gencoord.errors import GencoordError
from gencoord.prior import Prior, default_prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.protocol.resolve import resolve_forward
from gencoord.tasks import build_episode, default_suites, paper_pool
from gencoord.tasks.instances import EpisodeSpec

ROOT = Path(__file__).parents[1]
OUT = Path(__file__).parent / "results" / "receivers.json"
CHECKPOINT = ROOT / "experiments" / "checkpoints" / "tiny-dsl"
PAPER_MEDIAN_MS = {"learned": 856.11, "deterministic path": 0.63, "directory lookup": 0.36}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per answer (the paper's technical repeats)")
    args = parser.parse_args()
    prior, suites = default_prior(), default_suites()
    model = LocalModelBackend(CHECKPOINT, prior)
    receivers: dict[str, Backend] = {
        "learned": model,
        "deterministic path": RequestRealizer(prior),
        "directory lookup": DirectoryLookup(prior),
    }
    saved = []  # (episode, the sender's checked record, the delivered REQ line)
    for cluster in paper_pool("timing"):
        for role in (0, 1):
            spec = build_episode(cluster, role, 0, prior, suites)
            opening = GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
            text = model.generate(spec.contexts[spec.sender], opening).text
            try:
                sent = prior.parse(text)
            except GencoordError:
                continue
            if sent.request is not None:
                saved.append((spec, sent, text.split("\n")[1]))
    results: dict[str, dict[str, float | int]] = {}
    for name, receiver in receivers.items():
        times: list[float] = []
        formed = 0
        for spec, sent, line in saved:
            context = spec.contexts[spec.receiver]
            ask = GenerationRequest(spec.receiver, Stage.RECEIVER_AFTER_REQUEST, spec.sender, delivered_request=line)
            answer = ""
            for _ in range(args.repeats):
                forget_memoized()  # time whole interpretations, not cache hits
                started = time.perf_counter()
                answer = receiver.generate(context, ask).text
                times.append(1000 * (time.perf_counter() - started))
            formed += _forms(spec, sent, answer, prior)
        results[name] = {
            "answers": len(saved),
            "formed": formed,
            "median_ms": statistics.median(times),
            "mean_ms": statistics.fmean(times),
            "p95_ms": float(np.percentile(times, 95)),
            "max_ms": max(times),
        }
    table = Table(title=f"Receivers on the same {len(saved)} saved sender outputs (tiny Direct Short DSL)")
    for column in ("receiver", "formed", "median ms", "mean ms", "p95 ms", "max ms", "paper median ms"):
        table.add_column(column)
    for name, row in results.items():
        table.add_row(
            name,
            f"{row['formed']}/{row['answers']}",
            f"{row['median_ms']:.3f}",
            f"{row['mean_ms']:.3f}",
            f"{row['p95_ms']:.3f}",
            f"{row['max_ms']:.3f}",
            f"{PAPER_MEDIAN_MS[name]}",
        )
    Console(width=160).print(table)
    learned, realizer = results["learned"]["median_ms"], results["deterministic path"]["median_ms"]
    Console().print(f"learned / deterministic path median: {learned / realizer:.0f}×")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "meta": {"gencoord": __version__, "python": platform.python_version(), "repeats": args.repeats},
                "results": results,
                "paper_median_ms": PAPER_MEDIAN_MS,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    Console().print(f"→ {OUT.relative_to(ROOT)}")


def _forms(spec: EpisodeSpec, sent: Proposal, answer: str, prior: Prior) -> int:
    """1 when the receiver's answer parses and resolves forward with the sender's record."""
    try:
        resolve_forward(sent, spec.sender, prior.parse(answer), spec.receiver, prior, spec.public)
    except GencoordError:
        return 0
    return 1


if __name__ == "__main__":
    main()
