"""Team models in every role (issue 36): success, time to commitment, tokens and parse failures, per role.

Runs, side by side in one process on the same tasks, the planner with rule peers (the reference,
zero model calls) and the shipped tiny team model in every role, decoded freely (``model:``), under
each message's grammar (``constrained:``), and leading with checked drafts (``checked:``: up to 16
proposals a round, the first its own dry run carries to the goal is sent), plus each role alone (the
model leading with rule peers; the planner leading with model peers), and, where it is shipped, the
checkpoint kept for the lead's role (``tiny-team-lead``) leading the peers' checkpoint. Tasks: generated
MINDcraft-format crafting tasks of item families held out of the model's training
(``gencoord.train.team_data``), and
MINDcraft's own crafting train file, which the model never saw. Per setting it reports success by
agent count, and per role (lead; peers' HAVE and decision lines) the mean time to write a message,
output tokens per message, and how many runs ended in a parse failure; and the dialogue on identical
tasks: bytes, tokens, messages, rounds, parse failures and success of the Short DSL against words
(controlled sentences said for the rules, and a team model trained on words speaking its own, where
one is shipped). Results: benchmarks/results/team_models.json. Not a test; timings are this
machine's, compare them as ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.registry import team_players
from gencoord.dsl.surface import SurfaceName
from gencoord.eval.stats import bootstrap_mean, clopper_pearson
from gencoord.models.load import export_merged
from gencoord.models.manifest import MANIFEST
from gencoord.models.serving import transformers_serve
from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.run.team_run import TeamResult
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import read_task_file
from gencoord.train.team_data import HELD_OUT, draw_task

ROOT = Path(__file__).parents[1]
CHECKPOINT = ROOT / "src" / "gencoord" / "experiments" / "checkpoints" / "tiny-team"
LEAD = CHECKPOINT.with_name("tiny-team-lead")
WORDS = CHECKPOINT.with_name("tiny-team-words")
PRETRAINED = CHECKPOINT.with_name("smollm2-team")
PRETRAINED_PEERS = CHECKPOINT.with_name("smollm2-team-peers")
PRETRAINED_WORDS = CHECKPOINT.with_name("smollm2-team-words")
MINDCRAFT = ROOT.parent / "shared" / "data" / "mindcraft" / "crafting" / "filtered_train_tasks.json"
ROLES = {"team_lead": "lead", "team_have": "peer HAVE", "team_response": "peer decision"}


def settings(checkpoint: Path, lead: Path, words: Path) -> list[tuple[str, str, SurfaceName]]:
    """(name, roles, surface): the reference, the team model in every role and in each role alone, the lead's
    own checkpoint leading, and the dialogue: controlled sentences said for the rules, and a team model
    trained on words speaking its own."""
    model, constrained, checked = f"model:{checkpoint}", f"constrained:{checkpoint}", f"checked:{checkpoint}"
    rows = [
        ("planner + rule peers", "planner", SurfaceName.DSL),
        ("model, every role", f"lead={model},peers={model}", SurfaceName.DSL),
        ("constrained model, every role", f"lead={constrained},peers={constrained}", SurfaceName.DSL),
        ("checked drafts lead, constrained peers: every role", f"lead={checked},peers={constrained}", SurfaceName.DSL),
        ("checked drafts lead, rule peers", f"lead={checked},peers=rule", SurfaceName.DSL),
        ("constrained model leads, rule peers", f"lead={constrained},peers=rule", SurfaceName.DSL),
        ("planner leads, constrained model peers", f"lead=planner,peers={constrained}", SurfaceName.DSL),
        ("planner + rule peers, controlled sentences", "planner", SurfaceName.FREEFORM),
    ]
    if (lead / MANIFEST).exists():
        rows += [
            (
                "lead checkpoint checked, constrained peers: every role",
                f"lead=checked:{lead},peers={constrained}",
                SurfaceName.DSL,
            ),
            ("lead checkpoint checked, rule peers", f"lead=checked:{lead},peers=rule", SurfaceName.DSL),
        ]
    if (words / MANIFEST).exists():
        rows.append(
            ("model trained on words, every role", f"lead=model:{words},peers=model:{words}", SurfaceName.FREEFORM)
        )
    return rows


Setting = tuple[str, str, SurfaceName]


def pretrained_settings(
    adapter: Path,
    peers: Path | None,
    checkpoint: Path,
    lead: Path,
    words: Path | None = None,
    words_dsl: Path | None = None,
) -> list[Setting]:
    """The pretrained model (SmolLM2-135M-Instruct with a fine-tuned adapter) in every role: a checked lead and
    constrained peers, with the adapter kept for the peers' answers where one is given (else the one adapter in
    every role: ``--pretrained-peers none``); and, on the same tasks (item families no model was trained on),
    the shipped tiny pair in the same roles and the planner with rule peers, the reference.

    With ``words`` (the same base fine-tuned the same way on the same rows said in the team dialogue's words,
    ``gencoord finetune --surface freeform``): that adapter speaking free-form dialogue in every role, its lead
    checked as the Short DSL's is (its drafts heard as its peers will hear them), beside a Short DSL adapter
    in the same roles and both decoded freely: ``words_dsl``, the one fine-tuned as the words one was (the same
    rows, roles and minutes; default the lead's adapter). Sentences have no grammar, so the free rows compare
    the two surfaces with the same decoding, and the checked rows each surface at its best."""
    dsl = words_dsl or adapter
    rows = [("planner + rule peers", "planner", SurfaceName.DSL)]
    if words is not None:
        rows += [
            (
                f"SmolLM2+LoRA words ({words.name}): checked lead, free peers",
                f"lead=checked:{words},peers=model:{words}",
                SurfaceName.FREEFORM,
            ),
            (
                f"SmolLM2+LoRA words ({words.name}), free in every role",
                f"lead=model:{words},peers=model:{words}",
                SurfaceName.FREEFORM,
            ),
            (
                f"SmolLM2+LoRA Short DSL ({dsl.name}), free in every role",
                f"lead=model:{dsl},peers=model:{dsl}",
                SurfaceName.DSL,
            ),
        ]
    if peers is not None:
        rows.append(
            (
                f"SmolLM2+LoRA: checked lead ({adapter.name}), constrained peers ({peers.name})",
                f"lead=checked:{adapter},peers=constrained:{peers}",
                SurfaceName.DSL,
            )
        )
    else:
        rows.append(
            (
                f"SmolLM2+LoRA: checked lead, constrained peers, both {adapter.name}",
                f"lead=checked:{adapter},peers=constrained:{adapter}",
                SurfaceName.DSL,
            )
        )
    rows.append(
        (
            "tiny: lead checkpoint checked, constrained peers",
            f"lead=checked:{lead},peers=constrained:{checkpoint}",
            SurfaceName.DSL,
        )
    )
    return rows


def compare_settings(candidate: Path, checkpoint: Path, lead: Path) -> list[tuple[str, str, SurfaceName]]:
    """A candidate team checkpoint in every role beside the shipped ones in the same roles (a checked lead,
    constrained peers), on the same tasks: whether retraining (on other team sizes, say) should replace them."""
    return [
        (
            "shipped: lead checkpoint checked, constrained peers",
            f"lead=checked:{lead},peers=constrained:{checkpoint}",
            SurfaceName.DSL,
        ),
        (
            f"candidate {candidate.name}: checked lead, constrained peers",
            f"lead=checked:{candidate},peers=constrained:{candidate}",
            SurfaceName.DSL,
        ),
    ]


def measure(
    name: str,
    roles: str,
    surface: SurfaceName,
    suites: dict[str, list[TeamTask]],
    progress: Path,
    limit: int | None = None,
) -> dict[str, Any]:
    """One setting on every suite; each task's outcome is appended to ``progress`` as it ends.

    A pretrained model takes minutes a task on a CPU, so a run cut short still leaves its
    tasks' outcomes behind.
    """
    prior = team_prior()
    players = team_players(roles, prior)
    results: dict[str, list[TeamResult]] = defaultdict(list)
    if limit is not None:  # a speed row: the first tasks of the first suite
        first = next(iter(suites))
        suites = {first: suites[first][:limit]}
    for suite, tasks in suites.items():
        for task in tasks:
            began = time.perf_counter()
            result = run_team_task(task, prior, surface=surface, lead_backend=players.lead, peer_backend=players.peers)
            results[suite].append(result)
            line = {"setting": name, "suite": suite, "task": task.id, "agents": len(task.agents)}
            line |= {"success": result.success, "code": result.code, "wall_s": round(time.perf_counter() - began, 1)}
            with progress.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
    row: dict[str, Any] = {"setting": name, "roles": roles, "surface": surface.value, "suites": {}}
    for suite, done in results.items():
        by_agents: dict[int, list[bool]] = defaultdict(list)
        for result in done:
            by_agents[len(result.task.agents)].append(result.success)
        per_role: dict[str, dict[str, float | int]] = {}
        for stage, role in ROLES.items():
            said = [g.reply for result in done for g in result.generations if g.stage == stage]
            if not said:
                continue
            per_role[role] = {
                "messages": len(said),
                "model_calls": sum(reply.model_calls for reply in said),
                "mean_ms": 1000 * statistics.fmean(reply.latency_s for reply in said),
                "output_tokens": statistics.fmean(reply.output_tokens or 0 for reply in said),
                "tokens_per_s": sum(reply.output_tokens or 0 for reply in said)
                / max(1e-9, sum(reply.latency_s for reply in said)),
                "calls_per_message": sum(reply.model_calls for reply in said) / len(said),
                "ms_per_token": 1000
                * sum(reply.latency_s for reply in said)
                / max(1, sum(reply.output_tokens or 0 for reply in said)),
            }
        succeeded = clopper_pearson(sum(r.success for r in done), len(done))
        row["suites"][suite] = {
            "tasks": len(done),
            "success": succeeded.value,
            "success_95": [succeeded.low, succeeded.high],
            "per_task_95": _intervals(done),
            "by_agents": {n: f"{sum(w)}/{len(w)}" for n, w in sorted(by_agents.items())},
            "parse_failures": sum(r.failure == "PARSE_FAILURE" for r in done),
            "wire_bytes": statistics.fmean(r.wire.total_bytes for r in done),
            "messages": statistics.fmean(len(r.wire.messages) for r in done),
            "rounds": statistics.fmean(r.rounds for r in done),
            "tokens": statistics.fmean(r.tokens or 0 for r in done),
            "codes": dict(sorted(_codes(done).items())),
            "time_to_commitment_s": statistics.fmean(r.seconds.get("protocol", 0.0) for r in done),
            "roles": per_role,
        }
    return row


def speed_rows(
    adapter: Path, peers: Path | None, suites: dict[str, list[TeamTask]], progress: Path, tasks: int
) -> list[dict[str, Any]]:
    """The adapters decoded freely in their roles (the lead's; the peers' where one is kept, else the lead's), in
    process and over a real OpenAI-compatible server (their merged exports behind one ``transformers serve``), on
    the same tasks: per role, time per message and per output token. Beside the constrained rows, the free
    in-process row gives what the grammar costs per token; beside the served one, what the API adds."""
    answering = peers or adapter
    with tempfile.TemporaryDirectory() as folder:
        lead = export_merged(adapter, Path(folder) / "lead")
        peer = export_merged(answering, Path(folder) / "peers")
        rows = [
            measure(
                "SmolLM2+LoRA free, in process",
                f"lead=model:{adapter},peers=model:{answering}",
                SurfaceName.DSL,
                suites,
                progress,
                tasks,
            )
        ]
        with (  # a server started with a model serves that model alone
            transformers_serve(lead, Path(folder) / "lead.log") as leading,
            transformers_serve(peer, Path(folder) / "peers.log") as answering_server,
        ):
            rows.append(
                measure(
                    "SmolLM2+LoRA free, over transformers serve",
                    f"lead=served:{leading.url}#{lead},peers=served:{answering_server.url}#{peer}",
                    SurfaceName.DSL,
                    suites,
                    progress,
                    tasks,
                )
            )
    return rows


def _intervals(results: list[TeamResult]) -> dict[str, list[float]]:
    """Messages, tokens, wire bytes and rounds per task: mean and a 95% percentile bootstrap over tasks."""
    per_task = {
        "messages": lambda r: len(r.wire.messages),
        "tokens": lambda r: r.tokens or 0,
        "wire_bytes": lambda r: r.wire.total_bytes,
        "rounds": lambda r: r.rounds,
    }
    estimates = {
        name: bootstrap_mean({f"{i}": float(value(r)) for i, r in enumerate(results)})
        for name, value in per_task.items()
    }
    return {name: [e.value, e.low, e.high] for name, e in estimates.items()}


def _codes(results: list[TeamResult]) -> dict[str, int]:
    codes: dict[str, int] = defaultdict(int)
    for result in results:
        if not result.success:
            codes[str(result.code)] += 1
    return codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--lead", type=Path, default=LEAD, help="a team model kept for the lead's role")
    parser.add_argument("--words", type=Path, default=WORDS, help="a team model trained on the dialogue's words")
    parser.add_argument("--tasks", type=int, default=60, help="held-out generated tasks")
    parser.add_argument(
        "--pretrained",
        type=Path,
        nargs="?",
        const=PRETRAINED,
        help="measure the fine-tuned pretrained model (this adapter; default the shipped one) instead of the tiny ones",
    )
    parser.add_argument(
        "--pretrained-peers",
        type=Path,
        default=PRETRAINED_PEERS,
        help="with --pretrained: an adapter kept for the peers' answers (none: the one adapter in every role only)",
    )
    parser.add_argument(
        "--pretrained-words",
        type=Path,
        default=PRETRAINED_WORDS,
        help="with --pretrained: an adapter fine-tuned on the dialogue's words (gencoord finetune --surface "
        "freeform), measured against the Short DSL adapter on the same tasks (skipped where there is none)",
    )
    parser.add_argument(
        "--pretrained-words-dsl",
        type=Path,
        help="with --pretrained-words: the Short DSL adapter fine-tuned as the words one was (the same --roles and "
        "--minutes), the free rows' counterpart (default: the lead's adapter)",
    )
    parser.add_argument(
        "--rows",
        help="only the settings whose name holds one of these comma-separated words (to split a long run: "
        "its outcomes are the same, its times measured under another load)",
    )
    parser.add_argument(
        "--speed",
        type=int,
        default=0,
        metavar="N",
        help="with --pretrained: on the first N held-out tasks, the adapter decoded freely in process and over "
        "transformers serve (its merged export), for time per token and what the grammar costs",
    )
    parser.add_argument(
        "--compare", type=Path, help="a candidate team checkpoint, measured beside the shipped ones in the same roles"
    )
    parser.add_argument("--sizes", default="2,3,4,5", help="team sizes of the held-out generated tasks")
    parser.add_argument("--mindcraft", type=Path, default=MINDCRAFT, help="a crafting file too (none: skip it)")
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (1: two runs side by side on 2 cores)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "team_models.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    prior, rng = team_prior(), random.Random(args.seed)
    sizes = tuple(int(size) for size in args.sizes.split(","))
    suites = {"held-out generated": [draw_task(prior, rng, HELD_OUT, sizes) for _ in range(args.tasks)]}
    if args.mindcraft.exists():
        suites["MINDcraft crafting train"] = list(read_task_file(args.mindcraft, prior=prior).tasks)
    started = time.perf_counter()
    peers = args.pretrained_peers if (args.pretrained_peers / MANIFEST).exists() else None
    if args.compare:
        chosen = compare_settings(args.compare, args.checkpoint, args.lead)
    elif args.pretrained:
        words = args.pretrained_words if (args.pretrained_words / MANIFEST).exists() else None
        chosen = pretrained_settings(
            args.pretrained, peers, args.checkpoint, args.lead, words, args.pretrained_words_dsl
        )
    else:
        chosen = settings(args.checkpoint, args.lead, args.words)
    if args.rows:
        wanted = args.rows.split(",")
        chosen = [setting for setting in chosen if any(word in setting[0] for word in wanted)]
    progress = args.out.with_suffix(".progress.jsonl")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    progress.unlink(missing_ok=True)
    console = Console()
    console.print(f"each task's outcome as it ends: {progress}")
    rows = [measure(name, roles, surface, suites, progress) for name, roles, surface in chosen]
    if args.pretrained and args.speed:
        rows += speed_rows(args.pretrained, peers, suites, progress, args.speed)
    for suite, tasks in suites.items():
        table = Table(title=f"{suite}: {len(tasks)} tasks")
        columns = ("setting", "success", "by agents", "parse failures", "wire B", "tokens", "lead ms", "HAVE ms")
        for column in (*columns, "decision ms"):
            table.add_column(column)
        for row in rows:
            if suite not in row["suites"]:
                continue
            cell = row["suites"][suite]
            roles = cell["roles"]
            table.add_row(
                row["setting"],
                f"{100 * cell['success']:.1f}%",
                " ".join(f"{n}:{w}" for n, w in cell["by_agents"].items()),
                str(cell["parse_failures"]),
                f"{cell['wire_bytes']:.0f}",
                f"{cell['tokens']:.0f}",
                *(f"{roles[r]['mean_ms']:.0f}" if r in roles else "–" for r in ("lead", "peer HAVE", "peer decision")),
            )
        console.print(table)
    measured = (args.compare or args.pretrained or args.checkpoint).resolve()
    args.out.write_text(
        json.dumps(
            {
                "checkpoint": str(measured.relative_to(ROOT) if measured.is_relative_to(ROOT) else measured),
                "sizes": sizes,
                "seed": args.seed,
                "seconds": time.perf_counter() - started,
                "machine": {
                    "python": platform.python_version(),
                    "torch": torch.__version__,
                    "cpus": torch.get_num_threads(),
                },
                "gencoord": __version__,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    console.print(f"results: {args.out}")


if __name__ == "__main__":
    main()
