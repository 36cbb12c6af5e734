"""Picking and repeating tasks, and `tasks check` as a person reads it: one line a task, a summary, an exit code."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.eval.runner import RECORDS

COOKING = Path(__file__).parent / "fixtures" / "cooking" / "kitchen.json"
runner = CliRunner()


def _ids() -> list[str]:
    return list(json.loads(COOKING.read_text()))


def test_match_picks_tasks_by_pattern_and_repeats_run_each_as_its_own_draw(tmp_path: Path) -> None:
    ids = _ids()
    wanted = [ids[0], ids[-1]]
    out = tmp_path / "run"
    args = ["tasks", "run", str(COOKING), "--task", wanted[0], "--match", f"{wanted[1][:6]}*{wanted[1][-4:]}"]
    done = runner.invoke(app, [*args, "--repeats", "3", "--workers", "0", "--out", str(out)])
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in (out / RECORDS).read_text().splitlines()]
    matched = {
        task for task in ids if task == wanted[0] or (task.startswith(wanted[1][:6]) and task.endswith(wanted[1][-4:]))
    }
    expected = {f"{task}{suffix}" for task in matched for suffix in ("", "#2", "#3")}
    assert {record["task"] for record in records} == expected
    assert all(isinstance(record["wall_s"], float) and record["verdict"] for record in records)


def test_a_pattern_that_names_no_task_is_refused(tmp_path: Path) -> None:
    done = runner.invoke(app, ["tasks", "run", str(COOKING), "--match", "no-such-*", "--out", str(tmp_path / "r")])
    assert done.exit_code == 2 and "NO_TASK_MATCHES" in done.stderr


def test_check_says_one_line_a_task_and_a_summary_and_exits_1_when_nothing_can_run(tmp_path: Path) -> None:
    done = runner.invoke(app, ["tasks", "check", str(COOKING)])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("  ") and " · " in line) == len(_ids())
    assert lines[-1].startswith(f"{len(_ids())} tasks in 1 files: ")
    impossible = tmp_path / "impossible.json"
    raw = {
        "t_golden_carrot_bread_hells_kitchen": {
            "agent_count": 2,
            "type": "cooking",
            "target": ["golden_carrot", "bread"],
        }
    }
    impossible.write_text(json.dumps(raw))
    refused = runner.invoke(app, ["tasks", "check", str(impossible)])
    assert refused.exit_code == 1, refused.output
    assert (
        "refused UNREACHABLE_GOAL" in refused.stdout and "0 can run, 1 refused (UNREACHABLE_GOAL 1)" in refused.stdout
    )
