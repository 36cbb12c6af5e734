"""Resolution (S1.1), bounded feedback (Table S3) and Algorithms S1–S2."""

from __future__ import annotations

from pathlib import Path

import pytest

from gencoord.dsl import Proposal
from gencoord.errors import FailureCode, ResolutionError
from gencoord.prior import Prior, compose, load_prior
from gencoord.protocol import (
    Fail,
    NoCommitment,
    Reply,
    Response,
    Success,
    check_response,
    parse_response,
    resolve_feedback,
    resolve_forward,
    respond,
)
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.run.lifecycle import policy_responder, run_feedback, run_forward
from tests.conftest import ACTIVE_RECEIVER, ACTIVE_SENDER, STICK_COUNTERED, STICK_INITIAL


def _forward(
    prior: Prior, sender_text: str, receiver_text: str, template: str | None = "ACTIVE_ORDER_BRANCH"
) -> Success | Fail | NoCommitment:
    outputs = {Stage.SENDER_INITIAL: sender_text, Stage.RECEIVER_AFTER_REQUEST: receiver_text}
    return run_forward(
        lambda r: Reply(outputs[r.stage], model_calls=1), "agent_b", "agent_a", prior, prior.episode(template)
    )


def test_paper_forward_episode_resolves(prior: Prior) -> None:
    result = _forward(prior, ACTIVE_SENDER, ACTIVE_RECEIVER)
    assert isinstance(result, Success)
    commitment = result.commitment
    assert commitment.binding == "WORK_BRANCH" and commitment.direction == "forward"
    assert commitment.handoffs[0].item == "oak_planks" and commitment.handoffs[0].quantity == 8
    assert (commitment.handoffs[0].producer, commitment.handoffs[0].consumer) == (("agent_b", 1), ("agent_a", 0))
    assert result.trace.calls == 2
    [message] = result.trace.wire.messages
    assert message.payload == ACTIVE_SENDER.split("\n")[1] and message.nbytes == 81


def test_receiver_sees_only_the_delivered_request(prior: Prior) -> None:
    seen: list[GenerationRequest] = []

    def generate(request: GenerationRequest) -> Reply:
        seen.append(request)
        return Reply(ACTIVE_SENDER if request.stage is Stage.SENDER_INITIAL else ACTIVE_RECEIVER, model_calls=1)

    run_forward(generate, "agent_b", "agent_a", prior, prior.episode("ACTIVE_ORDER_BRANCH"))
    assert seen[0].delivered_request is None
    assert seen[1].delivered_request == ACTIVE_SENDER.split("\n")[1]


@pytest.mark.parametrize(
    ("sender", "receiver", "code", "reason"),
    [
        ("SELF oops\nREQ -", ACTIVE_RECEIVER, FailureCode.PARSE_FAILURE, "UNKNOWN_SKILL"),
        (
            ACTIVE_SENDER.replace("q=8,item=oak_planks)", "q=0,item=oak_planks)", 1),
            ACTIVE_RECEIVER,
            FailureCode.CONTRACT_REJECT,
            "INVALID_VALUE",
        ),
        (ACTIVE_SENDER.split("\n")[0] + "\nREQ -", ACTIVE_RECEIVER, FailureCode.CONTRACT_REJECT, "REQUEST_COUNT"),
        (ACTIVE_SENDER, "SELF -\nREQ -", FailureCode.CONTRACT_REJECT, "RECEIVER_SHAPE"),
        (ACTIVE_SENDER, ACTIVE_RECEIVER.replace("q=1", "q=2"), FailureCode.RESOLUTION_CONFLICT, "REALIZATION_MISMATCH"),
        (
            ACTIVE_SENDER,
            "SELF resource.deliver(bind=STORAGE_BRANCH,q=8,dst=storage_chest,item=oak_planks)\nREQ -",
            FailureCode.RESOLUTION_CONFLICT,
            "REALIZATION_MISMATCH",
        ),
        (
            ACTIVE_SENDER.replace("q=8", "q=2"),
            ACTIVE_RECEIVER,
            FailureCode.RESOLUTION_CONFLICT,
            "HANDOFF_QUANTITY",
        ),
        (
            ACTIVE_SENDER.replace("item=oak_planks", "item=cobblestone"),
            ACTIVE_RECEIVER,
            FailureCode.RESOLUTION_CONFLICT,
            "HANDOFF_NOT_CONSUMED",
        ),
    ],
)
def test_forward_failures_are_typed(prior: Prior, sender: str, receiver: str, code: FailureCode, reason: str) -> None:
    result = _forward(prior, sender, receiver)
    assert isinstance(result, Fail)
    assert (result.code, result.error.reason) == (code, reason)


