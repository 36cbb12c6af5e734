"""The public branch set B_K: which binding a path pair realizes, and its alternatives.

A branch is identified by its *signature*: the skills and non-quantity arguments of
both role-local paths, with agent ids replaced by role names. That lets the resolver
name the selected binding of a commitment that carries no ``bind`` argument (the
Goal×Capability records do not), and lets the response policy find which counter
offers apply to a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from gencoord.dsl.ast import Path, Proposal, Task
from gencoord.errors import ContractError, Location
from gencoord.prior.compose import compose
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason

SENDER, RECEIVER = "sender", "receiver"
_UNSIGNED = frozenset({"q", "bind"})
_SENTINEL = 10**12  # a quantity no template writes literally, used to read parameters back

Signature = tuple[tuple[str, tuple[tuple[str, object], ...]], ...]


def path_signature(path: Path, roles: Mapping[str, str]) -> Signature:
    return tuple(
        (
            task.skill,
            tuple((k, roles.get(v, v) if isinstance(v, str) else v) for k, v in task.args if k not in _UNSIGNED),
        )
        for task in path
    )


class BranchIndex:
    """Signatures of every template binding, built once per prior."""

    def __init__(self, prior: Prior) -> None:
        self.prior = prior
        self.full: dict[tuple[Signature, Signature], set[str]] = {}
        self.request: dict[Signature, set[str]] = {}
        sender, receiver = prior.default_episode.agents[:2]
        roles = {sender: SENDER, receiver: RECEIVER}
        for template, spec in prior.templates.items():
            for binding in spec.bindings:
                proposal = compose(prior, template, binding, sender=sender, receiver=receiver)
                plan = proposal.peer_requests[0].plan
                mine, theirs = path_signature(proposal.self_plan, roles), path_signature(plan, roles)
                self.full.setdefault((mine, theirs), set()).add(binding)
                self.request.setdefault(theirs, set()).add(binding)

    def bindings_of(self, self_plan: Path, plan: Path, sender: str, receiver: str) -> set[str]:
        roles = {sender: SENDER, receiver: RECEIVER}
        return self.full.get((path_signature(self_plan, roles), path_signature(plan, roles)), set())

    def bindings_of_request(self, plan: Path, sender: str | None, receiver: str) -> set[str]:
        roles = {receiver: RECEIVER} if sender is None else {sender: SENDER, receiver: RECEIVER}
        return self.request.get(path_signature(plan, roles), set())


@cache
def branch_index(prior: Prior) -> BranchIndex:
    return BranchIndex(prior)


def _values(tasks: Path) -> list[object]:
    return [value for task in tasks for _, value in task.args]


def read_parameters(proposal: Proposal, binding: str, sender: str, receiver: str, prior: Prior) -> dict[str, int]:
    """The template parameters that make ``binding`` spell out ``proposal`` (unification by sentinels)."""
    template = prior.codebook[binding]
    names = list(prior.templates[template].params)
    probes = {name: _SENTINEL + i for i, name in enumerate(names)}
    pattern = compose(prior, template, binding, sender=sender, receiver=receiver, params=probes)
    found: dict[str, int] = {}
    pattern_tasks: tuple[Task, ...] = pattern.self_plan + pattern.peer_requests[0].plan
    actual_tasks: tuple[Task, ...] = proposal.self_plan + (proposal.request.plan if proposal.request else ())
    if len(pattern_tasks) != len(actual_tasks):
        raise ContractError(
            Reason.BRANCH_MISMATCH, f"the proposal is not a realization of binding {binding!r}", Location()
        )
    for probe, value in zip(_values(pattern_tasks), _values(actual_tasks), strict=False):
        if isinstance(probe, int) and probe >= _SENTINEL and isinstance(value, int):
            found.setdefault(names[probe - _SENTINEL], value)
    return found


def realize_alternative(
    initial: Proposal, source: str, target: str, requester: str, peer: str, prior: Prior
) -> Proposal:
    """AltBranch: the proposal that realizes binding ``target`` with ``initial``'s goal parameters."""
    params = read_parameters(initial, source, requester, peer, prior)
    return compose(prior, prior.codebook[target], target, sender=requester, receiver=peer, params=params)
