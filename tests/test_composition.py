"""Composition reference (v1 S15 / v2 S25): unseen binding cross-products, case lookup vs field-wise composition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.jobs import expand
from gencoord.eval.report import write_report
from gencoord.eval.runner import RECORDS, create_run, run_experiment
from gencoord.planning.composition import CompositionMethod
from gencoord.prior import Prior
from gencoord.run.composition import run_composition
from gencoord.tasks import SuiteDocument
from gencoord.tasks.cross_products import composition_case, observed_cases, unseen_cross_products
from gencoord.worlds.sim import SimExecutor


def test_cross_products_combine_only_observed_factor_values_into_cases_no_binding_spells_out(
    prior: Prior, suites: SuiteDocument
) -> None:
    seen = observed_cases(prior, suites)
    unseen = unseen_cross_products(prior, suites)
    assert unseen and not set(unseen) & set(seen)
    assert {f.material for f in unseen} <= {f.material for f in seen}
    assert {f.transform for f in unseen} <= {f.transform for f in seen}
    assert {f.terminal for f in unseen} <= {f.terminal for f in seen}
    for factors in unseen:
        if factors.transform is not None:
            assert prior.game.recipe(factors.transform, factors.material) is not None


@pytest.mark.parametrize("role", [0, 1])
def test_the_composer_reaches_every_unseen_cross_product_in_the_world_and_the_table_reaches_none(
    role: int, prior: Prior, suites: SuiteDocument
) -> None:
    for index in range(len(unseen_cross_products(prior, suites))):
        case = composition_case(index, role, 0, prior, suites)
        world = SimExecutor(prior.game)
        composed = run_composition(case, CompositionMethod.EXPLICIT_FACTOR_COMPOSER, world, prior, suites)
        assert composed.outcome.stages["G"], (case.factors, composed.outcome.message)
        looked_up = run_composition(case, CompositionMethod.COMPLETE_CASE_TABLE, world, prior, suites)
        assert looked_up.execution is None and looked_up.outcome.reason == "NO_CASE"


def test_the_table_reaches_the_cases_it_holds_so_its_misses_are_about_unseen_combinations(
    prior: Prior, suites: SuiteDocument
) -> None:
    for index, factors in enumerate(sorted(observed_cases(prior, suites), key=lambda f: f.name)):
        case = composition_case(index, index % 2, 0, prior, suites, factors)
        result = run_composition(case, CompositionMethod.COMPLETE_CASE_TABLE, SimExecutor(prior.game), prior, suites)
        assert result.outcome.stages["G"], (factors, result.outcome.message)


@pytest.mark.slow
def test_the_shipped_composition_experiment_runs_reduced_and_reports_per_method(tmp_path: Path) -> None:
    config = load_experiment(find_experiment("composition")).model_copy(update={"clusters": 6})
    run_dir = create_run(config, tmp_path)
    assert run_experiment(config, run_dir, workers=1).lost == 0
    records = [json.loads(line) for line in (run_dir / RECORDS).read_text().splitlines()]
    assert len(records) == len(expand(config)) == 6 * 2 * 2
    for record in records:  # the fields the report's episode viewer reads
        assert {"episode", "goal", "actions", "handoffs", "condition"} <= set(record)
        assert {"generations", "messages", "wire_bytes", "model_calls"} <= set(record["protocol"])
        assert {"C", "H", "T", "F", "G", "V30", "V60"} <= set(record["outcome"])
        assert ("commitment" in record["protocol"]) == (record["method"] == "explicit_factor_composer")
    report = write_report(run_dir)
    rows = {row[0]: row for table in report.tables for row in table.rows}
    assert rows["explicit_factor_composer"][1] == "6/6" and rows["complete_case_table"][1] == "0/6"


def test_the_cli_refuses_a_backend_for_a_composition_run_with_a_clear_error(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["run", "composition", "--backend", "rule", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "composition experiments have no backend sets" in result.output
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())
