"""``gencoord tasks run``'s run folder: refusals recorded, stale records run again, torn lines repaired, one writer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.eval.run_files import run_lock
from gencoord.eval.runner import RECORDS

FIXTURES = Path(__file__).parent / "fixtures" / "team"
runner = CliRunner()


def _run(path: Path, out: Path) -> list[dict[str, object]]:
    result = runner.invoke(app, ["tasks", "run", str(path), "--out", str(out), "--jsonl"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _records(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / RECORDS).read_text().splitlines()]


def test_refused_tasks_get_records_and_the_run_goes_on(tmp_path: Path) -> None:
    lines = {line["task"]: line for line in _run(FIXTURES / "mindcraft_as_shipped.json", tmp_path / "out")}
    assert (
        lines["a_negative_count"]["code"] == "BAD_COUNT" and lines["a_command_nobody_has"]["code"] == "UNKNOWN_COMMAND"
    )
    assert not lines["a_negative_count"]["success"] and lines["a_negative_count"]["feasible"] is False
    assert lines["multiagent_crafting_bow_requires_ctable_partial_plan__depth_0"]["success"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Refused before acting" in report and "UNKNOWN_COMMAND" in report
    assert "median makespan / single crafter" in report


def test_a_changed_task_runs_again_and_an_unchanged_one_is_reused(tmp_path: Path) -> None:
    path, out = tmp_path / "tasks.json", tmp_path / "out"
    document = json.loads((FIXTURES / "mindcraft_as_shipped.json").read_text())
    path.write_text(json.dumps(document))
    first = _run(path, out)
    assert _run(path, out) == first and len(_records(out)) == len(first)  # resumed: nothing ran twice
    document["a_negative_count"]["initial_inventory"]["0"]["stick"] = 2  # the user fixes the task
    path.write_text(json.dumps(document))
    result = runner.invoke(app, ["tasks", "run", str(path), "--out", str(out), "--jsonl"])
    assert result.exit_code == 0 and "1 recorded tasks are stale" in result.stderr
    fixed = next(json.loads(line) for line in result.stdout.splitlines() if '"a_negative_count"' in line)
    assert fixed["success"] and len(_records(out)) == len(first) + 1  # appended, never rewritten


def test_a_record_of_another_gencoord_is_stale(tmp_path: Path) -> None:
    path, out = FIXTURES / "own_format.toml", tmp_path / "out"
    first = _run(path, out)
    records = _records(out)
    for record in records:
        record["gencoord"] = "0.0.0"
    (out / RECORDS).write_text("".join(json.dumps(record) + "\n" for record in records))
    result = runner.invoke(app, ["tasks", "run", str(path), "--out", str(out), "--jsonl"])
    assert f"{len(first)} recorded tasks are stale" in result.stderr
    assert len(_records(out)) == 2 * len(first)


def test_a_torn_last_line_is_cut_and_that_task_runs_again(tmp_path: Path) -> None:
    path, out = FIXTURES / "own_format.toml", tmp_path / "out"
    first = _run(path, out)
    data = (out / RECORDS).read_bytes()
    (out / RECORDS).write_bytes(data[: len(data) - 40])  # a crash mid-append
    assert _run(path, out) == first
    assert len(_records(out)) == len(first)  # the torn line is gone, its task recorded once more


def test_two_runs_into_one_folder_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with run_lock(out):
        result = runner.invoke(app, ["tasks", "run", str(FIXTURES / "own_format.toml"), "--out", str(out)])
    assert result.exit_code == 2 and "is being written by process" in result.stderr
    assert not (out / RECORDS).exists()
    shutil.rmtree(out)
