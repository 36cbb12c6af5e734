"""Reports from real (reduced) runs: the tables hold our numbers, the HTML is self-contained."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path

from pytest import MonkeyPatch
from scipy.stats import binomtest
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.eval.config import load_experiment
from gencoord.eval.report import write_report
from gencoord.eval.runner import create_run, read_records, run_experiment

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
runner = CliRunner()


def _run(name: str, tmp_path: Path, clusters: int) -> Path:
    config = load_experiment(EXPERIMENTS / f"{name}.toml").model_copy(update={"clusters": clusters})
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    return run_dir


HEADLINE = "Headline: original-task success by row"
DETAIL = "Outcomes by row in detail"


def _table(markdown: str, title: str) -> list[list[str]]:
    section = markdown.split(f"## {title}")[1].split("\n\n")[1]
    return [[c.strip() for c in line.strip("| ").split(" | ")] for line in section.splitlines()[2:]]


def _named(markdown: str, title: str) -> dict[str, dict[str, str]]:
    """A report table's rows by their first cell, each cell by its column's name."""
    section = markdown.split(f"## {title}")[1].split("\n\n")[1].splitlines()
    columns = [c.strip() for c in section[0].strip("| ").split(" | ")]
    rows = [[c.strip() for c in line.strip("| ").split(" | ")] for line in section[2:]]
    return {row[0]: dict(zip(columns, row, strict=True)) for row in rows}


def test_feedback_report_regenerates_tables_s18_and_s19(tmp_path: Path) -> None:
    report = write_report(_run("feedback_intervention", tmp_path, 8))
    markdown = report.markdown.read_text()
    outcomes = _named(markdown, DETAIL)
    assert outcomes["feedback"]["how"].startswith("rule: ") and "by construction" in outcomes["feedback"]["how"]
    assert outcomes["feedback"]["agents played by"] == "request-realizer, rule-requester"
    for row in outcomes.values():  # the strict count's exact interval, checked against scipy's own binomial test
        strict, clusters = (int(n) for n in row["strict"].split("/"))
        exact = binomtest(strict, clusters).proportion_ci(method="exact")
        assert row["strict 95% CI"] == f"[{100 * exact.low:.1f}, {100 * exact.high:.1f}]"
    assert "*Computed differently from the paper:*" in markdown and "response B 0" in markdown
    assert "in tok" not in outcomes["feedback"]  # rules count no tokens: the empty column is left out, and said
    assert "Left out as no row has a value: in tok, out tok, API cost." in markdown
    headline = _named(markdown, HEADLINE)
    assert [headline[c]["success"] for c in ("local_only", "feedback", "counterfactual_feedback", "centralized")] == [
        "50.0%",
        "100.0%",
        "0.0%",
        "100.0%",
    ]
    assert headline["feedback"]["paper success"] == "100.0%"  # the paper column, beside ours
    assert markdown.index(HEADLINE) < markdown.index(DETAIL)  # the headline opens the report
    fidelity = {row[0]: row for row in _table(markdown, "Commitment fields under counterfactual feedback")}
    assert fidelity["craft actor"][1:4] == ["48/48", "0/48", "rewritten"]
    assert fidelity["goal item"][3] == "invariant"
    assert "Matched-pair block bootstrap" in markdown and (report.html.parent / "figures" / "success.png").exists()


def test_learned_feedback_rows_come_from_the_model_trained_for_each_condition(tmp_path: Path) -> None:
    """A reduced experiments/feedback_intervention_learned.toml: the committed tiny requester and centralized
    models, one per seed, each in the conditions whose records it learned; one call where the paper has one."""
    markdown = write_report(_run("feedback_intervention_learned", tmp_path, 4)).markdown.read_text()
    outcomes = _named(markdown, DETAIL)
    learned = {label.split(" · ")[0]: row for label, row in outcomes.items() if label.endswith(" model")}
    assert set(learned) == {"local_only", "feedback", "counterfactual_feedback", "centralized"}
    for condition, row in learned.items():
        assert row["how"] == "model: direct"
        model = "tiny-central" if condition == "centralized" else "tiny-requester"
        assert row["row"] == f"{condition} · {model.replace('-', ' ')} model"  # a label, not a path or {seed}
        assert row["agents played by"] == ", ".join(f"direct:{model}-s{seed}" for seed in (1, 2, 3))
        assert row["model calls"] == ("2.00" if "feedback" in condition else "1.00")  # model calls per episode
        assert (row["response B"] == "0.0") == (condition not in {"feedback", "counterfactual_feedback"})
        assert (row["state B"] != "0.0") == (condition == "centralized")  # the uploaded local view
    assert float(learned["feedback"]["success"].rstrip("%")) > float(
        learned["counterfactual_feedback"]["success"].rstrip("%")
    )


def test_learned_request_rows_come_from_the_sender_model_and_the_self_plan_model(tmp_path: Path) -> None:
    """A reduced experiments/request_intervention_learned.toml: the tiny Direct model where a request is delivered,
    the tiny self-plan model where it is removed; paired receivers see the same input there, so the self-plan
    model is right on at most one binding of each pair."""
    run_dir = _run("request_intervention_learned", tmp_path, 8)
    markdown = write_report(run_dir).markdown.read_text()
    outcomes = _named(markdown, DETAIL)
    learned: dict[str, set[str]] = {}
    for label, row in outcomes.items():
        if " model" in label:
            learned.setdefault(label.split(" · ")[0], set()).add(row["agents played by"])
    assert set(learned) == {"request", "no_request", "alternative_request"}
    assert learned["no_request"] == {"direct:tiny-selfplan-s1", "direct:tiny-selfplan", "direct:tiny-selfplan-s3"}
    direct = {"direct:tiny-dsl", "direct:tiny-dsl-s2", "direct:tiny-dsl-s3"}
    assert learned["request"] == learned["alternative_request"] == direct
    wins: dict[tuple[str, str, int], int] = {}
    for record in read_records(run_dir):
        if record["condition"] == "no_request" and "selfplan" in record["backend_set"]:
            key = (record["backend_set"], record["pair"], record["role"])
            wins[key] = wins.get(key, 0) + int(record["outcome"]["G"])
    assert wins and max(wins.values()) <= 1


def test_fault_report_regenerates_table_s46(tmp_path: Path) -> None:
    markdown = write_report(_run("controlled_faults", tmp_path, 4)).markdown.read_text()
    stages = {row[0]: row[2:7] for row in _table(markdown, "Stage checks under controlled faults")}
    assert stages["insufficient_handoff"] == ["1", "0", "–", "0", "0"]
    assert stages["malformed_proposal"] == ["0", "–", "–", "–", "0"]
    assert stages["clean"] == ["1"] * 5


def test_html_report_is_standalone_with_figures_and_every_episode(tmp_path: Path) -> None:
    run_dir = _run("request_intervention", tmp_path, 4)
    html = write_report(run_dir).html.read_text()
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{100,}"', html)) >= 1
    assert "http://" not in html and "https://" not in html  # nothing to fetch
    payload = re.search(r'<script id="episodes-data" type="application/octet-stream">([^<]+)</script>', html)
    assert payload is not None
    episodes = json.loads(gzip.decompress(base64.b64decode(payload.group(1))))
    assert len(episodes) == len((run_dir / "episodes.jsonl").read_text().splitlines())
    assert {"protocol", "actions", "outcome", "handoffs"} <= set(episodes[0])


def test_cli_runs_a_reduced_experiment_and_reports(tmp_path: Path) -> None:
    args = [
        "run",
        str(EXPERIMENTS / "representation.toml"),
        "--clusters",
        "4",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    [run_dir] = list(tmp_path.glob("representation-*"))
    assert (run_dir / "report.html").exists()
    report = runner.invoke(app, ["report", str(run_dir)])
    assert report.exit_code == 0 and "Communication surfaces" in report.stdout
    missing = runner.invoke(app, ["report", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "manifest.json" in missing.output
    both = runner.invoke(app, ["run", str(EXPERIMENTS / "representation.toml"), "--resume", str(run_dir)])
    assert both.exit_code == 2


def test_a_copied_run_reports_the_same_from_anywhere_into_out(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    """A gate run over team task files, copied elsewhere and reported from another folder: the manifest holds
    what the report needs (tasks left out, thresholds), so the report matches the one written in place."""
    config = load_experiment(EXPERIMENTS / "gate_teams.toml").model_copy(update={"clusters": 2})
    run_dir = create_run(config, tmp_path / "runs")
    run_experiment(config, run_dir, workers=1)
    in_place = write_report(run_dir).markdown.read_text()
    copied = tmp_path / "elsewhere" / run_dir.name
    shutil.copytree(run_dir, copied, ignore=shutil.ignore_patterns("report.*", "figures"))
    monkeypatch.chdir(tmp_path / "elsewhere")  # the config's task paths do not resolve from here
    result = runner.invoke(app, ["report", str(copied), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "report.md").read_text() == in_place
    assert not (copied / "report.md").exists()  # --out leaves the run folder as it was recorded
    assert "Headline: task success and coordination quality by condition" in result.output
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    refused = runner.invoke(app, ["report", str(copied), "--out", str(blocked)])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert f"cannot write the report into {blocked}: it is a file, not a folder" in refused.output
