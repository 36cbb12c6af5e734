"""Every kind of report, opened in headless Chromium at 1,400 px as a reader would open it.

The page is read after its script has run: the trace viewer is clicked through episode by
episode, so a field the viewer names but the record lacks shows up as "undefined" here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.eval.config import load_experiment
from gencoord.eval.report import write_report
from gencoord.eval.runner import create_run, run_experiment
from gencoord.worlds.mineflayer.bridge import JS_DIR

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
FIXTURES = Path(__file__).parent / "fixtures"
TASK_RUNS = {
    "cooking": FIXTURES / "cooking" / "kitchen.json",
    "construction": FIXTURES / "construction" / "lookout.json",
}
INSPECT = Path(__file__).parent / "browser" / "inspect_report.js"
REDUCED = {  # one shipped experiment of each report shape, cut to a few clusters or tasks
    "request_intervention": 4,
    "controlled_faults": 4,
    "private_structure": 4,
    "gate_ablation": 2,
    "team_tasks": 4,
    "composition": 2,
}


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (make test installs it)")
def test_every_kind_of_report_reads_cleanly_at_1400_px(tmp_path: Path) -> None:
    reports = []
    for name, clusters in REDUCED.items():
        config = load_experiment(EXPERIMENTS / f"{name}.toml").model_copy(update={"clusters": clusters})
        run_dir = create_run(config, tmp_path / "runs")
        run_experiment(config, run_dir, workers=1)
        reports.append(str(write_report(run_dir).html))
    for kind, task_file in TASK_RUNS.items():  # `gencoord tasks run` reports: a cooking and a construction run
        out = tmp_path / "tasks" / kind
        done_run = CliRunner().invoke(app, ["tasks", "run", str(task_file), "--out", str(out)])
        assert done_run.exit_code == 0, done_run.output
        reports.append(str(out / "report.html"))
    shots = tmp_path / "shots"
    shots.mkdir()
    done = subprocess.run(
        ["node", str(INSPECT), str(JS_DIR / "node_modules"), str(shots), *reports],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    seen = [json.loads(line) for line in done.stdout.splitlines()]
    assert [page["report"] for page in seen] == [str(Path(report).resolve()) for report in reports]
    for page in seen:
        where = Path(page["report"]).parent.name
        assert page["problems"] == [], where
        assert page["episodes"] > 0, f"{where}: the trace viewer listed no episode"
        assert page["pageWidth"] <= page["windowWidth"], f"{where}: the page scrolls sideways"
        assert page["headlineRight"] is not None and page["headlineRight"] <= page["windowWidth"], where
        for figure in page["figures"]:
            assert figure["width"] > 0 and figure["inked"] > 0.01, f"{where}: figure {figure['name']} is empty"
            assert figure["shown"] >= 0.9 * min(figure["width"], page["windowWidth"] - 60), (
                f"{where}: figure {figure['name']} is shrunk to {figure['shown']:.0f} px"
            )
