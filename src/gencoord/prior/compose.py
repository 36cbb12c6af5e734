"""The composer: expand a binding code through the shared task structure.

Given a template, one of its bindings, and who plays sender and receiver, it fills the
binding's two role-local paths and returns the canonical proposal. The zero-call rule
sender and the factor-code backends reuse it; the prior uses it to validate itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from gencoord.dsl.ast import Proposal
from gencoord.errors import ContractError, Location
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason


def compose(
    prior: Prior,
    template: str,
    binding: str,
    *,
    sender: str,
    receiver: str,
    params: Mapping[str, int] | None = None,
) -> Proposal:
    spec = prior.templates.get(template)
    if spec is None or binding not in spec.bindings:
        raise ContractError(
            Reason.INADMISSIBLE_BINDING,
            f"{binding!r} is not a binding of template {template!r}",
            Location(section="bind"),
        )
    paths = spec.bindings[binding]
    return compose_paths(
        prior, template, (paths.sender, paths.receiver), sender=sender, receiver=receiver, params=params
    )


def compose_paths(
    prior: Prior,
    template: str,
    paths: tuple[str, str],
    *,
    sender: str,
    receiver: str,
    params: Mapping[str, int] | None = None,
) -> Proposal:
    """The proposal of two role-path patterns (a binding's, or as a reader recovered them from a view)."""
    values = {**prior.templates[template].params, **(params or {}), "sender": sender, "receiver": receiver}
    try:
        text = f"SELF {paths[0].format(**values)}\nREQ {receiver} {paths[1].format(**values)}"
    except KeyError as exc:
        raise ContractError(Reason.MISSING_PARAMETER, f"{template}: no value for parameter {exc.args[0]!r}") from None
    return prior.parse(text)
