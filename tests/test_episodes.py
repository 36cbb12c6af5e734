"""End-to-end episodes through the real pipeline: protocol → compile → sim → verify."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from gencoord.errors import ConfigError, FailureCode
from gencoord.prior import Prior, load_prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import NoCommitment
from gencoord.run.episode import Condition, EpisodeResult, run_episode
from gencoord.run.faults import Fault
from gencoord.run.record import episode_record
from gencoord.tasks import SuiteDocument, build_episode, load_suites, make_cluster, paper_pool
from gencoord.tasks.context import LocalContext
from tests.conftest import ACTIVE_RECEIVER, ACTIVE_SENDER


def _success_rate(prior: Prior, suites: SuiteDocument, pool: str, condition: Condition) -> float:
    results = [
        run_episode(build_episode(cluster, role, 0, prior, suites), condition, prior=prior, suites=suites)
        for cluster in paper_pool(pool)
        for role in (0, 1)
    ]
    return sum(r.outcome.success for r in results) / len(results)


def test_request_reaches_every_original_task(prior: Prior, suites: SuiteDocument) -> None:
    for cluster in paper_pool("request_intervention"):
        for role in (0, 1):
            outcome = run_episode(build_episode(cluster, role, 0, prior, suites), prior=prior, suites=suites).outcome
            assert outcome.stages == {"C": True, "H": True, "T": True, "F": True, "G": True}, cluster.id


def test_request_intervention_profile_100_50_0(prior: Prior, suites: SuiteDocument) -> None:
    """The receiver is capped at 50% without the request, by construction; a legal alternative gives 0%."""
    assert _success_rate(prior, suites, "request_intervention", Condition.NO_REQUEST) == 0.5
    assert _success_rate(prior, suites, "request_intervention", Condition.ALTERNATIVE_REQUEST) == 0.0


def test_a_legal_alternative_request_is_carried_out_while_the_original_task_fails(
    prior: Prior, suites: SuiteDocument
) -> None:
    """Every family, Allocation included: the alternative branch forms, executes and verifies
    (its SELF swapped too where the branch gives the sender other work); only G fails."""
    for cluster in paper_pool("request_intervention"):
        for role in (0, 1):
            spec = build_episode(cluster, role, 0, prior, suites)
            outcome = run_episode(spec, Condition.ALTERNATIVE_REQUEST, prior=prior, suites=suites).outcome
            assert outcome.stages == {"C": True, "H": True, "T": True, "F": True, "G": False}, cluster.id


def test_no_request_succeeds_on_exactly_one_binding_of_each_pair(prior: Prior, suites: SuiteDocument) -> None:
    wins: Counter[tuple[str, int, int]] = Counter()
    for seed in (0, 1, 2):
        for cluster in paper_pool("held_out_templates"):
            for role in (0, 1):
                spec = build_episode(cluster, role, seed, prior, suites)
                wins[(cluster.pair, role, seed)] += run_episode(spec, Condition.NO_REQUEST).outcome.success
    assert set(wins.values()) == {1}


@pytest.mark.parametrize(
    ("condition", "rate"),
    [
        (Condition.LOCAL_ONLY, 0.5),
        (Condition.FEEDBACK, 1.0),
        (Condition.COUNTERFACTUAL_FEEDBACK, 0.0),
        (Condition.CENTRALIZED, 1.0),
    ],
)
def test_goal_capability_profile(prior: Prior, suites: SuiteDocument, condition: Condition, rate: float) -> None:
    assert _success_rate(prior, suites, "goal_capability", condition) == rate


@pytest.mark.parametrize("condition", [Condition.LOCAL_ONLY, Condition.CENTRALIZED])
def test_local_only_and_centralized_are_one_call_with_nothing_sent_back(
    prior: Prior, suites: SuiteDocument, condition: Condition
) -> None:
    for cluster in paper_pool("goal_capability")[:8]:
        spec = build_episode(cluster, 1, 0, prior, suites)
        trace = run_episode(spec, condition, prior=prior, suites=suites).protocol.trace
        assert [(g.agent, g.stage) for g in trace.generations] == [(spec.sender, "requester_initial")]
        messages = trace.wire.messages
        assert [m.sender for m in messages if m.kind != "STATE"] == [spec.sender]  # the REQ; no reply
        states = [m for m in messages if m.kind == "STATE"]
        if condition is Condition.CENTRALIZED:  # the peer's whole local view is uploaded, once
            assert [(m.sender, m.payload) for m in states] == [(spec.receiver, spec.contexts[spec.receiver].render())]
        else:
            assert not states


def test_feedback_answers_accept_or_counter_by_mode(prior: Prior, suites: SuiteDocument) -> None:
    for cluster in paper_pool("goal_capability")[:8]:
        result = run_episode(build_episode(cluster, 0, 0, prior, suites), prior=prior, suites=suites)
        [response] = result.protocol.trace.responses
        if cluster.mode == "RAW_PROCESSOR":
            assert (response.decision, response.reason) == ("ACCEPT", "LOCAL_WORKCELL_CAN_PROCESS")
        else:
            assert (response.decision, response.counter_offer_id, response.reason) == (
                "COUNTER",
                "CRAFT_AT_REQUESTER_HANDOFF_FINISHED",
                "FINISHED_ITEM_REQUIRED",
            )


TABLE_S46 = {
    Fault.CLEAN: ((True, True, True, True, True), None),
    Fault.IRRELEVANT_CHANGE: ((True, True, True, True, True), None),
    Fault.MALFORMED_PROPOSAL: ((False, None, None, None, False), FailureCode.PARSE_FAILURE),
    Fault.INCOMPATIBLE_HANDOFF: ((False, None, None, None, False), FailureCode.RESOLUTION_CONFLICT),
    Fault.INSUFFICIENT_HANDOFF: ((True, False, None, False, False), FailureCode.HANDOFF_FAILURE),
    Fault.WRONG_TRANSFER_ITEM: ((True, False, None, False, False), FailureCode.HANDOFF_FAILURE),
}


@pytest.mark.parametrize("fault", list(Fault))
def test_controlled_faults_give_table_s46(prior: Prior, suites: SuiteDocument, fault: Fault) -> None:
    pool = paper_pool("representation")
    seen = Counter()
    for trial in range(256):
        spec = build_episode(pool[trial % len(pool)], trial % 2, trial, prior, suites)
        outcome = run_episode(spec, fault=fault, prior=prior, suites=suites).outcome
        seen[(tuple(outcome.stages.values()), outcome.failure)] += 1
    assert seen == Counter({TABLE_S46[fault]: 256})


def _recorded(prior: Prior, suites: SuiteDocument) -> EpisodeResult:
    return run_episode(build_episode(make_cluster("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", 7), 1, 7, prior, suites))


def test_recorded_episode_matches_table_s9(prior: Prior, suites: SuiteDocument) -> None:
    result = _recorded(prior, suites)
    assert result.execution is not None and len(result.execution.handoffs) == 1
    (handoff,) = result.execution.handoffs
    assert (handoff.giver_before, handoff.giver_after, handoff.receiver_before, handoff.receiver_after) == (8, 0, 0, 8)
    final = result.execution.final.inventories["agent_a"]
    assert (final["crafting_table"], final["oak_planks"]) == (1, 4)
    assert len(result.execution.records) == 13 and result.protocol.trace.calls == 0  # rule backends: zero calls


class _Replay:
    """The paper's recorded model outputs as a backend (one model call each)."""

    name = "paper-replay"

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return Reply(ACTIVE_SENDER if request.stage is Stage.SENDER_INITIAL else ACTIVE_RECEIVER, model_calls=1)