def test_realization_ignores_surface_variants(prior: Prior) -> None:
    variant = "SELF craft.item(item=crafting_table,input=oak_planks,count=1,binding_id=WORK_BRANCH)\nREQ -"
    assert isinstance(_forward(prior, ACTIVE_SENDER, variant), Success)


def _realizing_answer(prior: Prior, text: str) -> tuple[Proposal, Proposal]:
    """The sender's proposal and a receiver answer whose SELF is exactly the requested path."""
    proposal = prior.parse(text)
    assert proposal.request is not None
    return proposal, Proposal(proposal.request.plan)


def test_every_template_binding_resolves_forward_and_only_as_itself(prior: Prior) -> None:
    for template, spec in prior.templates.items():
        other = next(t for t in prior.templates if t != template)
        for binding in spec.bindings:
            text = prior.serialize(compose(prior, template, binding, sender="agent_a", receiver="agent_b"))
            sent, answer = _realizing_answer(prior, text)
            commitment = resolve_forward(sent, "agent_a", answer, "agent_b", prior, prior.episode(template))
            assert commitment.binding == binding
            with pytest.raises(ResolutionError) as caught:
                resolve_forward(sent, "agent_a", answer, "agent_b", prior, prior.episode(other))
            assert caught.value.reason == "NO_ADMISSIBLE_BRANCH"


def test_multiple_branches_are_a_conflict(prior: Prior) -> None:
    mixed_sender = (
        "SELF resource.obtain(bind=STORAGE_BRANCH,q=8,item=oak_planks) > "
        "resource.deliver(q=8,item=oak_planks,to=agent_a)\n"
        "REQ agent_a craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)"
    )
    result = _forward(prior, mixed_sender, ACTIVE_RECEIVER, template=None)
    assert isinstance(result, Fail) and result.error.reason == "MULTIPLE_BRANCHES"


def test_public_predecessors_can_close_a_cycle(prior: Prior) -> None:
    """The receiver collects furnace output that the sender loads only after the handoff:
    collect -> deliver -> (handoff) -> supply_input -> collect. No order satisfies it."""
    text = (
        "SELF resource.obtain(q=1,item=coal) > transform.supply_fuel(q=1,item=coal,station=furnace_station) > "
        "transform.supply_input(q=1,item=iron_ingot,station=furnace_station)\n"
        "REQ agent_a transform.collect_output(q=1,item=iron_ingot,station=furnace_station) > "
        "resource.deliver(q=1,item=iron_ingot,to=agent_b)"
    )
    sent, answer = _realizing_answer(prior, text)
    with pytest.raises(ResolutionError) as caught:
        resolve_forward(sent, "agent_b", answer, "agent_a", prior, prior.episode())
    assert caught.value.reason == "CYCLE" and "agent_b#3" in caught.value.message


def test_furnace_loading_by_the_peer_precedes_collection(prior: Prior) -> None:
    text = (
        "SELF resource.obtain(q=1,item=raw_iron) > resource.deliver(q=1,item=raw_iron,to=agent_a) > "
        "transform.supply_fuel(q=1,item=coal,station=furnace_station)\n"
        "REQ agent_a transform.supply_input(q=1,item=raw_iron,station=furnace_station) > "
        "transform.collect_output(q=1,item=iron_ingot,station=furnace_station)"
    )
    sent, answer = _realizing_answer(prior, text)
    commitment = resolve_forward(sent, "agent_b", answer, "agent_a", prior, prior.episode())
    assert (("agent_b", 2), ("agent_a", 1)) in commitment.edges
    assert commitment.order.index(("agent_b", 2)) < commitment.order.index(("agent_a", 1))


def _feedback(prior: Prior, mode: str, revision: str | None = None, responder=None) -> Success | Fail | NoCommitment:  # type: ignore[no-untyped-def]
    def generate(request: GenerationRequest) -> Reply:
        if request.stage is Stage.REQUESTER_INITIAL:
            return Reply(STICK_INITIAL, model_calls=1)
        if revision is not None:
            return Reply(revision, model_calls=1)
        return Reply(STICK_INITIAL if (request.response or "").startswith("ACCEPT") else STICK_COUNTERED, model_calls=1)

    answer = responder or policy_responder(mode, "agent_a", prior)
    return run_feedback(generate, answer, "agent_a", "agent_b", prior, prior.episode("GC_STICK_ORDER"))


