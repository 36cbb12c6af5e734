"""Composition reference (v1 S15 / v2 S25): unseen binding cross-products, case lookup vs field-wise composition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.backends.base import Backend
from gencoord.cli import app
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import checked_experiment, find_experiment, load_experiment
from gencoord.eval.experiment import experiment_kind_of, plan_run
from gencoord.eval.report import write_report
from gencoord.eval.runner import RECORDS, create_run, run_experiment
from gencoord.models.load import load_model
from gencoord.models.variant import ModelSpec, Records, Target
from gencoord.planning.composition import CompositionMethod
from gencoord.prior import Prior
from gencoord.prior.load import default_prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import Success
from gencoord.run.composition import run_composition
from gencoord.tasks import SuiteDocument
from gencoord.tasks.cluster import Split
from gencoord.tasks.context import LocalContext
from gencoord.tasks.cross_products import composition_case, observed_cases, unseen_cross_products
from gencoord.tasks.suites import default_suites
from gencoord.train.data import COMPOSITION_TRAINING_CASES, evaluation_rows, fixed_training_rows, observed_rows
from gencoord.train.tiny import TinyPreset, train_tiny
from gencoord.worlds.sim import SimExecutor

DIRECT_MODEL = "model:experiments/checkpoints/tiny-dsl-composition-s1"


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
    config = load_experiment(find_experiment("composition")).model_copy(update={"clusters": 4})
    run_dir = create_run(config, tmp_path)
    assert run_experiment(config, run_dir, workers=1).lost == 0
    records = [json.loads(line) for line in (run_dir / RECORDS).read_text().splitlines()]
    assert len(records) == len(plan_run(config).jobs) == 4 * len(config.methods) * len(config.seeds) * len(config.roles)
    for record in records:  # the fields the report's episode viewer reads
        assert {"episode", "goal", "actions", "handoffs", "condition"} <= set(record)
        assert {"generations", "messages", "wire_bytes", "model_calls"} <= set(record["protocol"])
        assert {"C", "H", "T", "F", "G", "V30", "V60"} <= set(record["outcome"])
        direct = record["method"] == "direct_short_dsl"
        assert record["protocol"]["model_calls"] == (1 if direct else 0)  # the rules call no model
        assert (record["backend_set"] is not None) == direct
        if record["method"] == "explicit_factor_composer":
            assert "commitment" in record["protocol"]
        if record["method"] == "complete_case_table":
            assert "commitment" not in record["protocol"]
    report = write_report(run_dir)
    rows = {row[0].split(" ")[0]: row for table in report.all_tables for row in table.rows}
    assert rows["explicit_factor_composer"][1] == "4/4" and rows["complete_case_table"][1] == "0/4"
    met = sum(
        all(r["outcome"]["G"] for r in records if r["cluster"] == cluster and r["method"] == "direct_short_dsl")
        for cluster in {r["cluster"] for r in records}
    )
    assert rows["direct_short_dsl"][1] == f"{met}/4"  # the model's row is what its episodes did


@pytest.mark.parametrize(
    ("backends", "message"),
    [
        (["rule"], "direct is a trained model or an API"),
        (["model:experiments/checkpoints/tiny-dsl"], "was not trained on composition records"),
        ([DIRECT_MODEL, DIRECT_MODEL], "takes one --backend"),
    ],
)
def test_the_cli_refuses_a_composition_backend_that_cannot_write_factor_form_records(
    backends: list[str], message: str, tmp_path: Path
) -> None:
    arguments = [part for backend in backends for part in ("--backend", backend)]
    result = CliRunner().invoke(app, ["run", "composition", *arguments, "--out", str(tmp_path)])
    assert result.exit_code != 0 and message in result.output, result.output
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"methods": ["direct_short_dsl"]}, "needs `direct`"),
        ({"direct": DIRECT_MODEL}, "direct_short_dsl is not among the methods"),
    ],
)
def test_a_composition_config_names_its_direct_model_exactly_when_it_runs_one(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        checked_experiment({"name": "c", "kind": "composition", **fields}, "test")


def _replying(text: str) -> Backend:
    """A stand-in sender that writes ``text`` whatever it is asked (the tests' model, not a real one)."""

    class Replying:
        name = "replying"

        def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
            assert request.stage is Stage.SENDER_INITIAL and context.private  # it is asked from the factors
            return Reply(text, model_calls=1)

    return Replying()


@settings(max_examples=30, deadline=None)
@given(first=st.integers(0, 100_000), role=st.integers(0, 1))
def test_every_composition_training_row_is_an_observed_case_whose_record_reaches_its_goal(
    first: int, role: int, prior: Prior, suites: SuiteDocument
) -> None:
    spec = ModelSpec(records=Records.COMPOSITION)
    observed = {factors.name: factors for factors in observed_cases(prior, suites)}
    unseen = {factors.name for factors in unseen_cross_products(prior, suites)}
    for row in observed_rows(4, first, prior, suites, spec, Split.TRAINING)[role::2]:
        assert row.template in observed and row.template not in unseen and row.split == Split.TRAINING.value
        assert "bind=" not in row.target  # a factor-form context names no binding to copy
        index = int(row.cluster.removeprefix("case-"))
        case = composition_case(index, row.role, 0, prior, suites, observed[row.template], Split.TRAINING)
        result = run_composition(
            case, CompositionMethod.DIRECT_SHORT_DSL, SimExecutor(prior.game), prior, suites, _replying(row.target)
        )
        assert result.outcome.stages["G"], (row.template, result.outcome.message)
        assert result.protocol.trace.calls == 1


def test_a_direct_reply_that_is_no_record_fails_to_parse_and_nothing_runs(prior: Prior, suites: SuiteDocument) -> None:
    case = composition_case(0, 0, 0, prior, suites)
    for text in ("", "SELF craft.item(q=", "REQ agent_b -", "\x00" * 40):
        result = run_composition(
            case, CompositionMethod.DIRECT_SHORT_DSL, SimExecutor(prior.game), prior, suites, _replying(text)
        )
        assert result.execution is None and not result.outcome.stages["G"]
        assert result.outcome.failure is not None and not result.outcome.formed


def test_composition_evaluation_rows_hold_observed_cases_apart_from_the_unseen_cross_products() -> None:
    seen, unseen = evaluation_rows(ModelSpec(records=Records.COMPOSITION), 64)
    prior, suites = default_prior(), default_suites()
    assert {row.template for row in seen} <= {factors.name for factors in observed_cases(prior, suites)}
    assert unseen and {row.template for row in unseen} <= {
        factors.name for factors in unseen_cross_products(prior, suites)
    }
    assert all(row.split == Split.IN_DISTRIBUTION.value for row in seen + unseen)


def test_a_fine_tune_learns_from_a_fixed_set_of_observed_cases_in_training_worlds_only(
    prior: Prior, suites: SuiteDocument
) -> None:
    rows = fixed_training_rows(ModelSpec(records=Records.COMPOSITION))
    assert len(rows) == 2 * COMPOSITION_TRAINING_CASES
    assert {row.template for row in rows} == {factors.name for factors in observed_cases(prior, suites)}
    assert {row.split for row in rows} == {Split.TRAINING.value} and {row.role for row in rows} == {0, 1}


def test_a_tiny_composition_model_trains_and_is_a_composition_backend(tmp_path: Path) -> None:
    spec = ModelSpec(records=Records.COMPOSITION)
    report = train_tiny(spec, tmp_path / "model", 30, evaluate=4, preset=TinyPreset(renaming=0.8, threads=1))
    assert report.evaluated == report.held_out_evaluated == 4
    loaded = load_model(tmp_path / "model")
    assert loaded.spec.records is Records.COMPOSITION
    config = checked_experiment(
        {"name": "c", "kind": "composition", "methods": ["direct_short_dsl"], "direct": f"model:{tmp_path / 'model'}"},
        "test",
    )
    assert experiment_kind_of(config).backends(config) == [f"model:{tmp_path / 'model'}"]


def test_a_delivery_to_a_site_places_its_blocks_there_and_the_terminal_check_reads_the_site(
    prior: Prior, suites: SuiteDocument
) -> None:
    factors = next(f for f in unseen_cross_products(prior, suites) if f.terminal == "site_a" and f.transform is None)
    case = composition_case(0, 0, 0, prior, suites, factors)
    sender, receiver, count = case.spec.sender, case.spec.receiver, case.count
    text = (
        f"SELF resource.obtain(q={case.handed},item={factors.material}) > "
        f"resource.deliver(q={case.handed},item={factors.material},to={receiver})\n"
        f"REQ {receiver} resource.deliver(q={count},dst=site_a,item={factors.material})"
    )
    result = run_composition(
        case, CompositionMethod.DIRECT_SHORT_DSL, SimExecutor(prior.game), prior, suites, _replying(text)
    )
    assert isinstance(result.protocol, Success) and sender != receiver
    assert [(c.kind, c.holder) for c in result.protocol.plan.terminal] == [("site_has", "site_a")]
    assert result.outcome.stages == {"C": True, "H": True, "T": True, "F": True, "G": True}


@pytest.mark.parametrize(
    "fields",
    [{"surface": SurfaceName.JSON}, {"target": Target.FACTOR}, {"surface": SurfaceName.FREEFORM}],
)
def test_composition_records_are_direct_short_dsl_only(fields: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as caught:
        ModelSpec(records=Records.COMPOSITION, **fields)  # type: ignore[arg-type]
    assert caught.value.reason == "RECORDS_SURFACE"
