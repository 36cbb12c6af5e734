"""The three-tier escalation gate: heuristic rules, the cost score, the gray-zone adjudicator.

Every decision is made from a structured :class:`Features` record computed from the
task DAG and the agent's own world model, never from free text. The adjudicator is a
pluggable binary classifier that sees only that record as JSON: a model backend when
one is configured, the fitted logistic fallback otherwise.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Protocol

from gencoord.gate.config import GateConfig


class Decision(StrEnum):
    LOCAL = "local"
    ESCALATE = "escalate"


class Tier(StrEnum):
    RULE = "rule"
    SCORE = "score"
    ADJUDICATOR = "adjudicator"
    FALLBACK = "fallback"  # the gray zone, where a model adjudicator answered neither word: the logistic model decided
    FIXED = "fixed"  # a condition that does not gate (always / never escalate)


class GateCondition(StrEnum):
    COMMUNICATION_FIRST = "communication_first"  # escalate on every issue
    NEVER = "never"  # never escalate
    RULES = "rules"  # heuristic rules; anything else stays local
    RULES_SCORE = "rules_score"  # rules, then the score; the gray zone stays local
    FULL = "full"  # rules, score, adjudicator in the gray zone
    FULL_NO_PARTITION = "full_no_partition"  # the full gate without the private/public partition


@dataclass(frozen=True, slots=True)
class Features:
    """The gate's inputs, all in [0, 1] except the raw cost, from DAG and world model."""

    C: float  # criticality: the node is needed for the goal
    R: float  # coordination advantage: a peer is believed able to supply
    I: float  # noqa: E741  (downstream impact: share of the job's nodes that wait on this one)
    L: float  # local recoverability: 1 − local plan cost / remaining slack (0: no known route)
    H: float  # history penalty: failed requests for this item so far, squashed
    cost: int | None  # local plan cost in executor actions (None: no route known)
    cost_share: float  # that cost over the rounds left
    budget_left: float  # share of the round budget still unused

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


class Adjudicator(Protocol):
    """A binary classifier for the gray zone: structured features in, escalate or not out (None: no usable
    answer, and the logistic model decides; the record says which did)."""

    name: str

    def escalate(self, features: Features) -> bool | None: ...


class LogisticAdjudicator:
    """The deterministic fallback: a logistic model fitted on the training split."""

    name = "logistic"

    def __init__(self, config: GateConfig) -> None:
        self.spec = config.adjudicator

    def probability(self, features: Features) -> float:
        values = asdict(features)
        z = self.spec.bias + sum(
            w * float(values[name] or 0.0) for name, w in zip(self.spec.features, self.spec.weights, strict=True)
        )
        return 1 / (1 + math.exp(-z))

    def escalate(self, features: Features) -> bool:
        return self.probability(features) >= 0.5


class ModelAdjudicator:
    """Any model behind a text function: it gets the features as JSON and must answer ESCALATE or LOCAL.

    Anything else (a malformed or hedging answer) is no answer: :func:`decide` then asks the logistic
    model and records the decision as the fallback's, so a model can only ever choose between the two
    decisions, and a table can tell its choices from the fallback's.
    """

    def __init__(self, ask: Callable[[str], str], name: str = "model") -> None:
        self.ask = ask
        self.name = name
        # greedy decoding answers the same prompt the same way, and a model takes seconds a call: the oracle's
        # rollouts replay an episode's gray zone over and over. Each prompt keeps its answer and its first call's time
        self.answers: dict[str, tuple[bool | None, float]] = {}

    def escalate(self, features: Features) -> bool | None:
        return self.judged(features)[0]

    def judged(self, features: Features) -> tuple[bool | None, float]:
        """The model's answer (None: neither word) and how long the model took to give it the first time."""
        prompt = (
            "Decide whether an agent should escalate a local issue to a peer. Answer with exactly one word, "
            f"ESCALATE or LOCAL.\nfeatures: {features.as_json()}"
        )
        if prompt not in self.answers:
            started = time.perf_counter()
            answer = self.ask(prompt).strip().upper()
            verdict = answer == "ESCALATE" if answer in ("ESCALATE", "LOCAL") else None
            self.answers[prompt] = (verdict, time.perf_counter() - started)
        return self.answers[prompt]


def score(features: Features, config: GateConfig) -> float:
    w = config.weights
    return w.bias + w.C * features.C + w.R * features.R + w.I * features.I - w.L * features.L - w.H * features.H


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    tier: Tier
    score: float | None = None
    thought_s: float | None = None  # how long a model adjudicator took (the gray zone only)


def rules(features: Features, quick_cost: int) -> Decision | None:
    """Tier 1: the obvious cases, or None to go on scoring."""
    if features.cost is not None and features.cost <= quick_cost:
        return Decision.LOCAL  # recoverable right away
    if features.C == 0:
        return Decision.LOCAL  # a node the goal does not need: recover it or skip it, never interrupt a peer
    if features.R == 0:
        return Decision.LOCAL  # nobody to ask: escalating cannot help
    if features.cost is None and features.C == 1 and features.H == 0:
        return Decision.ESCALATE  # critical path blocked, no local route, a peer believed able
    return None


def decide(condition: GateCondition, features: Features, config: GateConfig, adjudicator: Adjudicator) -> Verdict:
    if condition is GateCondition.COMMUNICATION_FIRST:
        return Verdict(Decision.ESCALATE, Tier.FIXED)
    if condition is GateCondition.NEVER:
        return Verdict(Decision.LOCAL, Tier.FIXED)
    obvious = rules(features, config.quick_cost)
    if obvious is not None:
        return Verdict(obvious, Tier.RULE)
    if condition is GateCondition.RULES:
        return Verdict(Decision.LOCAL, Tier.RULE)  # the default bias: stay local
    value = score(features, config)
    if value <= config.thresholds.low:
        return Verdict(Decision.LOCAL, Tier.SCORE, value)
    if value >= config.thresholds.high:
        return Verdict(Decision.ESCALATE, Tier.SCORE, value)
    if condition is GateCondition.RULES_SCORE:
        return Verdict(Decision.LOCAL, Tier.SCORE, value)
    # a model's thinking time; the logistic model's microseconds stay out of the records, which repeat exactly
    thought_s: float | None = None
    if isinstance(adjudicator, ModelAdjudicator):
        answer, thought_s = adjudicator.judged(features)
    else:
        answer = adjudicator.escalate(features)
    tier = Tier.ADJUDICATOR if answer is not None else Tier.FALLBACK
    escalate = answer if answer is not None else LogisticAdjudicator(config).escalate(features)
    return Verdict(Decision.ESCALATE if escalate else Decision.LOCAL, tier, value, thought_s)
