"""Keeping a tiny run's best-validated step: its rows never overlap what a report measures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.errors import ConfigError
from gencoord.models.load import load_model
from gencoord.models.spec import ModelSpec, Records, Templates
from gencoord.prior.views import PriorView
from gencoord.tasks.cluster import Split, forward_space
from gencoord.tasks.spec import default_suites
from gencoord.train import tiny
from gencoord.train.data import evaluation_rows, training_split, validation_rows
from gencoord.train.tiny import TinyPreset, build_model, train_tiny

SPECS = (
    ModelSpec(view=PriorView.FULL),
    ModelSpec(templates=Templates.REPRESENTATION),
    ModelSpec(records=Records.COMPOSITION),
)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: f"{spec.records}-{spec.templates}")
def test_validation_rows_share_no_cluster_with_evaluation_and_no_held_out_template(spec: ModelSpec) -> None:
    validation = validation_rows(spec, 64, seed=3)
    seen, unseen = evaluation_rows(spec, 1000, seed=3)
    assert validation
    assert not {row.cluster for row in validation} & {row.cluster for row in (*seen, *unseen)}
    if spec.records is not Records.COMPOSITION:
        trained = {template for template, _ in forward_space(training_split(spec), default_suites())}
        forward = [row for row in validation if row.split != Split.GOAL_CAPABILITY.value]
        assert forward and {row.template for row in forward} <= trained


def test_the_best_validated_step_is_kept_and_a_later_step_wins_a_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = iter([0.5, 0.9, 0.9, 0.2])  # validated at steps 2, 4, 6 and the last, 7
    monkeypatch.setattr(tiny, "exact_match", lambda *_: next(scores))
    model = build_model(32, TinyPreset(layers=1, hidden=16, head_dim=4, ffn=32), seed=0)
    keeper = tiny._BestWeights([], every=2, steps=7)
    snapshots = {}
    for step in range(1, 8):
        with torch.no_grad():
            model.model.norm.weight.fill_(float(step))
        keeper.consider(step, model, codec=None)  # type: ignore[arg-type]
        snapshots[step] = model.model.norm.weight.clone()
    assert (keeper.step, keeper.score) == (6, 0.9)
    keeper.restore(model)
    assert torch.equal(model.model.norm.weight, snapshots[6])
    with pytest.raises(StopIteration):
        next(scores)  # every validation step was scored, and no other


def test_a_negative_validation_interval_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        train_tiny(ModelSpec(), tmp_path / "model", 1, preset=TinyPreset(validate_every=-1))
    assert caught.value.reason == "BAD_VALIDATE_EVERY"
    assert not (tmp_path / "model").exists()


def test_the_train_command_keeps_a_validated_step_and_records_it(tmp_path: Path) -> None:
    args = ["--layers", "1", "--hidden", "16", "--threads", "1", "--validate-every", "2", "--steps", "3"]
    trained = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "m"), *args])
    assert trained.exit_code == 0, trained.stderr
    report = load_model(tmp_path / "m").manifest.report
    assert report is not None and report.kept_step in (2, 3)
    assert report.validation is not None and 0.0 <= report.validation <= 1.0
    assert f"kept step {report.kept_step}" in trained.stdout
    unvalidated = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "n"), *args[:6], "--steps", "1"])
    assert unvalidated.exit_code == 0, unvalidated.stderr
    last = load_model(tmp_path / "n").manifest.report
    assert last is not None and (last.kept_step, last.validation) == (None, None)
