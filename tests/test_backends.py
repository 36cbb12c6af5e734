"""Backend conformance: the shipped checks (gencoord.backends.conformance) on every kind of backend we ship.

A backend joins by adding an entry to BACKENDS: a factory, the stages it serves, and what
it is held to (legal records, determinism, model calls per answer). Rules, the committed
tiny models (direct, factor, grammar-constrained), the API backend against a local
OpenAI-compatible stub and a description selector all pass the same checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gencoord.backends import (
    Backend,
    BindingComposer,
    BranchGuesser,
    DirectoryLookup,
    RequestRealizer,
    RuleRequester,
    RuleSender,
)
from gencoord.backends.api import ApiBackend
from gencoord.backends.conformance import backend_violations, check_backend, probes
from gencoord.backends.local import LocalModelBackend
from gencoord.backends.registry import backend_set
from gencoord.backends.selectors import SelectorSender, fitted
from gencoord.errors import ConfigError, ConformanceError
from gencoord.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.tasks import SuiteDocument
from gencoord.tasks.context import LocalContext
from tests.chat_stub import ComposerApi, serving

CHECKPOINTS = Path(__file__).parents[1] / "experiments" / "checkpoints"
SENDER, RECEIVER = Stage.SENDER_INITIAL, Stage.RECEIVER_AFTER_REQUEST


@dataclass(frozen=True)
class Kind:
    make: Callable[[Prior, SuiteDocument, str], Backend]  # (prior, suites, API url) → backend
    stages: tuple[Stage, ...]
    model_calls: int
    settings: dict[str, object] = field(default_factory=dict)


BACKENDS: dict[str, Kind] = {
    "rule-sender": Kind(lambda prior, _s, _u: RuleSender(prior), (SENDER,), 0),
    "request-realizer": Kind(lambda prior, _s, _u: RequestRealizer(prior), (RECEIVER,), 0),
    "directory-lookup": Kind(lambda prior, _s, _u: DirectoryLookup(prior), (RECEIVER,), 0),
    "branch-guesser": Kind(lambda prior, _s, _u: BranchGuesser(prior, seed=3), (Stage.RECEIVER_WITHOUT_REQUEST,), 0),
    "rule-requester": Kind(
        lambda prior, suites, _u: RuleRequester(prior, suites),
        (Stage.REQUESTER_INITIAL, Stage.REQUESTER_AFTER_RESPONSE),
        0,
    ),
    "tiny-direct": Kind(
        lambda prior, _s, _u: LocalModelBackend(CHECKPOINTS / "tiny-dsl", prior), (SENDER, RECEIVER), 1
    ),
    "tiny-factor": Kind(
        lambda prior, _s, _u: LocalModelBackend(CHECKPOINTS / "tiny-factor", prior), (SENDER, RECEIVER), 1
    ),
    "tiny-constrained": Kind(
        lambda prior, _s, _u: LocalModelBackend(CHECKPOINTS / "tiny-dsl", prior, constrained=True), (SENDER,), 1
    ),
    # the stub answers like a perfect model; what is checked is the backend: its prompt, parsing and counts
    "selector": Kind(
        lambda prior, _s, _u: SelectorSender(fitted("tfidf-logistic"), prior), (SENDER,), 0, {"described": "C1"}
    ),
    "api": Kind(lambda prior, _s, url: ApiBackend(url, "stub", prior, backoff_s=0.01), (SENDER, RECEIVER), 1),
}


@pytest.fixture(scope="module")
def api_url() -> Iterator[str]:
    ComposerApi.failures_left = 0
    with serving(ComposerApi) as url:
        yield url


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_conforms(name: str, prior: Prior, suites: SuiteDocument, api_url: str) -> None:
    kind = BACKENDS[name]
    backend = kind.make(prior, suites, api_url)
    found = backend_violations(
        backend, kind.stages, prior=prior, suites=suites, model_calls=kind.model_calls, **kind.settings
    )  # type: ignore[arg-type]
    assert found == []


class _Sloppy:
    """A broken backend: it counts no model call it makes, and answers a receiver with a request of its own."""

    name = "sloppy"

    def __init__(self, prior: Prior) -> None:
        self.inner = RuleSender(prior)

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return Reply(self.inner.generate(context, request).text.replace("SELF ", "SELF  "), model_calls=-1)


class _Garbling:
    name = "garbling"

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return Reply("SELF craft.item(q=1\nREQ", model_calls=1, latency_s=0.01)


def test_broken_backends_are_caught_and_named(prior: Prior, suites: SuiteDocument) -> None:
    sloppy = backend_violations(_Sloppy(prior), (SENDER,), prior=prior, suites=suites, limit=2)
    assert sloppy and all("model_calls must be a count" in problem for problem in sloppy)
    garbled = backend_violations(_Garbling(), (SENDER,), prior=prior, suites=suites, limit=2)
    assert garbled and all("PARSE_FAILURE" in problem for problem in garbled)
    assert backend_violations(_Garbling(), (SENDER,), prior=prior, suites=suites, limit=2, valid=False) == []
    with pytest.raises(ConformanceError) as caught:
        check_backend(_Garbling(), (SENDER,), prior=prior, suites=suites, limit=2)
    assert caught.value.reason == "BACKEND" and "2 problem(s)" in caught.value.message


def test_probes_give_each_agent_only_its_own_context(prior: Prior, suites: SuiteDocument) -> None:
    for stage in (SENDER, RECEIVER):
        for probe in probes(stage, prior, suites, limit=4):
            assert probe.context is probe.spec.contexts[probe.request.agent]
            assert probe.context.agent == probe.request.agent != probe.request.peer


def test_rule_sender_composes_the_private_binding(prior: Prior, suites: SuiteDocument) -> None:
    for probe in probes(SENDER, prior, suites, limit=None):
        assert f"bind={probe.spec.binding}" in RuleSender(prior).generate(probe.context, probe.request).text


def test_request_realizer_adopts_the_delivered_path(prior: Prior, suites: SuiteDocument) -> None:
    probe = probes(RECEIVER, prior, suites, limit=1)[0]
    reply = RequestRealizer(prior).generate(probe.context, probe.request)
    assert probe.request.delivered_request is not None
    assert reply.text == "SELF " + probe.request.delivered_request.split(" ", 2)[2] + "\nREQ -"


def test_directory_lookup_reads_the_code_and_not_the_path(prior: Prior, suites: SuiteDocument) -> None:
    """On every canonical request it answers as the realizer does; on a request whose path strays from its code's
    stored path it answers with the stored path; a request without a known code gets an empty answer."""
    lookup, realizer = DirectoryLookup(prior), RequestRealizer(prior)
    for probe in probes(RECEIVER, prior, suites, limit=None):
        assert lookup.generate(probe.context, probe.request) == realizer.generate(probe.context, probe.request)
    probe = next(p for p in probes(RECEIVER, prior, suites, limit=None) if "site=site_a" in str(p.request))
    delivered = probe.request.delivered_request
    assert delivered is not None
    strayed = GenerationRequest(
        probe.request.agent,
        RECEIVER,
        probe.request.peer,
        delivered_request=delivered.replace("site=site_a", "site=site_b"),
    )
    assert "site=site_a" in lookup.generate(probe.context, strayed).text
    assert "site=site_b" in realizer.generate(probe.context, strayed).text
    unknown = GenerationRequest(
        probe.request.agent,
        RECEIVER,
        probe.request.peer,
        delivered_request=delivered.replace("bind=SITE_A", "bind=NOPE"),
    )
    assert lookup.generate(probe.context, unknown).text == ""


@pytest.mark.parametrize(("suffix", "receiver"), [("+realizer", RequestRealizer), ("+directory", DirectoryLookup)])
def test_a_named_deterministic_receiver_replaces_the_sets_own(
    prior: Prior, suites: SuiteDocument, suffix: str, receiver: type
) -> None:
    probe = probes(RECEIVER, prior, suites, limit=1)[0]
    team = backend_set("rule" + suffix)(probe.spec, False, prior, suites)
    assert isinstance(team[probe.spec.receiver], receiver) and isinstance(team[probe.spec.sender], RuleSender)
    with pytest.raises(ConfigError):
        backend_set("rule+nobody")


def test_branch_guesser_splits_evenly_over_branches(prior: Prior, suites: SuiteDocument) -> None:
    probe = probes(Stage.RECEIVER_WITHOUT_REQUEST, prior, suites, limit=1)[0]
    chosen = {BranchGuesser(prior, seed).generate(probe.context, probe.request).text for seed in range(40)}
    assert len(chosen) == len(probe.context.branches) == 2


def test_binding_composer_is_the_factor_backbone(prior: Prior, suites: SuiteDocument) -> None:
    probe = probes(SENDER, prior, suites, limit=1)[0]
    other = next(b for b in probe.context.branches if b != probe.spec.binding)
    text = BindingComposer(prior, lambda _context: other).generate(probe.context, probe.request).text
    assert f"bind={other}" in text
    with pytest.raises(ConfigError) as caught:
        BindingComposer(prior, lambda _context: "NOT_A_CODE").generate(probe.context, probe.request)
    assert caught.value.reason == "UNKNOWN_BINDING"


def test_a_rule_without_its_private_field_says_which(prior: Prior, suites: SuiteDocument) -> None:
    probe = probes(SENDER, prior, suites, limit=1)[0]
    spec = probe.spec
    with pytest.raises(ConfigError) as caught:
        RuleSender(prior).generate(spec.contexts[spec.receiver], GenerationRequest(spec.receiver, SENDER, spec.sender))
    assert caught.value.reason == "CONTEXT_LACKS_FIELD" and "binding" in caught.value.message
    with pytest.raises(ConfigError) as missing:
        RequestRealizer(prior).generate(
            spec.contexts[spec.receiver], GenerationRequest(spec.receiver, RECEIVER, spec.sender)
        )
    assert missing.value.reason == "NO_REQUEST"