def test_recorded_model_outputs_run_through_the_same_pipeline(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(make_cluster("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", 7), 1, 7, prior, suites)
    result = run_episode(spec, backends={"agent_a": _Replay(), "agent_b": _Replay()})
    record = episode_record(result)
    assert record["protocol"]["model_calls"] == 2 and record["protocol"]["wire_bytes"] == 81
    assert [a["action"] for a in record["actions"]] == [
        "go_to",
        *["obtain_block"] * 8,
        "go_to",
        "give_item",
        "go_to",
        "craft_item",
    ]
    assert record["outcome"]["G"] is True and record["handoffs"][0]["receiver"] == {
        "agent": "agent_a",
        "before": 0,
        "after": 8,
    }


def test_deadline_success_counts_time_to_commitment_plus_world_time(prior: Prior, suites: SuiteDocument) -> None:
    outcome = _recorded(prior, suites).outcome
    assert outcome.duration_s is not None and 10 < outcome.duration_s < 60
    assert outcome.within(60) and not outcome.within(outcome.duration_s - 0.01)
    slack = 30 - outcome.duration_s  # a commitment slower than the slack misses V(30), one faster makes it
    assert outcome.within(30, commit_s=slack - 0.01) and not outcome.within(30, commit_s=slack + 0.01)
    failed = dataclasses.replace(outcome, success=False)
    assert not failed.within(1e9)


def test_episodes_are_deterministic(prior: Prior, suites: SuiteDocument) -> None:
    for cluster in paper_pool("timing")[:6]:
        spec = build_episode(cluster, 1, 5, prior, suites)
        one, two = (episode_record(run_episode(spec, Condition.NO_REQUEST)) for _ in range(2))
        one.pop("seconds"), two.pop("seconds")
        assert one == two


def test_wrong_workcell_reports_the_action_and_reason(prior: Prior, suites: SuiteDocument) -> None:
    cluster = make_cluster("GC_STICK_ORDER", "FINISHED_RECEIVER", 2)
    outcome = run_episode(build_episode(cluster, 0, 2, prior, suites), Condition.LOCAL_ONLY).outcome
    assert outcome.failure is FailureCode.EXECUTION_FAILURE and outcome.reason == "WORKCELL_CANNOT"
    assert outcome.message is not None and "craft_item" in outcome.message and outcome.handoff is True


def test_a_condition_from_the_other_suite_is_refused(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(make_cluster("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", 0), 0, 0, prior, suites)
    with pytest.raises(ConfigError) as caught:
        run_episode(spec, Condition.FEEDBACK)
    assert caught.value.reason == "CONDITION_SUITE"


def test_a_peer_that_can_do_neither_branch_rejects_and_nothing_executes(tmp_path: Path) -> None:
    prior_file = tmp_path / "prior.toml"
    prior_file.write_text(
        'extends = "default"\n[workcell_modes.IDLE]\ncan = ["control.wait"]\naccept_reason = "IDLE_CAN_WAIT"\n'
    )
    idle_prior = load_prior(prior_file)
    suites_file = tmp_path / "suites.toml"
    default_text = (Path(__file__).parents[1] / "src/gencoord/tasks/data/suites.toml").read_text()
    suites_file.write_text(default_text + '\n[goal_capability.modes.IDLE]\nforbids = ["craft_item", "give_item"]\n')
    idle_suites = load_suites(suites_file, idle_prior)
    cluster = make_cluster("GC_TABLE_ORDER", "IDLE", 4, suites=idle_suites)
    spec = build_episode(cluster, 0, 4, idle_prior, idle_suites)
    assert spec.binding is None
    result = run_episode(spec, prior=idle_prior, suites=idle_suites)
    assert isinstance(result.protocol, NoCommitment) and result.execution is None
    assert result.outcome.stages == {"C": False, "H": None, "T": None, "F": None, "G": False}
    assert result.outcome.failure is None and result.outcome.reason == "NO_ADMISSIBLE_ALTERNATIVE"
    assert result.protocol.trace.calls == 0 and len(result.protocol.trace.generations) == 1  # no revision call
