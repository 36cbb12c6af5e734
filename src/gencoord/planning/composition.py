"""The composition reference's methods (v1 S15 / v2 Table S25): case lookup, field-wise construction, a model.

Each turns a cross-product's factors into the receiver's path. The complete-case table
holds the task library's bindings as whole cases and can only return one it has seen; the
explicit-factor composer builds the path field by field (the transform's craft step, then
the terminal's step), so it reaches combinations no binding spells out. Direct Short DSL is
a trained model that reads the sender's factors and writes the whole SELF+REQ record; it
learns from the library's complete cases (:func:`library_proposal`) and is run by
``gencoord.run.composition``, which holds the backend.
"""

from __future__ import annotations

from enum import StrEnum

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.errors import ResolutionError
from gencoord.prior.compose import compose
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.cross_products import HOLD, CompositionCase, observed_cases
from gencoord.tasks.suites import SuiteDocument


class CompositionMethod(StrEnum):
    COMPLETE_CASE_TABLE = "complete_case_table"
    EXPLICIT_FACTOR_COMPOSER = "explicit_factor_composer"
    DIRECT_SHORT_DSL = "direct_short_dsl"


def composed_path(case: CompositionCase, prior: Prior) -> Path:
    """Field-wise: craft the transform from the material (if any), then the terminal's step."""
    factors = case.factors
    item = factors.transform or factors.material
    steps = []
    if factors.transform is not None:
        steps.append(f"craft.item(q={case.count},input={factors.material},item={factors.transform})")
    kind = prior.default_episode.ref_kind(factors.terminal)
    if kind == "container":
        steps.append(f"resource.deliver(q={case.count},dst={factors.terminal},item={item})")
    elif kind == "site":
        steps.append(f"build.component(q={case.count},item={item},site={factors.terminal})")
    elif factors.terminal != HOLD:
        raise ResolutionError(Reason.UNKNOWN_TERMINAL, f"{factors.terminal} is neither a container, a site nor {HOLD}")
    return prior.parse_path(" > ".join(steps))


def looked_up_path(case: CompositionCase, prior: Prior, suites: SuiteDocument) -> Path:
    """The stored whole case with these factors, or ``NO_CASE``: the table has no field-wise fallback."""
    found = observed_cases(prior, suites).get(case.factors)
    if found is None:
        raise ResolutionError(Reason.NO_CASE, f"the complete-case table holds no case {case.factors.name}")
    template, binding = found
    spec = case.spec
    params = {key: case.count for key in prior.templates[template].params}
    proposal = compose(prior, template, binding, sender=spec.sender, receiver=spec.receiver, params=params)
    assert proposal.request is not None  # observed cases come from bindings with a receiver part
    return proposal.request.plan


def receiver_path(method: CompositionMethod, case: CompositionCase, prior: Prior, suites: SuiteDocument) -> Path:
    """The path a rule method gives the receiver; Direct Short DSL writes its own (a model, not a rule)."""
    if method is CompositionMethod.COMPLETE_CASE_TABLE:
        return looked_up_path(case, prior, suites)
    if method is CompositionMethod.EXPLICIT_FACTOR_COMPOSER:
        return composed_path(case, prior)
    raise ValueError(f"{method.value} is a trained model: its path comes from its backend")


def rule_proposal(method: CompositionMethod, case: CompositionCase, prior: Prior, suites: SuiteDocument) -> Proposal:
    """A rule method's whole record: the sender's hand-over, and the receiver path the method gives."""
    request = PeerRequest(case.spec.receiver, receiver_path(method, case, prior, suites))
    return Proposal(sender_path(case, prior).self_plan, (request,))


def library_proposal(case: CompositionCase, prior: Prior, suites: SuiteDocument) -> Proposal:
    """The record a Direct model learns for an observed case: the complete-case table's, without the
    binding code (a factor-form context names no binding)."""
    looked_up = rule_proposal(CompositionMethod.COMPLETE_CASE_TABLE, case, prior, suites)
    request = looked_up.peer_requests[0]
    unbound = tuple(Task(task.skill, tuple(arg for arg in task.args if arg[0] != "bind")) for task in request.plan)
    return Proposal(looked_up.self_plan, (PeerRequest(request.target, unbound),))


def sender_path(case: CompositionCase, prior: Prior) -> Proposal:
    """The sender's SELF: obtain the material the case needs and hand it to the receiver."""
    spec, material = case.spec, case.factors.material
    text = (
        f"resource.obtain(q={case.handed},item={material}) > "
        f"resource.deliver(q={case.handed},item={material},to={spec.receiver})"
    )
    return Proposal(prior.parse_path(text), ())
