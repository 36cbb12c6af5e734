"""Projections of the shared task structure: how much of a template an agent is shown (paper S9).

The paper's three views are categorical projections of one task graph, each with its own
answer-independent ordering:

- ``full``: every binding's two role paths, steps in order (nodes, typed fields, coarse
  stages and the edges between steps).
- ``skeleton``: the same nodes with their typed fields, grouped by coarse stage — the
  sender's steps before the hand-over, the hand-over, the sender's steps after it, the
  receiver's steps — with the order inside a stage removed (listed sorted).
- ``node``: the binding's nodes alone, sorted, with neither stages nor roles nor order.
  Without a public template (Goal×Capability) it is the skill catalog.

:func:`projected_paths` is the symbolic reference that reads each view back into two role
paths: the full view's order as given, the skeleton's stages in order with each stage as
listed, and for the node view a fixed task-path priority (gather, transform, hand over,
place or store) with the receiver's share found by item flow from its coded step.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gencoord.prior.model import BindingSpec
from gencoord.prior.prior import Prior

STEP_SEPARATOR = " > "
NODE_SEPARATOR = " ; "
HANDOFF_MARK = "to={receiver}"  # the sender's step that hands the material over


class PriorView(StrEnum):
    """How much of the shared task prior a model input shows (paper S9)."""

    FULL = "full"
    SKELETON = "skeleton"
    NODE = "node"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Stages:
    """A binding's steps by coarse stage; each tuple in path order."""

    before: tuple[str, ...]  # the sender's steps before the hand-over
    handoff: tuple[str, ...]  # the hand-over itself (empty when the sender hands nothing over)
    after: tuple[str, ...]  # the sender's steps after the hand-over
    receiver: tuple[str, ...]  # the receiver's path

    @property
    def nodes(self) -> tuple[str, ...]:
        return (*self.before, *self.handoff, *self.after, *self.receiver)


def stages_of(paths: BindingSpec) -> Stages:
    sender = tuple(paths.sender.split(STEP_SEPARATOR))
    receiver = tuple(paths.receiver.split(STEP_SEPARATOR))
    cut = next((index for index, step in enumerate(sender) if HANDOFF_MARK in step), None)
    if cut is None:
        return Stages(sender, (), (), receiver)
    return Stages(sender[:cut], sender[cut : cut + 1], sender[cut + 1 :], receiver)


def _listed(steps: tuple[str, ...]) -> str:
    return NODE_SEPARATOR.join(sorted(steps))


def _skeleton_line(stages: Stages) -> str:
    sender = [
        f"{name} {{{_listed(steps)}}}"
        for name, steps in (("before", stages.before), ("handoff", stages.handoff), ("after", stages.after))
        if steps
    ]
    return f"SELF {' '.join(sender)} | REQ after {{{_listed(stages.receiver)}}}"


def view_lines(prior: Prior, template: str | None, view: PriorView) -> list[str]:
    """The lines of a model input that show the task prior under ``view``."""
    if view is PriorView.NONE:
        return []
    if template is None:
        return ["skills: " + ", ".join(sorted(prior.skills))]
    lines = []
    for binding, paths in sorted(prior.templates[template].bindings.items()):
        if view is PriorView.FULL:
            lines.append(f"{binding}: SELF {paths.sender} | REQ {paths.receiver}")
        elif view is PriorView.SKELETON:
            lines.append(f"{binding}: {_skeleton_line(stages_of(paths))}")
        else:
            lines.append(f"{binding}: {_listed(stages_of(paths).nodes)}")
    return lines


def _skill(step: str) -> str:
    return step.split("(", 1)[0].strip()


def _args(step: str) -> dict[str, str]:
    inside = step.partition("(")[2].rpartition(")")[0]
    return dict(part.split("=", 1) for part in inside.split(",") if "=" in part)


def _priority(step: str) -> int:
    """The node view's fixed task-path priority: gather, transform, hand over, then place or store."""
    skill = _skill(step)
    if skill == "resource.obtain":
        return 0
    if skill == "craft.item":
        return 1
    if HANDOFF_MARK in step:
        return 2
    return 3


def _in_priority(steps: list[str]) -> list[str]:
    return sorted(sorted(steps), key=_priority)


def _receiver_share(nodes: tuple[str, ...]) -> set[str]:
    """The coded step (``bind=``) and every step that consumes what the receiver's steps make."""
    share = {step for step in nodes if "bind" in _args(step)}
    grew = True
    while grew:
        made = {_args(step).get("item") for step in share if _skill(step) == "craft.item"}
        joining = {
            step
            for step in nodes
            if step not in share and _skill(step) != "craft.item" and _args(step).get("item") in made
        }
        grew = bool(joining)
        share |= joining
    return share


def projected_paths(paths: BindingSpec, view: PriorView) -> tuple[str, str]:
    """(sender path, receiver path) as a symbolic reader recovers them from ``view`` alone."""
    stages = stages_of(paths)
    if view is PriorView.FULL:
        return paths.sender, paths.receiver
    if view is PriorView.SKELETON:
        sender = [*sorted(stages.before), *stages.handoff, *sorted(stages.after)]
        return STEP_SEPARATOR.join(sender), STEP_SEPARATOR.join(sorted(stages.receiver))
    if view is PriorView.NODE:
        nodes = tuple(sorted(stages.nodes))
        share = _receiver_share(nodes)
        sender = _in_priority([step for step in nodes if step not in share])
        receiver = _in_priority([step for step in nodes if step in share])
        return STEP_SEPARATOR.join(sender), STEP_SEPARATOR.join(receiver)
    raise ValueError(f"the {view.value} view shows no task structure to read paths from")
