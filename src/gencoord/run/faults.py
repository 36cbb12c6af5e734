"""Controlled faults (v2 Table S46), each injected at the stage it belongs to.

A fault is applied by the episode runner, never by the component under test: a text
fault rewrites what the sender emitted, a world fault changes ω, an execution fault
changes what the giver's body actually hands over. The pipeline must then report the
stage outcome of Table S46 on its own.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from gencoord.dsl.ast import Proposal, Task
from gencoord.dsl.surface import Surface
from gencoord.protocol.generation import GenerationRequest, Generator, Reply, Stage
from gencoord.worlds.actions import GiveItem, Program
from gencoord.worlds.spec import AgentSpec, WorldSpec


class Fault(StrEnum):
    CLEAN = "clean"
    IRRELEVANT_CHANGE = "irrelevant_change"  # ω changes where no task looks
    MALFORMED_PROPOSAL = "malformed_proposal"  # the sender's record does not parse
    INCOMPATIBLE_HANDOFF = "incompatible_handoff"  # SELF hands over an item the REQ does not consume
    INSUFFICIENT_HANDOFF = "insufficient_handoff"  # the giver hands over one item too few
    WRONG_TRANSFER_ITEM = "wrong_transfer_item"  # the giver hands over a different item


SUBSTITUTES = {"oak_planks": "spruce_planks", "cobblestone": "cobbled_deepslate", "stick": "bamboo"}
"""A real item that stands in for a handoff item without being interchangeable with it."""

_OPENING = (Stage.SENDER_INITIAL, Stage.SENDER_STEP, Stage.REQUESTER_INITIAL)


def substitute(item: str) -> str:
    return SUBSTITUTES.get(item, "dirt")


TEXT_FAULTS = frozenset({Fault.MALFORMED_PROPOSAL, Fault.INCOMPATIBLE_HANDOFF})
"""Faults that rewrite the text of the opening record."""


def _swap_handoff_item(proposal: Proposal) -> Proposal:
    """The SELF path hands over (and obtains) a substitute for its handoff item; the REQ is untouched."""
    handed = next((t.get("item") for t in proposal.self_plan if t.skill == "resource.deliver" and t.has("to")), None)
    if not isinstance(handed, str):
        return proposal
    other = substitute(handed)
    swapped = tuple(
        Task(t.skill, tuple((k, other if k == "item" and v == handed else v) for k, v in t.args))
        for t in proposal.self_plan
    )
    return Proposal(swapped, proposal.peer_requests)


def faulty_generator(generate: Generator, fault: Fault, surface: Surface) -> Generator:
    """Text faults rewrite the opening proposal; other faults leave generation alone.

    A malformed proposal loses its last character (an unterminated task, or unclosed
    JSON); an incompatible handoff is decoded, changed and re-encoded in the same surface.
    """
    if fault not in TEXT_FAULTS:
        return generate

    def corrupted(request: GenerationRequest) -> Reply:
        reply = generate(request)
        if request.stage not in _OPENING:
            return reply
        if fault is Fault.MALFORMED_PROPOSAL:
            return replace(reply, text=reply.text.rstrip()[:-1])
        return replace(reply, text=surface.serialize(_swap_handoff_item(surface.parse(reply.text))))

    return corrupted


def faulty_world(world: WorldSpec, program: Program, fault: Fault) -> WorldSpec:
    """ω for the run: an irrelevant extra, or the wrong item placed in the giver's hands."""
    if fault is Fault.IRRELEVANT_CHANGE:
        contents = {name: {**items, "torch": items.get("torch", 0) + 3} for name, items in world.contents.items()}
        agents = tuple(replace(a, inventory={**a.inventory, "bread": 2}) for a in world.agents)
        return replace(world, agents=agents, contents=contents)
    if fault is Fault.WRONG_TRANSFER_ITEM:
        give = program.actions[program.handoffs[0]] if program.handoffs else None
        if isinstance(give, GiveItem):
            wrong = substitute(give.item)
            agents = tuple(_with_item(a, wrong, give.count) if a.name == give.agent else a for a in world.agents)
            return replace(world, agents=agents)
    return world


def _with_item(agent: AgentSpec, item: str, count: int) -> AgentSpec:
    return replace(agent, inventory={**agent.inventory, item: agent.inventory.get(item, 0) + count})


def faulty_program(program: Program, fault: Fault) -> Program:
    """What the giver's body does at the handoff: one item short, or the wrong item."""
    if not program.handoffs:
        return program
    give = program.actions[program.handoffs[0]]
    if not isinstance(give, GiveItem) or fault not in (Fault.INSUFFICIENT_HANDOFF, Fault.WRONG_TRANSFER_ITEM):
        return program
    if fault is Fault.INSUFFICIENT_HANDOFF:
        changed = replace(give, count=give.count - 1)
    else:
        changed = replace(give, item=substitute(give.item))
    actions = list(program.actions)
    actions[program.handoffs[0]] = changed
    return replace(program, actions=tuple(actions))
