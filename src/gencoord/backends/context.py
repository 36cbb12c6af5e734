"""Model-visible input: one agent's LocalContext and what arrived, rendered for a model.

The rendering has the sections the paper's supervision rows carry — decision agent,
observation, incoming message, peer, and the shared task prior in one of the views of
``gencoord.prior.views`` (S9). The view is the one the model was trained on unless the
agent's context names another (a visibility experiment shows a trained model a projection
it never saw). ``compact`` drops the place list and inventory, for small models whose
context budget is tight. The rendering is deterministic, so paired instances are
byte-identical wherever their contexts are.
"""

from __future__ import annotations

from gencoord.prior.prior import Prior
from gencoord.prior.views import PriorView, view_lines
from gencoord.protocol.generation import GenerationRequest
from gencoord.tasks.context import LocalContext


def model_input(
    context: LocalContext,
    request: GenerationRequest,
    prior: Prior,
    view: PriorView = PriorView.SKELETON,
    compact: bool = False,
) -> str:
    """The prompt text for one generation; ends where the model's output begins."""
    view = PriorView(context.prior_view or view)
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
    lines += view_lines(prior, context.template, view)
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
