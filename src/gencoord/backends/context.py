"""Model-visible input: one agent's LocalContext and what arrived, rendered for a model.

The rendering has the sections the paper's supervision rows carry — decision agent,
observation, incoming message, peer, and the shared task prior in one of three views
(S9): ``full`` (every binding's two role paths), ``skeleton`` (their skill sequences),
``node`` (the skill catalog only). ``compact`` drops the place list and inventory, for
small models whose context budget is tight. The rendering is deterministic, so paired
instances are byte-identical wherever their contexts are.
"""

from __future__ import annotations

from gencoord.models.spec import PriorView
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest
from gencoord.tasks.context import LocalContext


def _prior_lines(prior: Prior, template: str | None, view: PriorView) -> list[str]:
    if view is PriorView.NONE:
        return []
    if view is PriorView.NODE or template is None:
        return ["skills: " + ", ".join(sorted(prior.skills))]
    spec = prior.templates[template]
    lines = []
    for binding, paths in sorted(spec.bindings.items()):
        if view is PriorView.FULL:
            lines.append(f"{binding}: SELF {paths.sender} | REQ {paths.receiver}")
        else:
            sender = " > ".join(step.split("(")[0].strip() for step in paths.sender.split(" > "))
            receiver = " > ".join(step.split("(")[0].strip() for step in paths.receiver.split(" > "))
            lines.append(f"{binding}: SELF {sender} | REQ {receiver}")
    return lines


def model_input(
    context: LocalContext,
    request: GenerationRequest,
    prior: Prior,
    view: PriorView = PriorView.SKELETON,
    compact: bool = False,
) -> str:
    """The prompt text for one generation; ends where the model's output begins."""
    view = PriorView(view)
    observation = (
        [
            f"agent {context.agent} role {context.role} peer {context.peer}",
            f"task {context.template or '-'} " + " ".join(f"{k}={v}" for k, v in sorted(context.params.items())),
        ]
        if compact
        else context.render().rstrip("\n").split("\n")
    )
    if compact:
        observation += [f"private {k}={v}" for k, v in sorted(context.private.items())]
    lines = [f"stage {request.stage.value}", *observation]
    lines += _prior_lines(prior, context.template, view)
    if request.delivered_request is not None:
        lines.append(f"incoming {request.delivered_request}")
    if request.initial_proposal is not None:
        lines.append("initial " + request.initial_proposal.replace("\n", " / "))
    if request.response is not None:
        lines.append(f"response {request.response}")
    if request.executed is not None:
        lines.append("done " + request.executed.replace("\n", " / "))
    lines += [f"said {turn}" for turn in request.dialogue]
    return "\n".join(lines) + "\n>>>\n"