def test_raw_processor_accepts_and_finished_receiver_counters(prior: Prior) -> None:
    accepted = _feedback(prior, "RAW_PROCESSOR")
    countered = _feedback(prior, "FINISHED_RECEIVER")
    assert isinstance(accepted, Success) and isinstance(countered, Success)
    assert accepted.trace.responses == [Response("ACCEPT", "LOCAL_WORKCELL_CAN_PROCESS")]
    assert countered.trace.responses == [
        Response("COUNTER", "FINISHED_ITEM_REQUIRED", "CRAFT_AT_REQUESTER_HANDOFF_FINISHED")
    ]
    assert (accepted.commitment.handoffs[0].item, accepted.commitment.handoffs[0].quantity) == ("oak_planks", 2)
    assert (countered.commitment.handoffs[0].item, countered.commitment.handoffs[0].quantity) == ("stick", 4)
    # goal fields are invariant: 4 sticks end in the order chest either way
    for result in (accepted, countered):
        assert [(c.holder, c.item, c.quantity) for c in result.plan.terminal] == [("order_chest", "stick", 4)]
    assert accepted.trace.calls == countered.trace.calls == 2


def test_counterfactual_feedback_controls_the_revision(prior: Prior) -> None:
    """A FINISHED_RECEIVER world with the RAW_PROCESSOR response injected: the requester follows the response."""
    injected = _feedback(prior, "FINISHED_RECEIVER", responder=policy_responder("RAW_PROCESSOR", "agent_a", prior))
    assert isinstance(injected, Success) and injected.commitment.binding == "STICK_RAW_HANDOFF"


def test_revision_must_follow_the_response(prior: Prior) -> None:
    ignored_counter = _feedback(prior, "FINISHED_RECEIVER", revision=STICK_INITIAL)
    assert isinstance(ignored_counter, Fail) and ignored_counter.error.reason == "BRANCH_MISMATCH"
    changed_goal = _feedback(prior, "RAW_PROCESSOR", revision=STICK_INITIAL.replace("q=4", "q=8").replace("q=2", "q=4"))
    assert isinstance(changed_goal, Fail) and changed_goal.code is FailureCode.RESOLUTION_CONFLICT


def test_reject_closes_without_a_second_call(tmp_path: Path) -> None:
    extension = tmp_path / "idle.toml"
    extension.write_text(
        'extends = "default"\n[workcell_modes.IDLE]\ncan = ["control.wait"]\naccept_reason = "IDLE_CAN_WAIT"\n'
    )
    idle = load_prior(extension)
    request = idle.parse(STICK_INITIAL).request
    assert request is not None
    assert respond(request, "agent_a", "IDLE", idle) == Response("REJECT", "NO_ADMISSIBLE_ALTERNATIVE")
    result = _feedback(idle, "IDLE")
    assert isinstance(result, NoCommitment) and result.reason == "NO_ADMISSIBLE_ALTERNATIVE"
    assert result.trace.calls == 1


@pytest.mark.parametrize(
    ("line", "code", "reason"),
    [
        ("MAYBE reason=X", FailureCode.CONTRACT_REJECT, "UNKNOWN_DECISION"),
        ("ACCEPT", FailureCode.CONTRACT_REJECT, "MISSING_REASON"),
        (
            "ACCEPT reason=X counter_offer_id=CRAFT_AT_REQUESTER_HANDOFF_FINISHED",
            FailureCode.CONTRACT_REJECT,
            "FORBIDDEN_FIELD",
        ),
        ("COUNTER reason=X counter_offer_id=NOPE", FailureCode.CONTRACT_REJECT, "INADMISSIBLE_COUNTER"),
        ("COUNTER reason=X", FailureCode.CONTRACT_REJECT, "INADMISSIBLE_COUNTER"),
        ("REJECT reason=X mood=grumpy", FailureCode.CONTRACT_REJECT, "FORBIDDEN_FIELD"),
        ("ACCEPT reason=X reason=Y", FailureCode.PARSE_FAILURE, "DUPLICATE_KEY"),
        ("ACCEPT  reason=X", FailureCode.PARSE_FAILURE, "MALFORMED_RESPONSE"),
        ("", FailureCode.PARSE_FAILURE, "MALFORMED_RESPONSE"),
    ],
)
def test_invalid_responses(prior: Prior, line: str, code: FailureCode, reason: str) -> None:
    result = _feedback(prior, "RAW_PROCESSOR", responder=lambda _delivered: line)
    assert isinstance(result, Fail) and (result.code, result.error.reason) == (code, reason)
    assert result.trace.calls == 1


def test_response_wire_form_round_trips(prior: Prior) -> None:
    response = Response("COUNTER", "FINISHED_ITEM_REQUIRED", "CRAFT_AT_REQUESTER_HANDOFF_FINISHED")
    assert parse_response(response.serialize()) == response
    request = prior.parse(STICK_INITIAL).request
    assert request is not None
    check_response(response, request, "agent_a", prior)


def test_resolve_feedback_refuses_reject(prior: Prior) -> None:
    initial = prior.parse(STICK_INITIAL)
    with pytest.raises(ResolutionError):
        resolve_feedback(initial, initial, Response("REJECT", "X"), "agent_a", "agent_b", prior, prior.episode())
