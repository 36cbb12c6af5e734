"""The gate's independent oracle: label an issue by running each of its options forward.

When an issue first arises, the episode is copied exactly as it stands: the world, every
agent's private state, the messages in flight, the round. Each option the agent has is
forced in a copy, and the copy is played to the end under the same budget and the same
gate policy for every other decision. The options are: the gate's LOCAL (recover by the
agent's known route, or skip a node the goal does not need when there is none), skip the
node outright (when the goal does not need it), and ask each peer. An issue *needed
escalation* when no local option completes the job and some escalation does.

Nothing here shares code with the gate's own local-cost estimate, so "unnecessary
escalation" is measured against what actually happens, not against the planner the gate
itself consults.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from gencoord.gate.task_graphs import Node, TaskGraph

LOCAL = "local"
SKIP = "skip"
ESCALATE_TO = "escalate:"


class Rollable(Protocol):
    """What the oracle needs of an episode: copyable state, a way to force an option, and to play on."""

    job: TaskGraph
    forced: dict[tuple[str, str, str], str]
    rollout: bool

    def shared(self) -> Sequence[object]: ...

    def raise_issue(self, agent: str, node: Node, kind: str, needs: dict[str, int], detail: str | None) -> None: ...

    def play_round(self, names: Sequence[str]) -> None: ...

    def play(self) -> None: ...

    def goal_reached(self) -> bool: ...


def options_for(job: TaskGraph, agent: str, node: Node) -> list[str]:
    """Recover locally, skip a node the goal does not need, or ask each peer."""
    peers = [f"{ESCALATE_TO}{peer}" for peer in job.agents if peer != agent]
    return [LOCAL, *([] if node.critical else [SKIP]), *peers]


def _rollout(
    episode: Rollable, agent: str, node: Node, kind: str, needs: dict[str, int], detail: str | None, option: str
) -> bool:
    memo: dict[int, Any] = {id(shared): shared for shared in episode.shared()}  # immutable: not copied
    twin = copy.deepcopy(episode, memo)
    twin.rollout = True
    twin.forced = {(agent, node.id, kind): option}
    twin.raise_issue(agent, node, kind, dict(needs), detail)
    names = list(twin.job.agents)
    twin.play_round(names[names.index(agent) + 1 :])  # the rest of the round this issue arose in
    twin.play()
    return twin.goal_reached()


def counterfactual_outcomes(
    episode: Rollable, agent: str, node: Node, kind: str, needs: dict[str, int], detail: str | None
) -> dict[str, bool]:
    """Option → whether the job completes when the agent takes it (and the gate decides the rest)."""
    return {
        option: _rollout(episode, agent, node, kind, needs, detail, option)
        for option in options_for(episode.job, agent, node)
    }


def needed_escalation(outcomes: Mapping[str, bool]) -> bool:
    """No local option completes the job, and asking some peer does."""
    local = outcomes.get(LOCAL, False) or outcomes.get(SKIP, False)
    asked = any(done for option, done in outcomes.items() if option.startswith(ESCALATE_TO))
    return not local and asked
