"""Backend conformance: every backend's replies parse, pass the contract, and are deterministic.

A backend joins by adding an entry to BACKENDS: a factory and the stages it serves.
Learned and API backends will be held to the same checks.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gencoord.backends import Backend, BindingComposer, BranchGuesser, RequestRealizer, RuleRequester, RuleSender
from gencoord.backends.rule import composed
from gencoord.dsl.serialize import request_line
from gencoord.errors import ConfigError
from gencoord.prior import Prior, check_proposal
from gencoord.protocol.response import respond
from gencoord.run.lifecycle import GenerationRequest, Stage
from gencoord.tasks import SuiteDocument, build_episode, paper_pool
from gencoord.tasks.episode import EpisodeSpec

Factory = Callable[[Prior, SuiteDocument], Backend]
BACKENDS: dict[str, tuple[Factory, tuple[Stage, ...]]] = {
    "rule-sender": (lambda prior, _suites: RuleSender(prior), (Stage.SENDER_INITIAL,)),
    "request-realizer": (lambda prior, _suites: RequestRealizer(prior), (Stage.RECEIVER_AFTER_REQUEST,)),
    "branch-guesser": (lambda prior, _suites: BranchGuesser(prior, seed=3), (Stage.RECEIVER_WITHOUT_REQUEST,)),
    "rule-requester": (
        RuleRequester,
        (Stage.REQUESTER_INITIAL, Stage.REQUESTER_AFTER_RESPONSE),
    ),
}


def _request(spec: EpisodeSpec, stage: Stage, prior: Prior, suites: SuiteDocument) -> tuple[str, GenerationRequest]:
    """Who speaks at ``stage`` and what the protocol would have delivered to them."""
    if stage in (Stage.SENDER_INITIAL, Stage.REQUESTER_INITIAL):
        return spec.sender, GenerationRequest(spec.sender, stage, spec.receiver)
    if stage is Stage.RECEIVER_WITHOUT_REQUEST:
        return spec.receiver, GenerationRequest(spec.receiver, stage, spec.sender)
    if stage is Stage.RECEIVER_AFTER_REQUEST:
        sent = composed(prior, spec.binding, spec.sender, spec.receiver, spec.params)
        delivered = request_line(sent.request)
        return spec.receiver, GenerationRequest(spec.receiver, stage, spec.sender, delivered_request=delivered)
    local_plan = suites.goal_capability.goals[spec.cluster.template].initial
    initial = composed(prior, local_plan, spec.sender, spec.receiver, spec.params)
    assert initial.request is not None and spec.cluster.mode is not None
    response = respond(initial.request, spec.sender, spec.cluster.mode, prior).serialize()
    return spec.sender, GenerationRequest(
        spec.sender, stage, spec.receiver, initial_proposal=prior.serialize(initial), response=response
    )


def _specs(stage: Stage, prior: Prior, suites: SuiteDocument) -> list[EpisodeSpec]:
    feedback = stage in (Stage.REQUESTER_INITIAL, Stage.REQUESTER_AFTER_RESPONSE)
    pool = paper_pool("goal_capability") if feedback else paper_pool("timing")
    return [build_episode(cluster, role, 0, prior, suites) for cluster in pool for role in (0, 1)]


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_replies_parse_pass_the_contract_and_repeat(name: str, prior: Prior, suites: SuiteDocument) -> None:
    factory, stages = BACKENDS[name]
    backend = factory(prior, suites)
    assert backend.name
    for stage in stages:
        for spec in _specs(stage, prior, suites):
            agent, request = _request(spec, stage, prior, suites)
            reply = backend.generate(spec.contexts[agent], request)
            assert reply == backend.generate(spec.contexts[agent], request)
            assert reply.model_calls == 0
            proposal = prior.parse(reply.text)
            check_proposal(proposal, agent, prior, spec.public)
            if stage is Stage.RECEIVER_AFTER_REQUEST or stage is Stage.RECEIVER_WITHOUT_REQUEST:
                assert proposal.self_plan and not proposal.peer_requests


def test_rule_sender_composes_the_private_binding(prior: Prior, suites: SuiteDocument) -> None:
    for spec in _specs(Stage.SENDER_INITIAL, prior, suites):
        reply = RuleSender(prior).generate(
            spec.contexts[spec.sender], GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
        )
        assert f"bind={spec.binding}" in reply.text


def test_request_realizer_adopts_the_delivered_path(prior: Prior, suites: SuiteDocument) -> None:
    spec = _specs(Stage.RECEIVER_AFTER_REQUEST, prior, suites)[0]
    agent, request = _request(spec, Stage.RECEIVER_AFTER_REQUEST, prior, suites)
    reply = RequestRealizer(prior).generate(spec.contexts[agent], request)
    assert request.delivered_request is not None
    assert reply.text == "SELF " + request.delivered_request.split(" ", 2)[2] + "\nREQ -"


def test_branch_guesser_splits_evenly_over_branches(prior: Prior, suites: SuiteDocument) -> None:
    spec = _specs(Stage.RECEIVER_WITHOUT_REQUEST, prior, suites)[0]
    agent, request = _request(spec, Stage.RECEIVER_WITHOUT_REQUEST, prior, suites)
    chosen = {BranchGuesser(prior, seed).generate(spec.contexts[agent], request).text for seed in range(40)}
    assert len(chosen) == len(spec.contexts[agent].branches) == 2


def test_binding_composer_is_the_factor_backbone(prior: Prior, suites: SuiteDocument) -> None:
    spec = _specs(Stage.SENDER_INITIAL, prior, suites)[0]
    other = next(b for b in spec.contexts[spec.sender].branches if b != spec.binding)
    composer = BindingComposer(prior, lambda _context: other)
    text = composer.generate(
        spec.contexts[spec.sender], GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
    ).text
    assert f"bind={other}" in text
    with pytest.raises(ConfigError) as caught:
        BindingComposer(prior, lambda _context: "NOT_A_CODE").generate(
            spec.contexts[spec.sender], GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
        )
    assert caught.value.reason == "UNKNOWN_BINDING"


def test_a_rule_without_its_private_field_says_which(prior: Prior, suites: SuiteDocument) -> None:
    spec = _specs(Stage.SENDER_INITIAL, prior, suites)[0]
    with pytest.raises(ConfigError) as caught:
        RuleSender(prior).generate(
            spec.contexts[spec.receiver], GenerationRequest(spec.receiver, Stage.SENDER_INITIAL, spec.sender)
        )
    assert caught.value.reason == "CONTEXT_LACKS_FIELD" and "binding" in caught.value.message
    with pytest.raises(ConfigError) as missing:
        RequestRealizer(prior).generate(
            spec.contexts[spec.receiver], GenerationRequest(spec.receiver, Stage.RECEIVER_AFTER_REQUEST, spec.sender)
        )
    assert missing.value.reason == "NO_REQUEST"
