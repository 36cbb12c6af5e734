"""Experiment configs, the runner's append-only records, and resuming after a crash."""

from __future__ import annotations

import json
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gencoord.backends.families import parse_backend
from gencoord.errors import ConfigError
from gencoord.eval.config import load_experiment, parse_experiment
from gencoord.eval.experiment import experiment_kind_of, plan_run
from gencoord.eval.kinds.composition.config import CompositionExperimentConfig
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.eval.kinds.team.config import TeamExperimentConfig
from gencoord.eval.runner import RECORDS, ChunkWork, create_run, read_manifest, read_records, run_experiment

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
SMALL = """
name = "small"
kind = "request_intervention"
pool = "request_intervention"
clusters = 8
conditions = ["request", "no_request"]
reference = "request"
seeds = [0, 1]
"""


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.toml")), ids=lambda p: p.stem)
def test_shipped_configs_load(path: Path) -> None:
    config = load_experiment(path)
    assert config.name == path.stem and plan_run(config).jobs


@pytest.mark.parametrize("path", sorted((EXPERIMENTS / "gpu").glob("*.toml")), ids=lambda p: p.stem)
def test_full_size_configs_name_one_trained_model_per_seed(path: Path) -> None:
    config = load_experiment(path)
    assert config.name == f"gpu_{path.stem}"
    script = (EXPERIMENTS.parent / "scripts" / "train_gpu.sh").read_text()
    if isinstance(config, TeamExperimentConfig):  # one team model (seed 1) in every role, beside the planner
        roles = [roles for roles in config.backends if roles != "planner"]
        checkpoints = {spec.target for roles in roles for spec in (roles.lead, roles.peers)}
        assert roles and {Path(str(c)).name for c in checkpoints} == {"team-s1"}
        assert '"$out/team-s1" --records team' in script and plan_run(config).jobs
        return
    assert isinstance(config, EpisodeExperimentConfig | CompositionExperimentConfig)
    backends = experiment_kind_of(config).backends(config)
    assert config.seeds == [1, 2, 3] and backends and all("{seed}" in name for name in backends)
    for name in backends:  # every checkpoint a config names is one the training script writes
        kind = parse_backend(name).base.rsplit("/", 1)[1].removesuffix("-s{seed}")
        assert f'"$out/{kind}-s$seed"' in script
    assert plan_run(config).jobs


@pytest.mark.parametrize(
    ("text", "reason", "words"),
    [
        ('name = "x"\npool = "nope"\nconditions = ["request"]', "INVALID_CONFIG", "unknown pool 'nope'"),
        ('name = "x"\npool = "timing"\nconditions = ["requets"]', "INVALID_CONFIG", "conditions.0"),
        ('name = "x"\npool = "timing"\nconditions = ["request"]\nbackends = ["gpt"]', "INVALID_CONFIG", "gpt"),
        ('name = "x"\npool = "timing"\nconditions = ["request"]\ncolour = 1', "INVALID_CONFIG", "colour"),
        ('name = "x"\npool = "timing"\nconditions = ["feedback"]', "CONDITION_SUITE", "feedback"),
        ('name = "x"\npool = "timing"\nconditions = ["request"]\nreference = "no_request"', "REFERENCE", ""),
        ('name = "Bad Name"\npool = "timing"\nconditions = ["request"]', "INVALID_CONFIG", "name"),
        ("name = ", "INVALID_TOML", ""),
    ],
)
def test_broken_configs_fail_with_a_stable_code_and_the_field(text: str, reason: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_experiment(text, "broken.toml")
    assert caught.value.reason == reason and words in caught.value.message
    assert caught.value.message.startswith("broken.toml")


def test_a_run_writes_manifest_and_one_record_per_job(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    run_dir = create_run(config, tmp_path)
    summary = run_experiment(config, run_dir, workers=1)
    records = read_records(run_dir)
    assert summary.ran == len(records) == len(plan_run(config).jobs) == 8 * 2 * 2 * 2
    assert sorted(r["job"] for r in records) == sorted(job.key for job in plan_run(config).jobs)
    loaded, manifest = read_manifest(run_dir)
    assert loaded == config and manifest["episodes"] == len(records) and manifest["gencoord"]
    again = run_experiment(config, run_dir, workers=1)
    assert again.ran == 0 and again.already_done == len(records)


def test_a_process_pool_gives_the_same_records(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    single, pooled = create_run(config, tmp_path / "one"), create_run(config, tmp_path / "two")
    run_experiment(config, single, workers=1)
    run_experiment(config.model_copy(update={"clusters": 8}), pooled, workers=2)

    def strip(records: list[dict[str, object]]) -> dict[object, dict[str, object]]:
        return {r["job"]: {k: v for k, v in r.items() if k != "seconds"} for r in records}

    assert strip(read_records(single)) == strip(read_records(pooled))


def test_a_torn_last_line_is_dropped_and_its_job_rerun(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    path = run_dir / RECORDS
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:10]) + b"\n" + lines[10][: len(lines[10]) // 2])  # a crash mid-append
    assert len(read_records(run_dir)) == 10
    summary = run_experiment(config, run_dir, workers=1)
    records = read_records(run_dir)
    assert summary.ran == len(plan_run(config).jobs) - 10
    assert len(records) == len({r["job"] for r in records}) == len(plan_run(config).jobs)


def test_a_corrupt_middle_line_is_an_error_not_a_silent_loss(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    run_dir = create_run(config, tmp_path)
    (run_dir / RECORDS).write_text('{"job": "a"}\nnot json\n{"job": "b"}\n')
    with pytest.raises(ConfigError) as caught:
        run_experiment(config, run_dir, workers=1)
    assert caught.value.reason == "RECORDS_CORRUPT" and "line 2" in caught.value.message


def test_killing_a_run_midway_then_resuming_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    config_file = tmp_path / "big.toml"
    config_file.write_text(
        'name = "big"\npool = "request_intervention"\nconditions = ["request", "no_request", "alternative_request"]\n'
        "seeds = [0, 1, 2, 3, 4, 5]\n"
    )
    command = [sys.executable, "-m", "gencoord.cli", "run", str(config_file), "--workers", "1", "--no-report"]
    process = subprocess.Popen(
        [*command, "--out", str(tmp_path / "runs")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    records_file = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list((tmp_path / "runs").glob("big-*/episodes.jsonl"))
        if found and found[0].stat().st_size > 200_000:
            records_file = found[0]
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert records_file is not None, process.stderr.read() if process.stderr else ""
    run_dir = records_file.parent
    config, _ = read_manifest(run_dir)
    total = len(plan_run(config).jobs)
    survived = read_records(run_dir)
    assert 0 < len(survived) < total  # killed midway
    summary = run_experiment(config, run_dir, workers=1)
    records = read_records(run_dir)
    keys = [r["job"] for r in records]
    assert len(keys) == len(set(keys)) == total and summary.already_done == len(survived)
    plan = plan_run(config)
    by_key = {job.key: job for job in plan.jobs}
    work = ChunkWork(config.kind, config.model_dump_json(), plan.prepared)
    for record in records[:: max(1, total // 40)]:  # a resumed record equals a fresh run of its job
        fresh = json.loads(work([by_key[str(record["job"])]])[0])
        assert {k: v for k, v in fresh.items() if k != "seconds"} == {k: v for k, v in record.items() if k != "seconds"}


def test_errors_survive_a_trip_through_a_worker_process() -> None:
    error = ConfigError("CONTEXT_LACKS_FIELD", "needs the private field 'binding'")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.reason, copy.message, str(copy)) == (ConfigError, error.reason, error.message, str(error))
