"""The single-step horizon: one step, the rest at the intermediate state, three decisions."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from gencoord.backends.base import Backend
from gencoord.backends.registry import backend_fits, rule_set
from gencoord.backends.rule import RequestRealizer, RuleSender
from gencoord.dsl.ast import Task
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import FailureCode
from gencoord.eval.config import parse_experiment
from gencoord.eval.experiment import plan_run
from gencoord.eval.report import write_report
from gencoord.eval.runner import create_run, read_records, run_experiment
from gencoord.models.manifest import CheckpointManifest, TrainReport
from gencoord.models.variant import Horizon, ModelSpec, Records, Target
from gencoord.prior import Prior
from gencoord.prior.load import default_prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import Fail, Success
from gencoord.run.episode import DELIVERY_KINDS, Condition, records_of, run_episode
from gencoord.run.lifecycle import run_single_step
from gencoord.tasks import SuiteDocument, build_episode, paper_pool
from gencoord.tasks.context import LocalContext
from gencoord.train.data import build_rows
from gencoord.worlds.actions import Program
from gencoord.worlds.executor import ActionRecord, HandoffHook, WorldSnapshot
from gencoord.worlds.sim import SimExecutor
from gencoord.worlds.spec import WorldSpec


def test_single_step_rows_add_the_intermediate_stage(prior: Prior, suites: SuiteDocument) -> None:
    rows = build_rows(paper_pool("training"), prior, suites, ModelSpec(horizon=Horizon.SINGLE))
    assert Counter(row.stage for row in rows) == {
        "sender_step": 960,
        "sender_after_obtain": 960,
        "receiver_after_request": 960,
    }
    first = next(row for row in rows if row.stage == "sender_step")
    assert first.target.endswith("\nREQ -") and " > " not in first.target
    later = next(row for row in rows if row.stage == "sender_after_obtain" and row.cluster == first.cluster)
    assert "done SELF resource.obtain(" in later.prompt and "REQ agent_" in later.target


def test_single_step_episodes_take_three_decisions_and_reach_the_same_commitment(
    prior: Prior, suites: SuiteDocument
) -> None:
    for cluster in paper_pool("held_out_templates")[:12]:
        spec = build_episode(cluster, 1, 0, prior, suites)
        multi, single = run_episode(spec), run_episode(spec, Condition.SINGLE_STEP)
        assert isinstance(multi.protocol, Success) and isinstance(single.protocol, Success)
        assert single.protocol.commitment == multi.protocol.commitment
        assert [g.stage for g in single.protocol.trace.generations] == [
            "sender_step",
            "sender_after_obtain",
            "receiver_after_request",
        ]
        assert single.outcome.success and multi.outcome.success


def test_the_intermediate_decision_sees_the_step_carried_out(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites)
    seen: dict[str, dict[str, int]] = {}
    sender, realizer = RuleSender(prior), RequestRealizer(prior)
    contexts = dict(spec.contexts)

    def generate(request: GenerationRequest) -> Reply:
        seen[request.stage.value] = dict(contexts[request.agent].inventory)
        backend = sender if request.agent == spec.sender else realizer
        return backend.generate(contexts[request.agent], request)

    def advance(agent: str, step: Task) -> None:
        contexts[agent] = replace(contexts[agent], inventory={})

    result = run_single_step(generate, spec.sender, spec.receiver, prior, spec.public, advance)
    assert isinstance(result, Success)
    assert seen["sender_step"] == dict(spec.contexts[spec.sender].inventory) and seen["sender_after_obtain"] == {}


def test_a_whole_record_at_the_first_step_breaks_the_single_step_contract(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites)
    sender = RuleSender(prior)

    def generate(request: GenerationRequest) -> Reply:
        whole = GenerationRequest(request.agent, Stage.SENDER_INITIAL, request.peer)
        return sender.generate(spec.contexts[request.agent], whole)

    result = run_single_step(generate, spec.sender, spec.receiver, prior, spec.public, lambda *_: None)
    assert isinstance(result, Fail) and result.code is FailureCode.CONTRACT_REJECT
    assert result.error.reason == "SINGLE_STEP_SHAPE"


def _checkpoint(folder: Path, spec: ModelSpec) -> Path:
    """A checkpoint folder holding only a manifest: enough for deciding where a model fits."""
    folder.mkdir()
    report = TrainReport(steps=1, seconds=0.0, first_loss=1.0, last_loss=1.0, exact_match=None, evaluated=0)
    CheckpointManifest.of(spec, kind="tiny", seed=0, config_sha256="0" * 64, report=report, versions={}).write(folder)
    return folder


def test_record_set_models_run_only_the_conditions_they_trained_for(tmp_path: Path) -> None:
    """A requester model writes requester records, a centralized model reads merged views, a self-plan model plans
    without a request; an all-records model writes every record but has seen neither a merged view nor a
    receiver without a request."""
    names = {
        records: f"model:{_checkpoint(tmp_path / records.value, ModelSpec(records=records))}" for records in Records
    }
    feedback = {Condition.LOCAL_ONLY, Condition.FEEDBACK, Condition.COUNTERFACTUAL_FEEDBACK}
    expected = {
        Records.CENTRALIZED: {Condition.CENTRALIZED},
        Records.REQUESTER: feedback,
        Records.SELF_PLAN: {Condition.NO_REQUEST},
        Records.ALL: {Condition.REQUEST, Condition.ALTERNATIVE_REQUEST, *DELIVERY_KINDS} | feedback,
    }
    for records, conditions in expected.items():
        fits = {
            condition
            for condition in Condition
            if condition is not Condition.SINGLE_STEP
            and backend_fits(names[records], False, SurfaceName.DSL, records_of(condition))
        }
        assert fits == conditions, records
    realized = {c for c in Condition if backend_fits("rule+realizer", False, SurfaceName.DSL, records_of(c))}
    assert realized == {Condition.REQUEST, Condition.ALTERNATIVE_REQUEST, Condition.SINGLE_STEP, *DELIVERY_KINDS}


def test_models_run_only_where_they_fit(tmp_path: Path) -> None:
    single = _checkpoint(tmp_path / "single", ModelSpec(horizon=Horizon.SINGLE))
    free = _checkpoint(tmp_path / "free", ModelSpec(surface=SurfaceName.FREEFORM))
    factor = _checkpoint(tmp_path / "factor", ModelSpec(target=Target.FACTOR))
    assert backend_fits(f"model:{single}", True, SurfaceName.DSL)
    assert not backend_fits(f"model:{single}", False, SurfaceName.DSL)
    assert backend_fits(f"model:{free}", False, SurfaceName.FREEFORM)
    assert not backend_fits(f"model:{free}", False, SurfaceName.JSON)
    assert backend_fits(f"model:{factor}", True, SurfaceName.JSON)
    assert not backend_fits(f"model:{factor}", False, SurfaceName.FREEFORM)
    assert backend_fits("rule", True, SurfaceName.FREEFORM)
    config = parse_experiment(
        f'name = "fit"\npool = "timing"\nclusters = 2\nconditions = ["request", "single_step"]\n'
        f'surfaces = ["dsl", "json"]\nbackends = ["model:{single}", "model:{factor}"]\n'
        "seeds = [0]\nroles = [0]\n"
    )
    combos = {(job.backend, job.condition.value, job.surface.value) for job in plan_run(config).jobs}
    assert combos == {(f"model:{single}", "single_step", "dsl")} | {
        (f"model:{factor}", condition, surface)
        for condition in ("request", "single_step")
        for surface in ("dsl", "json")
    }


def test_the_horizon_report_has_families_and_decisions(tmp_path: Path) -> None:
    config = parse_experiment(
        'name = "horizon"\nkind = "horizon"\npool = "held_out_templates"\nclusters = 4\n'
        'conditions = ["request", "single_step"]\nreference = "request"\nseeds = [0]\n'
    )
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    records = read_records(run_dir)
    decisions = Counter((r["condition"], len(r["protocol"]["generations"])) for r in records)
    assert decisions == {("request", 2): 8, ("single_step", 3): 8}
    report = write_report(run_dir)
    horizon = next(table for table in report.tables if table.key == "horizon")
    assert [row[3] for row in horizon.rows] == ["2.000", "3.000"]
    families = {default_prior().templates[r["template"]].family for r in records}
    assert all(any(family in column for column in horizon.columns) for family in families)
    said = " ".join(horizon.differences)
    assert all(r["template"] in said for r in records) and "which it does not name" in said
    assert "not held-out templates" not in said  # the pool is the held-out one


def test_a_horizon_run_off_the_held_out_pool_says_the_papers_figures_are_held_out(tmp_path: Path) -> None:
    """The paper's horizon figures are held-out-template ones: beside an in-distribution run, the table says so."""
    config = parse_experiment(
        'name = "horizon_in"\nkind = "horizon"\npool = { split = "in_distribution", size = 2, seed = 5 }\n'
        'conditions = ["request", "single_step"]\nreference = "request"\nseeds = [0]\n'
    )
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    horizon = next(table for table in write_report(run_dir).tables if table.key == "horizon")
    assert "This run's pool is in_distribution × 2, not held-out templates" in " ".join(horizon.differences)


