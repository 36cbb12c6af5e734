"""Thinking takes time in the world: an agent that is writing a message is not acting.

A message's thinking time is either what its backend measured (a model's or an API's call)
or a configured latency standing in for a model (a rule backend writes in microseconds; a
rule that plays a model's part is given the model's time). The default is no thinking at
all, which keeps every result made before thinking existed unchanged.

A team task's commitment forms once its last message is written, so every agent starts
acting after the exchange's thinking (its time to commitment, TTC: the messages are written
one after another). In the gate, the agent that writes a proposal or a response loses the
action windows the writing takes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from gencoord.errors import ConfigError
from gencoord.protocol.generation import Generation, Reply
from gencoord.reasons import Reason
from gencoord.worlds.actions import Program, Wait
from gencoord.worlds.sim.physics import TICKS_PER_S

PAPER_TTC_S = 4.29
"""The GenCoord paper's mean time to commitment with Short DSL and DeepSeek (v2 Table 2), over two model calls."""
PAPER_MESSAGE_S = PAPER_TTC_S / 2
"""One message's share of it: a forward episode's commitment is two model calls (sender, receiver)."""
THINKING_TASK = "thinking"


class Thinking(BaseModel):
    """How long writing a message keeps its writer from acting."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_message_s: float = Field(default=0.0, ge=0.0, le=3600.0)  # every message, whoever writes it
    measured: bool = False  # a message takes what its backend measured instead (rules measure ~0)

    @property
    def none(self) -> bool:
        return not self.measured and self.per_message_s == 0.0

    def seconds(self, reply: Reply) -> float:
        """What writing ``reply`` cost its writer in world time."""
        return reply.latency_s if self.measured else self.per_message_s

    def total(self, generations: Iterable[Generation]) -> float:
        """The world time of an exchange whose messages were written one after another."""
        return sum(self.seconds(generation.reply) for generation in generations)

    def describe(self) -> str:
        if self.measured:
            return "each message takes its backend's measured time"
        if self.per_message_s:
            return f"each message takes {self.per_message_s:g} s"
        return "messages take no world time"


def parse_thinking(text: str) -> Thinking:
    """``none``, ``measured``, ``paper`` (the paper's TTC per message) or seconds per message, as a Thinking."""
    named = {"none": Thinking(), "measured": Thinking(measured=True), "paper": Thinking(per_message_s=PAPER_MESSAGE_S)}
    if text in named:
        return named[text]
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0.0 <= seconds <= 3600.0:
        raise ConfigError(
            Reason.BAD_THINKING,
            f"thinking is none, measured, paper or seconds per message (0 to 3600), not {text[:40]!r}",
        )
    return Thinking(per_message_s=seconds)


def ticks(seconds: float) -> int:
    """Whole game ticks covering ``seconds``."""
    return math.ceil(seconds * TICKS_PER_S - 1e-9)


def after_thinking(program: Program, seconds: float) -> Program:
    """``program`` with every agent first waiting ``seconds``: nobody acts on a commitment before it forms.

    The wait is an action like any (the simulator advances the agent's clock; a Minecraft
    bot stands still), so the task's time limit and the record's duration count it.
    """
    if ticks(seconds) <= 0:
        return program
    agents = list(dict.fromkeys(action.agent for action in program.actions))
    waits = tuple(Wait(agent, THINKING_TASK, ticks(seconds)) for agent in agents)
    shift = len(waits)
    return Program(
        waits + program.actions,
        tuple(() for _ in waits) + tuple(tuple(dep + shift for dep in deps) for deps in program.deps),
        tuple(index + shift for index in program.handoffs),
    )
