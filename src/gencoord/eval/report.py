"""``report.md`` and a standalone ``report.html`` for a run folder.

The HTML file carries everything inside it: figures as base64 PNGs and every episode
record, gzip-compressed, for the trace viewer (messages, commitment, dispatch DAG,
action timeline with inventories, verdicts). It opens from disk with no server.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from gencoord.errors import ConfigError
from gencoord.eval.config import Experiment, GateExperimentConfig
from gencoord.eval.figures import build_figures
from gencoord.eval.gate_tables import gate_figure, gate_tables
from gencoord.eval.runner import read_manifest, read_records
from gencoord.eval.tables import Table, build_tables, paper_figures

_VIEWER_FIELDS = (
    "episode",
    "job",
    "instance",
    "success",
    "rounds",
    "budget",
    "anomalies",
    "issues",
    "message_log",
    "cluster",
    "template",
    "binding",
    "mode",
    "role",
    "seed",
    "sender",
    "receiver",
    "surface",
    "condition",
    "fault",
    "backend_set",
    "protocol",
    "actions",
    "handoff",
    "goal",
    "outcome",
)


@dataclass(frozen=True)
class Report:
    markdown: Path
    html: Path
    tables: list[Table]


def _markdown_cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("gencoord.eval", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=False, default=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["md"] = _markdown_cell
    return environment


def _viewer_payload(records: Sequence[Mapping[str, Any]]) -> str:
    slim = [{name: record[name] for name in _VIEWER_FIELDS if name in record} for record in records]
    raw = json.dumps(slim, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def write_report(run_dir: Path) -> Report:
    config, manifest = read_manifest(run_dir)
    records = read_records(run_dir)
    if not records:
        raise ConfigError("EMPTY_RUN", f"{run_dir}: no episode records yet; run the experiment first")
    if isinstance(config, GateExperimentConfig):
        tables, estimates = gate_tables(records, config)
        figures = {"ablation": gate_figure(estimates, run_dir / "figures" / "ablation.png")}
    else:
        rows, tables = build_tables(records, config)
        figures = build_figures(rows, config, run_dir / "figures")
    context = _context(config, manifest, records, tables)
    environment = _environment()
    markdown = run_dir / "report.md"
    markdown.write_text(
        environment.get_template("report.md.j2").render(**context, figures=sorted(figures)), encoding="utf-8"
    )
    html = run_dir / "report.html"
    embedded = {name: base64.b64encode(data).decode("ascii") for name, data in figures.items()}
    html.write_text(
        environment.get_template("report.html.j2").render(
            **context, figures=embedded, payload=_viewer_payload(records)
        ),
        encoding="utf-8",
    )
    return Report(markdown, html, tables)


def _context(
    config: Experiment, manifest: Mapping[str, Any], records: Sequence[Mapping[str, Any]], tables: list[Table]
) -> dict[str, Any]:
    expected = int(manifest.get("episodes", len(records)))
    return {
        "config": config,
        "summary": config.summary(),
        "manifest": manifest,
        "tables": tables,
        "episodes": len(records),
        "expected": expected,
        "complete": len(records) >= expected,
        "source": paper_figures().get(config.kind.value, {}).get("source"),
    }