def test_the_held_out_template_pool_holds_one_template_of_every_family(prior: Prior, suites: SuiteDocument) -> None:
    held = suites.forward.held_out_templates
    families = sorted(prior.templates[name].family for name in held)
    assert families == ["P1_DESTINATION", "P2_RECIPE", "P3_ALLOCATION", "P4_BRANCH"]
    assert {cluster.template for cluster in paper_pool("held_out_templates")} == set(held)


class _Logged:
    """A backend that records, per stage, what its agent held when asked, and in what order."""

    def __init__(self, inner: Backend, log: list[tuple[str, object]]) -> None:
        self.inner, self.log, self.name = inner, log, inner.name

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        self.log.append((request.stage.value, dict(context.inventory)))
        return self.inner.generate(context, request)


class _CountingSim(SimExecutor):
    def __init__(self, prior: Prior, log: list[tuple[str, object]]) -> None:
        super().__init__(prior.game)
        self.log = log

    def reset(self, world: WorldSpec) -> WorldSnapshot:
        self.log.append(("reset", None))
        return super().reset(world)

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        records = super().run(program, start, stop, on_handoff)
        self.log.append(("run", [r.action.task for r in records]))
        return records


def test_the_first_step_runs_in_the_world_before_the_second_decision(prior: Prior, suites: SuiteDocument) -> None:
    for cluster in paper_pool("held_out_templates")[:8]:
        spec = build_episode(cluster, 0, 0, prior, suites)
        log: list[tuple[str, object]] = []
        team = {agent: _Logged(backend, log) for agent, backend in rule_set(spec, False, prior, suites).items()}
        result = run_episode(spec, Condition.SINGLE_STEP, backends=team, executor=_CountingSim(prior, log))
        assert result.outcome.success and result.execution is not None
        events = [event for event, _ in log]
        assert events.count("reset") == 1  # one world: the step is not run again
        first_run, second_decision = events.index("run"), events.index("sender_after_obtain")
        assert events.index("sender_step") < events.index("reset") < first_run < second_decision
        step_records = [r for r in result.execution.records if r.action.task == f"{spec.sender}#1"]
        assert log[first_run][1] == [r.action.task for r in step_records]
        seen_after = next(held for event, held in log if event == "sender_after_obtain")
        assert seen_after == dict(step_records[-1].inventories[spec.sender])  # what the world showed, not a forecast
        indexes = [r.index for r in result.execution.records]
        assert sorted(indexes) == list(range(len(result.execution.program.actions)))


def test_a_first_step_the_world_refuses_ends_the_episode_there(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites)
    dry = replace(spec.world, deposits=dict.fromkeys(spec.world.deposits or spec.world.refs, 0))
    spec = replace(spec, world=dry)
    result = run_episode(spec, Condition.SINGLE_STEP)
    assert result.execution is not None and not result.outcome.success
    failed = [r for r in result.execution.records if not r.ok]
    assert failed and failed[0].action.task == f"{spec.sender}#1" and failed[0].failure is not None
    assert result.outcome.failure is FailureCode.EXECUTION_FAILURE
