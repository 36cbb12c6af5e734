"""Controlled free-form dialogue: the extractor inverts the convention, episodes run end to end."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gencoord.backends.rule import RequestRealizer, RuleSender, composed
from gencoord.dsl.ast import Proposal
from gencoord.dsl.dialogue import Turn, extract, hear_task, scripted, sender_done
from gencoord.dsl.surface import SurfaceName, surface
from gencoord.errors import ConfigError, FailureCode, ParseError
from gencoord.eval.config import parse_experiment
from gencoord.models.variant import ModelSpec, Target
from gencoord.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import Fail, Success
from gencoord.run.episode import Condition, coordinate, run_episode
from gencoord.run.faults import Fault
from gencoord.run.lifecycle import run_dialogue
from gencoord.tasks import SuiteDocument, build_episode, paper_pool
from gencoord.train.data import build_rows
from tests.strategies import legal_proposal


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_extractor_inverts_the_convention_for_every_legal_commitment(prior: Prior, data: st.DataObject) -> None:
    proposal = data.draw(legal_proposal(prior).filter(lambda p: p.request is not None))
    assert proposal.request is not None
    said = scripted(proposal, "agent_a")
    assert len(said) == 2 * max(1, len(proposal.request.plan))
    assert sender_done(said[-2].partition(": ")[2])
    sent, answer = extract(said, "agent_a", proposal.request.target, prior.vocab)
    assert sent == proposal
    assert answer == Proposal(proposal.request.plan, ())


@settings(max_examples=300, deadline=None)
@given(turns=st.lists(st.text(max_size=120), min_size=1, max_size=4))
def test_any_dialogue_is_extracted_or_refused_as_a_parse_failure(prior: Prior, turns: list[str]) -> None:
    said = [Turn("agent_a" if i % 2 == 0 else "agent_b", text).line() for i, text in enumerate(turns)]
    try:
        extract(said, "agent_a", "agent_b", prior.vocab)
    except ParseError as error:
        assert error.code == FailureCode.PARSE_FAILURE.value


def test_dialogue_rows_match_the_paper_inventory(prior: Prior, suites: SuiteDocument) -> None:
    rows = build_rows(paper_pool("training"), prior, suites, ModelSpec(surface=SurfaceName.FREEFORM))
    assert Counter(row.stage for row in rows) == {"dialogue_sender": 1200, "dialogue_receiver": 1200}
    later = [row for row in rows if "said " in row.prompt]
    assert later and all(row.prompt.index("said ") < row.prompt.index(">>>") for row in later)
    with pytest.raises(ConfigError):
        ModelSpec(target=Target.FACTOR, surface=SurfaceName.FREEFORM)


def test_free_form_episodes_succeed_and_count_every_turn_on_the_wire(prior: Prior, suites: SuiteDocument) -> None:
    spoken = surface(SurfaceName.DSL, prior.vocab)
    for cluster in paper_pool("timing")[:16]:
        dsl = run_episode(build_episode(cluster, 0, 0, prior, suites, SurfaceName.DSL))
        free = run_episode(build_episode(cluster, 0, 0, prior, suites, SurfaceName.FREEFORM))
        assert free.outcome.success and dsl.outcome.success
        assert isinstance(free.protocol, Success) and isinstance(dsl.protocol, Success)
        assert free.protocol.commitment == dsl.protocol.commitment
        messages = free.protocol.trace.wire.messages
        assert {m.kind for m in messages} == {"SAY"}
        assert free.protocol.trace.wire.total_bytes == sum(len(m.payload.encode()) for m in messages)
        request = dsl.protocol.commitment.paths
        assert free.protocol.trace.wire.total_bytes > len(spoken.serialize(Proposal(request[1].tasks, ())))
        assert len(free.protocol.trace.generations) == len(messages)


def test_a_request_of_two_steps_takes_two_rounds(prior: Prior, suites: SuiteDocument) -> None:
    cluster = next(c for c in paper_pool("timing") if c.binding == "CRAFTING_TABLE")
    result = run_episode(build_episode(cluster, 1, 0, prior, suites, SurfaceName.FREEFORM))
    stages = [generation.stage for generation in result.protocol.trace.generations]
    assert stages == ["dialogue_sender", "dialogue_receiver"] * 2 and result.outcome.success


def test_a_sender_that_never_finishes_forms_no_commitment(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites, SurfaceName.FREEFORM)
    proposal = composed(prior, spec.binding or "", spec.sender, spec.receiver, spec.params)
    opening = scripted(proposal, spec.sender)[0].partition(": ")[2].replace("That is everything.", "More later.")
    realizer = RequestRealizer(prior)

    def generate(request: GenerationRequest) -> Reply:
        if request.stage is Stage.DIALOGUE_SENDER:
            return Reply(opening, model_calls=1)
        return realizer.generate(spec.contexts[request.agent], request)

    result = run_dialogue(generate, spec.sender, spec.receiver, prior, spec.public, max_rounds=3)
    assert isinstance(result, Fail) and result.error.reason == "DIALOGUE_UNFINISHED"
    assert len(result.trace.wire.messages) == 6


def test_a_garbled_turn_is_a_parse_failure_not_a_crash(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites, SurfaceName.FREEFORM)
    sender, realizer = RuleSender(prior), RequestRealizer(prior)

    def generate(request: GenerationRequest) -> Reply:
        if request.stage is Stage.DIALOGUE_SENDER:
            reply = sender.generate(spec.contexts[request.agent], request)
            return Reply(reply.text.replace("please deliver", "please teleport"), model_calls=1)
        return realizer.generate(spec.contexts[request.agent], request)

    result = run_dialogue(generate, spec.sender, spec.receiver, prior, spec.public)
    assert isinstance(result, Fail) and result.code is FailureCode.PARSE_FAILURE


def test_free_form_refuses_conditions_and_faults_it_cannot_carry(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites, SurfaceName.FREEFORM)
    with pytest.raises(ConfigError, match="request condition"):
        coordinate(spec, Condition.NO_REQUEST)
    with pytest.raises(ConfigError, match="rewrites a record"):
        coordinate(spec, fault=Fault.MALFORMED_PROPOSAL)
    with pytest.raises(ConfigError, match="dialogue"):
        surface(SurfaceName.FREEFORM, prior.vocab)
    with pytest.raises(ConfigError, match="request condition"):
        parse_experiment('name = "x"\npool = "timing"\nconditions = ["no_request"]\nsurfaces = ["freeform"]\n')


@pytest.mark.parametrize("phrase", ["obtain ² oak_planks", "obtain ٣ oak_planks"])
def test_a_quantity_in_digits_other_than_ascii_is_not_heard(prior: Prior, phrase: str) -> None:
    """'²' passes str.isdigit() but not int(); '٣' passes both: neither is how the convention writes a count."""
    with pytest.raises(ParseError) as refused:
        hear_task(phrase, prior.vocab)
    assert refused.value.code == FailureCode.PARSE_FAILURE.value and refused.value.reason == "EXTRACTION_FAILURE"
