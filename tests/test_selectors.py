"""Selectors from natural-language private facts to binding codes (Table S16 / v2 S36 conditions)."""

from __future__ import annotations

from typing import Any

import pytest

from gencoord.backends.registry import backend_set
from gencoord.backends.selectors import (
    EmbeddingRetrieval,
    MarginAbstain,
    MarginUpgrade,
    Selection,
    TfidfLogistic,
    TfidfNearest,
    evaluate,
    fitted,
    selector_named,
)
from gencoord.errors import ConfigError
from gencoord.prior import Prior
from gencoord.run.episode import run_episode
from gencoord.tasks import SuiteDocument, build_episode, paper_pool
from gencoord.tasks.descriptions import descriptions
from gencoord.tasks.suites import default_suites
from tests.chat_stub import ChatHandler, completion, serving


def test_descriptions_keep_evaluation_phrasing_out_of_training(prior: Prior) -> None:
    rows = descriptions()
    train = {row.text for row in rows if row.condition == "train"}
    library = default_suites().forward.library  # the visibility pool's own templates are never described
    assert {row.binding for row in rows} == {b for t in library for b in prior.templates[t].bindings}
    for condition in ("C1", "C2", "C3"):
        held = [row for row in rows if row.condition == condition]
        assert held and not train & {row.text for row in held}


@pytest.mark.parametrize("make", [TfidfNearest, TfidfLogistic])
def test_lexical_selectors_recover_recombined_phrasing(make: type) -> None:
    scores = {score.condition: score for score in evaluate(make())}
    assert scores["C1"].accuracy == 1.0  # seen facts, unseen openers
    assert scores["C2"].accuracy < scores["C1"].accuracy  # unseen paraphrases are harder: reported, not hidden


def test_embedding_retrieval_generalizes_past_the_words() -> None:
    embedding = {score.condition: score.accuracy for score in evaluate(EmbeddingRetrieval())}
    lexical = {score.condition: score.accuracy for score in evaluate(TfidfNearest())}
    assert embedding["C1"] == 1.0 and embedding["C2"] > lexical["C2"]


class _Fixed:
    def __init__(self, name: str, selection: Selection) -> None:
        self.name, self.selection, self.calls = name, selection, 0

    def fit(self, texts: object, labels: object) -> None:
        return

    def select(self, text: str) -> Selection:
        self.calls += 1
        return self.selection


def test_margin_upgrade_and_abstention_act_only_below_the_margin() -> None:
    unsure, sure = _Fixed("unsure", Selection("SITE_A", 0.05)), _Fixed("sure", Selection("SITE_B", 0.9, model_calls=1))
    upgrade = MarginUpgrade(unsure, sure, margin=0.1)
    assert upgrade.select("x") == Selection("SITE_B", 0.9, model_calls=1) and upgrade.upgraded == 1
    assert MarginUpgrade(sure, unsure, margin=0.1).select("x").binding == "SITE_B"
    assert MarginAbstain(unsure, margin=0.1).select("x").binding is None
    assert MarginAbstain(sure, margin=0.1).select("x").binding == "SITE_B"


def test_a_described_fact_reaches_a_commitment_through_a_selector(prior: Prior, suites: SuiteDocument) -> None:
    cluster = paper_pool("request_intervention")[0]
    spec = build_episode(cluster, 0, 0, prior, suites, described="C1")
    sender = spec.contexts[spec.sender]
    assert set(sender.private) == {"description"} and "binding:" not in sender.render()  # the code itself is gone
    result = run_episode(spec, backends=backend_set("selector:tfidf-logistic")(spec, False, prior, suites))
    assert result.outcome.success and result.protocol.trace.calls == 0
    abstaining = backend_set("selector:abstain")(spec, False, prior, suites)
    assert abstaining[spec.sender].name.startswith("selector:tfidf-logistic+abstain")
    with pytest.raises(ConfigError):
        backend_set("selector:nope")(spec, False, prior, suites)


class _Reader(ChatHandler):
    """Answers like a model that understood the description (it looks the description up); 'garbled' answers
    off the list for every third question."""

    garbled = False
    asked = 0

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = body["messages"][-1]["content"]
        text = prompt.rsplit("Description: ", 1)[1]
        code = next(row.binding for row in descriptions() if row.text == text)
        _Reader.asked += 1
        if _Reader.garbled and _Reader.asked % 3 == 0:
            code = "I am not sure"
        return 200, completion(body["model"], f"{code}.", len(prompt) // 4, 3)


def test_an_api_selector_names_codes_abstains_on_other_answers_and_takes_the_upgrade(
    prior: Prior, suites: SuiteDocument
) -> None:
    held = [row for row in descriptions() if row.condition == "C2"]
    with serving(_Reader) as url:
        _Reader.garbled, _Reader.asked = False, 0
        api = fitted(f"api:{url}#reader")
        picks = [api.select(row.text) for row in held]
        assert [p.binding for p in picks] == [row.binding for row in held] and all(p.model_calls == 1 for p in picks)
        assert "Description: " in api.prompt("x") and all(code in api.prompt("x") for code in {r.binding for r in held})
        _Reader.garbled, _Reader.asked = True, 0
        fresh = selector_named(f"api:{url}#reader")
        train = [row for row in descriptions() if row.condition == "train"]
        fresh.fit([row.text for row in train], [row.binding for row in train])
        answers = [fresh.select(row.text).binding for row in held[:6]]
        assert answers.count(None) == 2 and all(a in (None, r.binding) for a, r in zip(answers, held, strict=False))
        _Reader.garbled = False
        upgrade, cheap = fitted(f"upgrade-api:{url}#reader"), fitted("tfidf-nearest")
        chosen = [upgrade.select(row.text) for row in held]
        for choice, row in zip(chosen, held, strict=True):  # the API's answers are right; the rest are the cheap one's
            assert choice.binding == (row.binding if choice.model_calls else cheap.select(row.text).binding)
        assert 0 < sum(c.model_calls for c in chosen) < len(held)  # only the low-margin ones reached the API
    with pytest.raises(ConfigError):
        fitted("api:no-model-named")
