"""LocalContext: exactly what one agent may see, and the text its model is shown.

Private fields (the sender's active binding, the requester's goal, the peer's
workcell mode) live in ``private`` of that agent's context only. ``render`` is the
model-visible text: deterministic, so paired contexts can be compared byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from gencoord.dsl.ast import Task
from gencoord.dsl.surface import SurfaceName
from gencoord.prior.ledger import inventory_after
from gencoord.prior.prior import Prior
from gencoord.prior.public import Ref
from gencoord.prior.views import PriorView
from gencoord.tasks.team import TeamTask


@dataclass(frozen=True, slots=True)
class LocalContext:
    """What one agent may know: its own bag, goal and workcell, and the public task. A backend sees nothing else,
    which is what keeps private information private."""

    agent: str
    role: str  # sender / receiver (forward), requester / peer (feedback)
    peer: str
    template: str | None  # the public task structure the agent works in, if it is public
    branches: tuple[str, ...]  # the public bindings of that template
    params: Mapping[str, int]
    inventory: Mapping[str, int]
    refs: Mapping[str, Ref]
    private: Mapping[str, str]
    surface: SurfaceName = SurfaceName.DSL  # the wire form this agent must write
    team: TeamTask | None = None  # a team task as this agent knows it: its own bag, what peers answered
    prior_view: PriorView | None = None  # the projection of the task prior it is shown; None: its backend's own
    blocked: tuple[str, ...] = ()  # skills this agent may not use (a team task's blocked actions)

    def render(self) -> str:
        lines = [f"agent: {self.agent}", f"role: {self.role}", f"peer: {self.peer}", f"surface: {self.surface.value}"]
        if self.template is not None:
            lines.append(f"task template: {self.template}")
            lines.append(f"admissible branches: {', '.join(self.branches)}")
        if self.params:
            lines.append("quantities: " + ", ".join(f"{k}={v}" for k, v in sorted(self.params.items())))
        lines.append("inventory: " + (", ".join(f"{k}={v}" for k, v in sorted(self.inventory.items())) or "empty"))
        lines.append("places:")
        for name, ref in sorted(self.refs.items()):
            block = f" {ref.block}" if ref.block else ""
            x, y, z = ref.position
            lines.append(f"  {name}: {ref.kind}{block} at ({x}, {y}, {z})")
        if self.private:
            lines.append("private:")
            lines += [f"  {key}: {value}" for key, value in sorted(self.private.items())]
        if self.blocked:
            lines.append("cannot: " + ", ".join(self.blocked))
        if self.team is not None:
            lines += _team_lines(self.team)
        return "\n".join(lines) + "\n"


def merged_view(own: LocalContext, peer: LocalContext) -> LocalContext:
    """The centralized full-information view: ``own`` context with ``peer``'s private fields as ``peer_<key>``.

    What a central planner knows once both agents have uploaded their local views; the
    size of the uploaded view is what the centralized condition pays across the boundary.
    """
    private = {**own.private, **{f"peer_{key}": value for key, value in peer.private.items()}}
    return replace(own, private=private)


def _team_lines(team: TeamTask) -> list[str]:
    goal = team.goal
    lines = [f"team goal: {goal.count} {goal.item} held by {goal.holder}", "team (as known):"]
    for agent in team.agents:
        held = ", ".join(f"{k}={v}" for k, v in sorted(agent.inventory.items())) or "nothing known"
        blocked = f"; cannot {', '.join(agent.blocked)}" if agent.blocked else ""
        lines.append(f"  {agent.name}: {held}{blocked}")
    if team.world.resources:
        lines.append("gatherable: " + ", ".join(team.world.resources))
    return lines


def after_step(context: LocalContext, step: Task, prior: Prior) -> LocalContext:
    """The agent's view once ``step`` is carried out: its inventory after the step's ledger effect."""
    return replace(context, inventory=inventory_after(dict(context.inventory), step, prior))
