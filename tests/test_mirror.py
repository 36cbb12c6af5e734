"""A world run with the simulator alongside: what a disagreement between the two records."""

from __future__ import annotations

from dataclasses import replace

from gencoord.prior import Prior
from gencoord.worlds.actions import GiveItem, GoTo, Program
from gencoord.worlds.conformance_fixtures import conformance_program
from gencoord.worlds.conformance_fixtures import conformance_world as world
from gencoord.worlds.executor import ActionFailure, ActionRecord, HandoffHook
from gencoord.worlds.mirror import MirroredExecutor
from gencoord.worlds.sim import SimExecutor

A, B = "agent_a", "agent_b"
LEFT = "agent_a received 0 of 2 stick; a stack of it lies 2.9 blocks from agent_a"
HAND_OVER = conformance_program([GoTo(B, "b#1", A, "agent"), GiveItem(B, "b#1", A, "stick", 2)])


class _DroppingHands(SimExecutor):
    """A world whose hand-overs land out of the receiver's reach, saying where."""

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        records = super().run(program, start, stop, on_handoff)
        failure = ActionFailure("HANDOFF_NOT_RECEIVED", LEFT)
        return [replace(r, failure=failure) if r.action.name == "give_item" else r for r in records]


def test_a_disagreement_keeps_what_the_failing_world_said(prior: Prior) -> None:
    mirrored = MirroredExecutor(_DroppingHands(prior.game), SimExecutor(prior.game))
    mirrored.reset(world(prior, {B: {"stick": 2}}))
    mirrored.run(HAND_OVER, 0, 2)
    [disagreement] = mirrored.disagreements
    assert disagreement.startswith("action 2 (agent_b give_item): sim HANDOFF_NOT_RECEIVED")
    assert f"({LEFT}), simulator ok" in disagreement and "real time" in disagreement


def test_worlds_that_agree_record_nothing(prior: Prior) -> None:
    mirrored = MirroredExecutor(SimExecutor(prior.game), SimExecutor(prior.game))
    mirrored.reset(world(prior, {B: {"stick": 2}}))
    records = mirrored.run(HAND_OVER, 0, 2)
    assert [r.ok for r in records] == [True, True] and mirrored.disagreements == []
