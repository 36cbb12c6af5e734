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
            "INADMISSIBLE_BINDING", f"{binding!r} is not a binding of template {template!r}", Location(section="bind")
        )
    values = {**spec.params, **(params or {}), "sender": sender, "receiver": receiver}
    paths = spec.bindings[binding]
    try:
        text = f"SELF {paths.sender.format(**values)}\nREQ {receiver} {paths.receiver.format(**values)}"
    except KeyError as exc:
        raise ContractError("MISSING_PARAMETER", f"{template}: no value for parameter {exc.args[0]!r}") from None
    return prior.parse(text)
