"""Private task structure (v2 S20–S23): PATH / SLICE / GOAL deliveries, the cache, the episodes.

Codec and cache invariants are property tests over random deliveries and random delivery
sequences; hostile messages must end in typed errors; whole episodes run through the real
pipeline for every delivery kind and cache setting, and in real Minecraft for one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.backends.api import ApiBackend
from gencoord.backends.registry import rule_set
from gencoord.cli import app
from gencoord.dsl.ast import Proposal
from gencoord.errors import ConfigError, GencoordError, ParseError
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.experiment import config_digest, plan_run
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.eval.kinds.episodes.private import private_tables
from gencoord.eval.runner import RECORDS, create_run, run_experiment
from gencoord.planning.delivery import goal_of, realize, write_delivery
from gencoord.prior import Prior
from gencoord.prior.compose import compose
from gencoord.protocol.delivery import (
    AckStatus,
    CacheSetting,
    Delivery,
    DeliveryKind,
    DeliveryRejectedError,
    ReceiverCache,
    SenderCache,
    parse_delivery,
    transmit,
)
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import Fail
from gencoord.protocol.wire import Wire
from gencoord.run.episode import Condition, run_episode
from gencoord.tasks import SuiteDocument
from gencoord.tasks.cluster import paper_pool
from gencoord.tasks.context import LocalContext
from gencoord.tasks.instances import EpisodeSpec, build_episode, privatize
from tests.chat_stub import ComposerApi, serving

SENDER, RECEIVER = "agent_a", "agent_b"
CACHED = [Condition.PATH_DELIVERY, Condition.SLICE_DELIVERY, Condition.GOAL_DELIVERY]


def _proposals(prior: Prior) -> list[Proposal]:
    """Every binding of every forward template, composed at its example quantities."""
    found = []
    for name, template in sorted(prior.templates.items()):
        for binding in sorted(template.bindings):
            found.append(compose(prior, name, binding, sender=SENDER, receiver=RECEIVER, params=template.params))
    return [p for p in found if p.request is not None]


def _spec(prior: Prior, suites: SuiteDocument, index: int, role: int = 0) -> EpisodeSpec:
    return build_episode(paper_pool("timing")[index], role, 0, prior, suites)


@pytest.fixture(scope="module")
def deliveries(prior: Prior) -> list[Delivery]:
    return [write_delivery(kind, p, SENDER, prior) for p in _proposals(prior) for kind in DeliveryKind]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), cached=st.booleans())
def test_every_delivery_decodes_to_itself_and_its_reference_names_its_content(
    data: st.DataObject, cached: bool, deliveries: list[Delivery]
) -> None:
    delivery = data.draw(st.sampled_from(deliveries))
    assert parse_delivery(delivery.message(cached)) == delivery
    reference = parse_delivery(delivery.reference())
    assert not isinstance(reference, Delivery)
    assert (reference.ident, reference.slot) == (delivery.ident, delivery.slot)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=12))
def test_a_cached_session_never_realizes_stale_content_and_references_only_what_was_acknowledged(
    sequence: list[int], prior: Prior, suites: SuiteDocument
) -> None:
    spec = privatize(_spec(prior, suites, 0), prior)
    holdings = {a.name: dict(a.inventory) for a in spec.world.agents}
    proposals = [p for p in _proposals(prior) if _feasible(p, prior, spec, holdings)][:6]
    caches = (SenderCache(), ReceiverCache())
    confirmed: dict[tuple[str, DeliveryKind], str] = {}
    for pick in sequence:
        proposal = proposals[pick % len(proposals)]
        delivery = write_delivery(DeliveryKind.PATH, proposal, SENDER, prior)
        wire = Wire()
        path, cost = transmit(delivery, wire, lambda d: realize(d, holdings[RECEIVER], prior, spec.public), caches)
        assert proposal.request is not None and path == proposal.request.plan  # never what was cached before
        referenced = wire.messages[0].kind == "REF"
        assert referenced == (confirmed.get((RECEIVER, DeliveryKind.PATH)) == delivery.ident)
        assert cost.acks[-1] in (AckStatus.HIT, AckStatus.STORED, AckStatus.REPLACED)
        confirmed[(RECEIVER, DeliveryKind.PATH)] = delivery.ident
        assert len(caches[1].entries) == 1 and caches[1].entries[(SENDER, DeliveryKind.PATH)] == delivery


def _feasible(proposal: Proposal, prior: Prior, spec: EpisodeSpec, holdings: dict[str, dict[str, int]]) -> bool:
    try:
        realize(write_delivery(DeliveryKind.PATH, proposal, SENDER, prior), holdings[RECEIVER], prior, spec.public)
    except GencoordError:
        return False
    return True


def test_a_reference_to_replaced_content_misses_and_the_content_is_sent_again(
    prior: Prior, suites: SuiteDocument
) -> None:
    spec = privatize(_spec(prior, suites, 0), prior)
    holdings = {a.name: dict(a.inventory) for a in spec.world.agents}
    first, second = (write_delivery(DeliveryKind.GOAL, p, SENDER, prior) for p in _proposals(prior)[:2])

    def accept(delivery: Delivery) -> object:
        return delivery.body

    sender_cache, receiver_cache = SenderCache(), ReceiverCache()
    transmit(first, Wire(), accept, (sender_cache, receiver_cache))
    # the receiver replaces the slot behind the sender's back (another of its peers' deliveries, a restart):
    receiver_cache.entries[first.slot] = second
    wire = Wire()
    body, cost = transmit(first, wire, accept, (sender_cache, receiver_cache))
    assert body == first.body and [m.kind for m in wire.messages] == ["REF", "ACK", "GOAL", "ACK"]
    assert cost.acks == (AckStatus.MISS, AckStatus.REPLACED)
    assert holdings  # the episode's agents hold their tools


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200) | st.from_regex(r"(PATH|SLICE|GOAL|REF) .{0,120}", fullmatch=True))
def test_hostile_delivery_messages_end_in_a_parse_error(text: str) -> None:
    try:
        parse_delivery(text)
    except ParseError as error:
        assert error.reason in {"BAD_DELIVERY", "DELIVERY_ID"}


HOSTILE_BODIES = [
    (DeliveryKind.SLICE, "n1@agent_b=resource.deliver(q=8,dst=chest_a,item=cobblestone) ; n1->n9"),
    (DeliveryKind.SLICE, "n1@agent_b=resource.deliver(q=8,dst=chest_a,item=cobblestone) ; n1->n1"),
    (DeliveryKind.SLICE, "n1@agent_b=resource.deliver(q=8,dst=chest_a,item=cobblestone) > craft.item(q=1)"),
    (DeliveryKind.SLICE, "n1@agent_b=x ; n1@agent_b=y"),
    (DeliveryKind.GOAL, "container_contains(chest_a,cobblestone,0)"),
    (DeliveryKind.GOAL, "teleport(chest_a,cobblestone,1)"),
    (DeliveryKind.GOAL, "container_contains(chest_a,diamond,64)"),
    (DeliveryKind.GOAL, "inventory_contains(agent_b,cobblestone,1)"),
    (DeliveryKind.PATH, "resource.deliver(q=800,dst=chest_a,item=cobblestone)"),
    (DeliveryKind.PATH, "resource.deliver(q=8,dst=nowhere,item=cobblestone)"),
    (DeliveryKind.PATH, "rm -rf /"),
]


@pytest.mark.parametrize(("kind", "body"), HOSTILE_BODIES)
def test_a_delivery_the_receiver_cannot_carry_out_is_refused_with_a_typed_error_and_never_cached(
    kind: DeliveryKind, body: str, prior: Prior, suites: SuiteDocument
) -> None:
    spec = privatize(_spec(prior, suites, 0), prior)
    holdings = {a.name: dict(a.inventory) for a in spec.world.agents}
    delivery = Delivery(kind, SENDER, RECEIVER, ("cobblestone", 8), body)
    caches = (SenderCache(), ReceiverCache())
    wire = Wire()
    with pytest.raises(DeliveryRejectedError) as refused:
        transmit(delivery, wire, lambda d: realize(d, holdings[RECEIVER], prior, spec.public), caches)
    assert refused.value.code in {"PARSE_FAILURE", "CONTRACT_REJECT", "RESOLUTION_CONFLICT"}
    assert wire.messages[-1].kind == "ACK" and " REJECT " in wire.messages[-1].payload
    assert caches[1].entries == {} and caches[0].confirmed == {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_a_slice_in_any_listing_order_linearizes_to_the_senders_path(
    seed: int, prior: Prior, suites: SuiteDocument
) -> None:
    spec = privatize(_spec(prior, suites, 0), prior)
    for proposal in _proposals(prior):
        delivery = write_delivery(DeliveryKind.SLICE, proposal, SENDER, prior)
        parts = delivery.body.split(" ; ")
        random.Random(seed).shuffle(parts)
        shuffled = Delivery(delivery.kind, SENDER, RECEIVER, delivery.receives, " ; ".join(parts))
        stock = {item: 10_000 for item in ("oak_planks", "cobblestone")}  # every template's material, plenty
        assert proposal.request is not None
        assert realize(shuffled, stock, prior, spec.public) == proposal.request.plan


def test_under_private_structure_no_public_view_names_the_template_and_only_the_sender_holds_its_graph(
    prior: Prior, suites: SuiteDocument
) -> None:
    spec = _spec(prior, suites, 3)
    private = privatize(spec, prior)
    template = spec.cluster.template
    assert private.public.template is None
    receiver_view = private.contexts[spec.receiver].render()
    assert template not in receiver_view
    assert not any(binding in receiver_view for binding in prior.templates[template].bindings)
    graph = {k for k in private.contexts[spec.sender].private if k.startswith("task_graph.")}
    assert graph == {f"task_graph.{b}" for b in prior.templates[template].bindings}
    capability = build_episode(paper_pool("goal_capability")[0], 0, 0, prior, suites)
    with pytest.raises(ConfigError):
        privatize(capability, prior)


@pytest.mark.parametrize("condition", CACHED)
@pytest.mark.parametrize("cache", list(CacheSetting))
def test_every_delivery_kind_and_cache_setting_forms_executes_and_meets_the_original_task(
    condition: Condition, cache: CacheSetting, prior: Prior, suites: SuiteDocument
) -> None:
    for index in range(0, 40, 5):
        spec = _spec(prior, suites, index, role=index % 2)
        result = run_episode(spec, condition, prior=prior, suites=suites, cache=cache)
        delivery = result.protocol.trace.delivery
        assert result.outcome.stages["G"], (spec.cluster.id, result.outcome.message)
        assert delivery is not None and delivery.transmission is not None and delivery.sender_complete
        expected = {
            CacheSetting.OFF: AckStatus.FRESH,
            CacheSetting.COLD: AckStatus.STORED,
            CacheSetting.WARM: AckStatus.HIT,
            CacheSetting.CHANGED: AckStatus.REPLACED,
        }[cache]
        assert delivery.transmission.acks == (expected,)
        kinds = [m.kind for m in result.protocol.trace.wire.messages]
        assert kinds == (["REF", "ACK"] if cache is CacheSetting.WARM else [delivery.kind.value, "ACK"])


def test_a_compatible_alternative_is_fulfilled_while_the_original_task_fails_and_an_incompatible_one_is_refused(
    prior: Prior, suites: SuiteDocument
) -> None:
    for index in range(0, 40, 4):
        spec = _spec(prior, suites, index)
        compatible = run_episode(spec, Condition.COMPATIBLE_ALTERNATIVE, prior=prior, suites=suites)
        stages = compatible.outcome.stages
        assert (stages["C"], stages["H"], stages["F"], stages["G"]) == (True, True, True, False), spec.cluster.id
        incompatible = run_episode(spec, Condition.INCOMPATIBLE_ALTERNATIVE, prior=prior, suites=suites)
        assert incompatible.execution is None and incompatible.outcome.reason == "DELIVERY_INFEASIBLE"
        last = incompatible.protocol.trace.wire.messages[-1]
        assert last.kind == "ACK" and "REJECT DELIVERY_INFEASIBLE" in last.payload


def test_a_cache_setting_outside_the_delivery_conditions_is_a_config_error(prior: Prior, suites: SuiteDocument) -> None:
    with pytest.raises(ConfigError):
        run_episode(_spec(prior, suites, 0), Condition.REQUEST, prior=prior, suites=suites, cache=CacheSetting.WARM)
    with pytest.raises(ValueError, match="caches apply only"):
        EpisodeExperimentConfig(name="x", pool="timing", conditions=["request"], caches=["warm"])


def test_cache_settings_add_jobs_only_to_delivery_conditions_and_leave_other_keys_unchanged() -> None:
    config = EpisodeExperimentConfig(
        name="x", pool="timing", clusters=2, conditions=["request", "path_delivery"], caches=["off", "warm"], roles=[0]
    )
    jobs = plan_run(config).jobs
    request = [job.key for job in jobs if "|request|" in job.key]
    delivered = [job.key for job in jobs if "|path_delivery|" in job.key]
    assert request and all("cache=" not in key for key in request)
    assert len(delivered) == 2 * len(request) and {key.rsplit("|", 1)[1] for key in delivered} == {
        "cache=off",
        "cache=warm",
    }


def _rows(tables: Sequence[object], key: str) -> list[list[str]]:
    return next(t.rows for t in tables if getattr(t, "key", None) == key)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_the_shipped_experiment_runs_reduced_and_its_tables_follow_the_records(tmp_path: Path) -> None:
    config = load_experiment(find_experiment("private_structure")).model_copy(update={"clusters": 4})
    run_dir = create_run(config, tmp_path)
    summary = run_experiment(config, run_dir, workers=1)
    assert summary.lost == 0
    records = [json.loads(line) for line in (run_dir / RECORDS).read_text().splitlines()]
    tables = private_tables(records, config)
    bytes_rows = {(row[0], row[1], row[2]): row for row in _rows(tables, "private_bytes")}
    for kind in DeliveryKind:
        warm, cold = bytes_rows[("on", "warm", kind.value)], bytes_rows[("on", "cold", kind.value)]
        assert float(warm[3]) < float(cold[3])  # a reference is smaller than the content it names
        assert float(cold[6]) > 0 and float(bytes_rows[("off", "any", kind.value)][6]) == 0
    outcomes = {(row[0], row[1]): row for row in _rows(tables, "private_outcomes")}
    rule_path = outcomes[("path_delivery", "rule")]
    assert rule_path[2] == rule_path[3] == rule_path[6]  # assigned = executed = G for the rule sender
    formation = {row[0]: row for row in _rows(tables, "private_formation")}
    assert formation["rule"][1] == "0"  # the rule sender makes no model call


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_planned_goal_path_makes_every_delivered_conjunct_true_from_what_the_receiver_is_handed(
    data: st.DataObject, prior: Prior, suites: SuiteDocument
) -> None:
    template = data.draw(st.sampled_from(sorted(suites.forward.templates)))
    binding = data.draw(st.sampled_from(sorted(prior.templates[template].bindings)))
    params = data.draw(st.sampled_from(suites.forward.templates[template].params))
    proposal = compose(prior, template, binding, sender=SENDER, receiver=RECEIVER, params=params)
    delivery = write_delivery(DeliveryKind.GOAL, proposal, SENDER, prior)
    spec = privatize(_spec(prior, suites, 0), prior)
    path = realize(delivery, {}, prior, spec.public)  # nothing held but what is handed over
    wanted = goal_of(proposal.request.plan if proposal.request else (), RECEIVER, prior)
    made = goal_of(path, RECEIVER, prior)
    reached = {(m.kind, m.holder, m.item): m.quantity for m in made}
    for conjunct in wanted:
        assert reached.get((conjunct.kind, conjunct.holder, conjunct.item), 0) >= conjunct.quantity, (binding, path)


@pytest.mark.slow
def test_the_learned_sender_config_runs_reduced_and_counts_one_model_call_per_sender_episode(tmp_path: Path) -> None:
    config = load_experiment(find_experiment("private_structure_learned")).model_copy(update={"clusters": 2})
    run_dir = create_run(config, tmp_path)
    assert run_experiment(config, run_dir, workers=1).lost == 0
    records = [json.loads(line) for line in (run_dir / RECORDS).read_text().splitlines()]
    formation = {row[0]: row for row in _rows(private_tables(records, config), "private_formation")}
    assert set(formation) == set(config.backends)
    for backend, row in formation.items():
        episodes = sum(r["backend_set"] == backend for r in records)
        assert row[1] == ("0" if backend == "rule" else str(episodes))  # calls: the sender's, one per episode
        assert row[2].endswith(f"/{episodes}")
    rule_episodes = sum(r["backend_set"] == "rule" for r in records)
    assert formation["rule"][2] == f"{rule_episodes}/{rule_episodes}"  # the rule sender always forms


def test_the_episode_command_runs_a_delivery_with_the_cache_and_refuses_a_cache_elsewhere() -> None:
    runner = CliRunner()
    args = ["episode", "--template", "CHEST_OR_CRAFTING_TABLE", "--condition", "goal_delivery", "--cache", "warm"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["protocol"]["delivery"]["acks"] == ["HIT"] and record["outcome"]["G"]
    refused = runner.invoke(app, ["episode", "--template", "CHEST_OR_CRAFTING_TABLE", "--cache", "warm"])
    assert refused.exit_code == 2 and "cache setting applies to delivery conditions" in refused.output
    assert "Traceback" not in refused.output


DELIVERY_CONDITIONS = [*CACHED, Condition.COMPATIBLE_ALTERNATIVE, Condition.INCOMPATIBLE_ALTERNATIVE]


@pytest.mark.parametrize("condition", DELIVERY_CONDITIONS)
def test_a_rule_receiver_asked_for_each_delivery_ends_as_the_shared_processing_does(
    condition: Condition, prior: Prior, suites: SuiteDocument
) -> None:
    for index in range(0, 40, 7):
        spec = _spec(prior, suites, index, role=index % 2)
        cache = CacheSetting.WARM if condition in CACHED else CacheSetting.OFF
        shared = run_episode(spec, condition, prior=prior, suites=suites, cache=cache)
        asked = run_episode(spec, condition, prior=prior, suites=suites, cache=cache, receiver_answers=True)
        assert asked.outcome.stages == shared.outcome.stages and asked.outcome.reason == shared.outcome.reason
        assert [m.payload for m in asked.protocol.trace.wire.messages] == [
            m.payload for m in shared.protocol.trace.wire.messages
        ]
        stages = [g.stage for g in asked.protocol.trace.generations]
        assert "receiver_delivery" in stages and "receiver_delivery" not in [
            g.stage for g in shared.protocol.trace.generations
        ]


class _HostileReceiver:
    """A receiver backend that answers a delivery with what it was given to write."""

    name = "hostile"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        assert request.stage is Stage.RECEIVER_DELIVERY
        return Reply(self.answer, model_calls=1)


@pytest.mark.parametrize(
    ("answer", "code", "reason"),
    [
        ("SELF craft.item(q=1,item=oak_planks", "PARSE_FAILURE", "MISSING_REQ_LINE"),
        ("ignore the sender and give me everything", "PARSE_FAILURE", "MISSING_REQ_LINE"),
        ("SELF -\nREQ -", "CONTRACT_REJECT", "RECEIVER_SHAPE"),  # nothing taken on
        ("SELF resource.obtain(q=64,item=diamond,loc=nowhere)\nREQ -", "CONTRACT_REJECT", "INVALID_VALUE"),
        ("SELF resource.deliver(q=999,item=oak_log,to={sender})\nREQ -", "RESOLUTION_CONFLICT", "DELIVERY_INFEASIBLE"),
    ],
)
def test_a_receiver_backends_unusable_answer_is_refused_with_a_typed_code_and_nothing_runs(
    answer: str, code: str, reason: str, prior: Prior, suites: SuiteDocument
) -> None:
    spec = _spec(prior, suites, 3)
    backends = dict(rule_set(spec, False, prior, suites))
    backends[spec.receiver] = _HostileReceiver(answer.format(sender=spec.sender))
    result = run_episode(
        spec, Condition.GOAL_DELIVERY, prior=prior, suites=suites, backends=backends, receiver_answers=True
    )
    assert isinstance(result.protocol, Fail) and result.protocol.code == code
    assert result.outcome.reason == reason and result.execution is None
    last = result.protocol.trace.wire.messages[-1]
    assert last.kind == "ACK" and f"REJECT {reason}" in last.payload
    assert sum(g.stage == "receiver_delivery" for g in result.protocol.trace.generations) == 1  # asked once


def test_an_api_receiver_takes_each_delivery_on_from_its_prompt(prior: Prior, suites: SuiteDocument) -> None:
    ComposerApi.failures_left = 0
    with serving(ComposerApi) as url:
        for condition in CACHED:
            for index in (0, 9):
                spec = _spec(prior, suites, index)
                backends = dict(rule_set(spec, False, prior, suites))
                backends[spec.receiver] = ApiBackend(url, "stub", prior, backoff_s=0.01)
                result = run_episode(
                    spec, condition, prior=prior, suites=suites, backends=backends, receiver_answers=True
                )
                assert result.outcome.stages["G"], (condition, spec.cluster.id, result.outcome.message)
                calls = [g.reply.model_calls for g in result.protocol.trace.generations]
                assert calls == [0, 1]  # the rule sender's record, the API receiver's one answer


def test_the_delivery_receiver_setting_needs_a_delivery_condition_and_the_rule_keeps_the_kept_digest() -> None:
    config = load_experiment(find_experiment("private_structure"))
    kept = json.loads((Path(__file__).parents[1] / "results" / "private_structure" / "manifest.json").read_text())
    assert config.delivery_receiver == "rule" and config_digest(config) == kept["config_sha256"]
    assert config_digest(config.model_copy(update={"delivery_receiver": "backend"})) != kept["config_sha256"]
    plain = config.model_dump() | {"conditions": ["request"], "caches": ["off"], "delivery_receiver": "backend"}
    with pytest.raises(ValueError, match="delivery conditions"):
        EpisodeExperimentConfig.model_validate(plain)
