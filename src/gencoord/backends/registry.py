"""Backend sets by name: what an experiment config's ``backends = [...]`` refers to.

A set maps an episode to one backend per agent. ``rule`` is the deterministic team
(zero model calls); learned and API sets register here under their own names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gencoord.backends.base import Backend
from gencoord.backends.rule import BranchGuesser, RequestRealizer, RuleRequester, RuleSender
from gencoord.errors import ConfigError
from gencoord.prior.prior import Prior
from gencoord.tasks.episode import EpisodeSpec
from gencoord.tasks.spec import SuiteDocument

BackendSet = Callable[[EpisodeSpec, bool, Prior, SuiteDocument], Mapping[str, Backend]]
"""(episode, request withheld?, prior, suites) → backend per agent."""


def rule_set(spec: EpisodeSpec, withheld: bool, prior: Prior, suites: SuiteDocument) -> dict[str, Backend]:
    """The deterministic team: rule sender or requester, request realizer or branch guesser."""
    if spec.feedback:
        return {spec.sender: RuleRequester(prior, suites), spec.receiver: RequestRealizer(prior)}
    receiver: Backend = BranchGuesser(prior, spec.seed) if withheld else RequestRealizer(prior)
    return {spec.sender: RuleSender(prior), spec.receiver: receiver}


BACKEND_SETS: dict[str, BackendSet] = {"rule": rule_set}


def backend_set(name: str) -> BackendSet:
    found = BACKEND_SETS.get(name)
    if found is None:
        raise ConfigError("UNKNOWN_BACKEND", f"unknown backend set {name!r}; known: {', '.join(sorted(BACKEND_SETS))}")
    return found
