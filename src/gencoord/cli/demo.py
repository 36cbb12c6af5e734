"""``gencoord demo``: the paper's worked examples, stage by stage.

The generators here replay the model outputs recorded in the paper (README of
shared/papers and Figure S1): the point is to show what our codec, checker, resolver
and materializer do with them, not to imitate a model. No model runs, so every replayed
output counts as 0 model calls and is labelled as a replay wherever it is shown.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from gencoord.cli.show import show_episode
from gencoord.dsl.serialize import format_task
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import ProtocolResult, Success
from gencoord.run.episode import run_episode
from gencoord.run.lifecycle import policy_responder, run_feedback, run_forward
from gencoord.run.record import episode_record
from gencoord.tasks.cluster import make_cluster
from gencoord.tasks.context import LocalContext
from gencoord.tasks.instances import build_episode
from gencoord.tasks.suites import default_suites

FORWARD = {
    Stage.SENDER_INITIAL: "SELF resource.obtain(q=8,item=oak_planks) > "
    "resource.deliver(q=8,item=oak_planks,to=agent_a)\n"
    "REQ agent_a craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)",
    Stage.RECEIVER_AFTER_REQUEST: "SELF craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)\nREQ -",
}
INITIAL = (
    "SELF resource.obtain(q=2,item=oak_planks) > resource.deliver(q=2,item=oak_planks,to=agent_b)\n"
    "REQ agent_b craft.item(q=4,input=oak_planks,item=stick) > resource.deliver(q=4,dst=order_chest,item=stick)"
)
COUNTERED = (
    "SELF resource.obtain(q=2,item=oak_planks) > craft.item(q=4,input=oak_planks,item=stick) > "
    "resource.deliver(q=4,item=stick,to=agent_b)\nREQ agent_b resource.deliver(q=4,dst=order_chest,item=stick)"
)


REPLAYED = "replayed from the paper's recording"


def _recorded_forward(request: GenerationRequest) -> Reply:
    return Reply(FORWARD[request.stage], model_calls=0)


def _recorded_requester(request: GenerationRequest) -> Reply:
    if request.stage is Stage.REQUESTER_INITIAL:
        return Reply(INITIAL, model_calls=0)
    revised = INITIAL if (request.response or "").startswith("ACCEPT") else COUNTERED
    return Reply(revised, model_calls=0)


def show(console: Console, title: str, result: ProtocolResult, prior: Prior) -> None:
    console.rule(f"[bold]{title}")
    trace = result.trace
    for generation in trace.generations:
        title = escape(f"{generation.agent} · {generation.stage} · {REPLAYED}")
        console.print(Panel(Text(generation.raw), title=title, expand=False))
    wire = Table("from", "to", "kind", "bytes", title="on the wire")
    wire.add_column("payload", overflow="fold")
    for message in trace.wire.messages:
        wire.add_row(
            *(
                Text(str(cell))
                for cell in (message.sender, message.recipient, message.kind, message.nbytes, message.payload)
            )
        )
    console.print(wire)
    if not isinstance(result, Success):
        console.print(Text(str(getattr(result, "error", getattr(result, "reason", result))), style="red"))
        return
    commitment, plan = result.commitment, result.plan
    tree = Tree(Text(f"commitment ({commitment.direction}, binding={commitment.binding})"))
    for path in commitment.paths:
        branch = tree.add(Text(path.agent, style="cyan"))
        for task in path.tasks:
            branch.add(Text(format_task(task)))
    for handoff in commitment.handoffs:
        tree.add(Text(f"handoff: {handoff.giver} → {handoff.receiver}: {handoff.quantity} × {handoff.item}"))
    console.print(tree)
    table = Table("task", "actor", "skill", title="dispatch plan")
    for column in ("args", "place", "after"):
        table.add_column(column, overflow="fold")
    for planned in plan.tasks:
        args = ",".join(f"{k}={v}" for k, v in planned.args)
        place = f"{planned.place.kind}:{planned.place.name}" if planned.place else "-"
        table.add_row(
            *(
                Text(cell)
                for cell in (planned.id, planned.actor, planned.skill, args, place, ", ".join(planned.preds) or "-")
            )
        )
    console.print(table)
    terminal = " ∧ ".join(f"{c.kind}({c.holder}, {c.quantity} {c.item})" for c in plan.terminal)
    checks = "; ".join(f"H = {c.receiver} gains {c.quantity} {c.item} after {c.producer}" for c in plan.handoffs)
    console.print(f"checks: {checks}; T = {terminal}", highlight=False)
    console.print(
        f"model calls: {trace.calls} (every output above is {REPLAYED}) · wire bytes: {trace.wire.total_bytes}",
        highlight=False,
    )


def run_demo(console: Console) -> None:
    prior = default_prior()
    forward = run_forward(_recorded_forward, "agent_b", "agent_a", prior, prior.episode("ACTIVE_ORDER_BRANCH"))
    show(console, "Forward request · ACTIVE_ORDER_BRANCH / WORK_BRANCH (paper Table S9)", forward, prior)
    for mode in ("RAW_PROCESSOR", "FINISHED_RECEIVER"):
        result = run_feedback(
            _recorded_requester,
            policy_responder(mode, "agent_a", prior),
            "agent_a",
            "agent_b",
            prior,
            prior.episode("GC_STICK_ORDER"),
        )
        show(console, f"Bounded feedback · Goal×Capability stick order · peer {mode}", result, prior)
    console.rule("Execution on the embedded world · the recorded forward episode, compiled, run and verified")
    suites = default_suites()
    spec = build_episode(make_cluster("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", 7), 1, 7, prior, suites)
    replay = _RecordedForward()
    episode = run_episode(spec, backends={spec.sender: replay, spec.receiver: replay}, prior=prior, suites=suites)
    show_episode(console, episode_record(episode))


class _RecordedForward:
    """The paper's two recorded model outputs as a backend: replays, so no model call."""

    name = "paper-recording (replayed)"

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return _recorded_forward(request)
