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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from gencoord.backends.families import recorded_label
from gencoord.errors import ConfigError
from gencoord.eval.experiment import Experiment, config_digest, experiment_kind_of
from gencoord.eval.glossary import used_terms
from gencoord.eval.ray_runner import FAILED
from gencoord.eval.runner import read_manifest, read_records, unique_records
from gencoord.eval.tables import Table, paper_figures
from gencoord.reasons import Reason

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
    "handoffs",
    "goal",
    "outcome",
    "task",
    "agents",
    "lead",
    "backend",
    "code",
    "message",
    "messages",
    "wire",
    "wire_bytes",
    "commitment",
    "plan",
    "handoff_checks",
    "stages",
    "time_limit_s",
    "duration_s",
)


@dataclass(frozen=True)
class Report:
    markdown: Path
    html: Path
    headline: Table | None
    tables: list[Table]
    """The detail tables, below the headline."""

    @property
    def all_tables(self) -> list[Table]:
        """Every table in the order the report shows them, the headline first."""
        return ([self.headline] if self.headline is not None else []) + self.tables


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("gencoord.eval", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=False, default=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment


def _viewer_payload(records: Sequence[Mapping[str, Any]]) -> str:
    slim = [{name: _shown_value(name, record[name]) for name in _VIEWER_FIELDS if name in record} for record in records]
    raw = json.dumps(slim, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def _shown_value(name: str, value: Any) -> Any:
    """A backend by its short label (the tables' row names), anything else as recorded."""
    return recorded_label(value) if name in ("backend_set", "backend") and isinstance(value, str) else value


def write_report(run_dir: Path, out: Path | None = None) -> Report:
    """``report.md`` and ``report.html`` for a run folder, from its manifest and records alone, written into the
    run folder or into ``out`` (a run folder that is read-only, or kept as it was recorded)."""
    config, manifest = read_manifest(run_dir)
    records, duplicates = unique_records(read_records(run_dir))
    if not records:
        raise ConfigError(Reason.EMPTY_RUN, f"{run_dir}: no episode records yet; run the experiment first")
    out = run_dir if out is None else out
    try:
        out.mkdir(parents=True, exist_ok=True)
        return _write(run_dir, out, config, manifest, records, duplicates)
    except OSError as exc:
        why = "it is a file, not a folder" if out.is_file() else exc.strerror
        raise ConfigError(
            Reason.BAD_OUTPUT, f"cannot write the report into {out}: {why}; give another folder with --out"
        ) from None


def _write(
    run_dir: Path,
    out: Path,
    config: Experiment,
    manifest: Mapping[str, object],
    records: Sequence[Mapping[str, Any]],
    duplicates: int,
) -> Report:
    facts = manifest.get("report_facts")
    parts = experiment_kind_of(config).report(config, records, out, facts if isinstance(facts, dict) else {})
    headline, tables = _shown(parts.headline, parts.tables)
    figures = parts.figures
    expected = manifest.get("episodes")
    context = _context(config, records, tables, duplicates, expected if isinstance(expected, int) else len(records))
    context["headline"] = headline
    context["sections"] = parts.sections
    context["glossary"] = used_terms(
        [
            text
            for table in (headline, *tables)
            if table is not None
            for text in (table.title, *table.columns, table.caption, *(cell for row in table.rows for cell in row))
        ]
    )
    lost = _lost_jobs(run_dir, records)
    if lost:
        context["warnings"].append(
            f"{lost} jobs lost their worker on every try and are not in these tables (failed.jsonl); "
            "gencoord run --resume runs them again"
        )
    environment = _environment()
    markdown = out / "report.md"
    markdown.write_text(
        environment.get_template("report.md.j2").render(**context, figures=sorted(figures)), encoding="utf-8"
    )
    html = out / "report.html"
    embedded = {name: base64.b64encode(data).decode("ascii") for name, data in figures.items()}
    html.write_text(
        environment.get_template("report.html.j2").render(
            **context, figures=embedded, payload=_viewer_payload(records)
        ),
        encoding="utf-8",
    )
    return Report(markdown, html, headline, tables)


def _shown(headline: Table | None, tables: Sequence[Table]) -> tuple[Table | None, list[Table]]:
    """The tables as a report shows them: empty columns left out, and each note on how our figures are computed
    differently from the paper's printed once, under the first table it applies to."""
    said: set[str] = set()
    shown: list[Table] = []
    for table in ([headline] if headline is not None else []) + list(tables):
        compact = table.compacted()
        new = [note for note in compact.differences if note not in said]
        said.update(new)
        if len(new) < len(compact.differences):
            new.append("(The notes above on how our figures differ from the paper's apply here too.)")
        shown.append(replace(compact, differences=new))
    return (shown[0], shown[1:]) if headline is not None else (None, shown)


def _lost_jobs(run_dir: Path, records: Sequence[Mapping[str, Any]]) -> int:
    """Jobs in failed.jsonl that no record has made good since (a resume may have)."""
    path = run_dir / FAILED
    if not path.exists():
        return 0
    recorded = {str(record.get("job")) for record in records}
    lost = {str(json.loads(line)["job"]) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    return len(lost - recorded)


def _header(
    config: Experiment, records: Sequence[Mapping[str, Any]], duplicates: int
) -> tuple[dict[str, str], list[str]]:
    """What the records say about how they were made, and every way they disagree with the manifest."""
    versions = sorted({str(record.get("gencoord", "?")) for record in records})
    digests = sorted({str(record.get("config_sha256", "unrecorded")) for record in records})
    worlds = sorted({str(record.get("world", "sim")) for record in records})
    names = sorted({str(record.get("experiment", "?")) for record in records})
    warnings: list[str] = []
    if duplicates:
        warnings.append(
            f"{duplicates} duplicate records of jobs already recorded were dropped (was the folder written by two "
            "processes at once?); every table counts each job once"
        )
    if names != [config.name]:
        warnings.append(f"records name the experiment(s) {', '.join(names)}, but the manifest names {config.name}")
    if digests != [config_digest(config)]:
        warnings.append(
            "the config in manifest.json is not the one these records were made with (edited after the run?); "
            "the tables are computed from the records"
        )
    header = {
        "versions": ", ".join(versions),
        "digest": ", ".join(d[:12] for d in digests),
        "worlds": "world " + ", ".join(worlds),
    }
    return header, warnings


def _context(
    config: Experiment, records: Sequence[Mapping[str, Any]], tables: list[Table], duplicates: int, expected: int
) -> dict[str, Any]:
    """What the templates show; ``expected`` is the job count the run's manifest recorded when it was planned."""
    header, warnings = _header(config, records, duplicates)
    return {
        "config": config,
        "summary": config.summary(),
        "header": header,
        "warnings": warnings,
        "tables": tables,
        "episodes": len(records),
        "expected": expected,
        "complete": len(records) >= expected,
        "source": paper_figures().get(config.kind, {}).get("source"),
    }
