"""Supervision rows for a team model: the planner's proposals and the rule peers' answers on generated tasks.

Each row is one message of a real team run, captured as the backend was asked for it: the
task is drawn as MINDcraft's crafting files are made (:func:`random_mindcraft_task`), read
as MINDcraft's files are read, and run through :func:`run_team_task` with the planner
leading (its simplest plan in which the lead makes the goal, where there is one: the lead
runs the prompt's steps and each teammate hands over what it holds of the needs) and the
rule peers answering, so a row's prompt is exactly what a model in that
role is shown at run time (:func:`team_input`). A peer's decisions are nearly always ACCEPT
when the lead heard the truth, so each decision row also gets its counterfactuals: the same
projection to the peer holding one unit less of what its path uses (the rule counters), a few
more (it accepts), and to the peer barred from a skill of its path (the rule rejects). Decision
rows also come from a second run of the task led by the planner's fastest plan, whose
projections ask peers to craft as well as to hand over. Each supply answer likewise gets the
same question to the peer holding more and fewer of the asked items.

Evaluation holds out whole item families (a goal's last word: ``wall``, ``terracotta``,
``banner``): a held-out family's goals are never drawn for training, so held-out rows test
copying names and structure the model never saw.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from gencoord.backends.base import Backend
from gencoord.backends.peer import RulePeer
from gencoord.backends.planner import PlannerBackend
from gencoord.backends.team_input import team_input
from gencoord.dsl import team_dialogue
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import GencoordError
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.response import parse_response
from gencoord.protocol.supply import SupplyQuery, parse_answer
from gencoord.run.team import run_team_task
from gencoord.tasks.context import LocalContext
from gencoord.tasks.generate import random_mindcraft_task
from gencoord.tasks.mindcraft_data import mindcraft_world
from gencoord.tasks.mindcraft_format import from_mindcraft
from gencoord.tasks.team import TeamTask
from gencoord.train.data import SupervisionRow

HELD_OUT_SHARE = 5
"""One item family in this many is held out of training."""
TRAINING, HELD_OUT = "team_training", "team_held_out"


def item_family(item: str) -> str:
    """An item's family: its last word (``cyan_terracotta`` → ``terracotta``)."""
    return item.rsplit("_", 1)[-1]


def held_out(item: str) -> bool:
    """Whether ``item``'s family is held out of training (fixed by the family's name, not by a seed)."""
    return hashlib.sha256(item_family(item).encode()).digest()[0] % HELD_OUT_SHARE == 0


@dataclass
class Recorder:
    """A backend that remembers what it was asked and what it answered, to turn a run into rows."""

    backend: Backend
    heard: list[tuple[LocalContext, GenerationRequest, Reply]] = field(default_factory=list)
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.backend.name

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        reply = self.backend.generate(context, request)
        self.heard.append((context, request, reply))
        return reply


SMALL_TEAMS = (2, 2, 2, 3, 4)
"""Team sizes the shipped tiny team checkpoints were trained on (drawn uniformly from this tuple); a config's
``team_sizes`` gives others (every size: :data:`EVERY_SIZE`)."""
EVERY_SIZE = (2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8)
"""Team sizes from 2 to 8, the benchmark's own (2–5) twice as often as the larger ones: the LoRA fine-tune's."""


def draw_task(prior: Prior, rng: random.Random, split: str, agents: tuple[int, ...] = SMALL_TEAMS) -> TeamTask:
    """A generated MINDcraft-format crafting task whose goal's family belongs to ``split``."""
    world = mindcraft_world()
    while True:
        raw = random_mindcraft_task(prior, rng, rng.choice(agents), world)
        if raw is None or held_out(str(raw["target"])) != (split == HELD_OUT):
            continue
        task = from_mindcraft(f"generated_{rng.randrange(10**9)}", raw, "generated")
        if isinstance(task, TeamTask):
            return task


def _row(stage: Stage, prompt: str, target: str, task: TeamTask, split: str) -> SupervisionRow:
    return SupervisionRow(stage.value, prompt, target, task.id, task.goal.item, item_family(task.goal.item), 0, split)


def task_rows(
    task: TeamTask, prior: Prior, rng: random.Random, split: str, surface: SurfaceName = SurfaceName.DSL
) -> list[SupervisionRow]:
    """Every message of ``task``'s planner-led run as a row, and each decision's two counterfactuals.

    Under the free-form surface each row is said in the team dialogue's words, as a speaking
    agent writes and hears it (``dsl/team_dialogue.py``): the lead's whole plan in one message,
    a peer's answer and decision in sentences, and a peer hearing the lead's plan in words.
    """
    lead, peers = Recorder(PlannerBackend(prior, lead_makes=True)), Recorder(RulePeer(prior))
    run_team_task(task, prior, surface=surface, lead_backend=lead, peer_backend=peers)
    deciders = Recorder(RulePeer(prior))  # the fastest plan asks peers to craft, not only to hand over
    run_team_task(task, prior, surface=surface, lead_backend=PlannerBackend(prior), peer_backend=deciders)
    decisions = [heard for heard in deciders.heard if heard[1].stage is Stage.TEAM_RESPONSE]
    rows = []
    for context, request, reply in [*lead.heard, *peers.heard, *decisions]:
        rows.append(_said_row(context, request, reply.text, prior, task, split))
        if request.stage is Stage.TEAM_RESPONSE:
            rows += _counterfactuals(context, request, prior, task, split, rng)
        if request.stage is Stage.TEAM_HAVE:
            rows += _other_bags(context, request, prior, task, split, rng)
    return rows


def _said_row(
    context: LocalContext, request: GenerationRequest, typed: str, prior: Prior, task: TeamTask, split: str
) -> SupervisionRow:
    """The row of one message: as typed, or in words under the free-form surface."""
    if context.surface is not SurfaceName.FREEFORM:
        return _row(request.stage, team_input(context, request, prior), typed, task, split)
    delivered = request.delivered_request or ""
    if request.stage is Stage.TEAM_LEAD:
        said = team_dialogue.say_plan(prior.parse(typed), context.agent)
    elif request.stage is Stage.TEAM_HAVE:
        answer = parse_answer(typed, SupplyQuery(tuple(delivered.split(" ")[1:])))
        said = team_dialogue.say_have(answer.holds, answer.cannot, request.peer, context.agent)
    else:
        heard = prior.parse(delivered)
        response = parse_response(typed)
        last = next(r.plan for r in heard.peer_requests if r.target == context.agent)[-1]
        said = team_dialogue.say_response(response.decision, dict(response.extra), request.peer, last)
        request = replace(request, delivered_request=team_dialogue.say_plan(heard, request.peer))
    return _row(request.stage, team_input(context, request, prior), said, task, split)


def _counterfactuals(
    context: LocalContext, request: GenerationRequest, prior: Prior, task: TeamTask, split: str, rng: random.Random
) -> list[SupervisionRow]:
    """The same projection to a peer short of one unit it uses, to one holding a few more than it uses, and
    to one barred from a skill of its path: an answer turns on comparing counts, not on their being equal."""
    assert request.delivered_request is not None
    proposal = prior.parse(request.delivered_request)
    mine = next(r.plan for r in proposal.peer_requests if r.target == context.agent)
    held = sorted(item for item in context.inventory if any(t.get("item") == item for t in mine))
    variants: list[LocalContext] = []
    if held:
        item = rng.choice(held)
        short = {**context.inventory, item: context.inventory[item] - 1}
        variants.append(replace(context, inventory={k: v for k, v in short.items() if v > 0}))
        spare = {**context.inventory, item: context.inventory[item] + rng.randint(1, 3)}
        variants.append(replace(context, inventory=spare))
    variants.append(replace(context, blocked=tuple(sorted({*context.blocked, rng.choice(mine).skill}))))
    return _rule_rows(variants, request, prior, task, split)


def _other_bags(
    context: LocalContext, request: GenerationRequest, prior: Prior, task: TeamTask, split: str, rng: random.Random
) -> list[SupervisionRow]:
    """The same question to the peer holding one more, two more, and one fewer of the asked items: a drawn
    peer mostly holds one asked item or none, and a model trained on those answers alone learns to stop after
    the first item it lists (on item families it never saw, it did)."""
    asked = sorted(set((request.delivered_request or "").split(" ")[1:]))
    unheld = [item for item in asked if context.inventory.get(item, 0) <= 0]
    held = [item for item in asked if context.inventory.get(item, 0) > 0]
    bags: list[dict[str, int]] = []
    for more in (1, 2):
        if len(unheld) >= more:
            extra = {item: rng.randint(1, 16) for item in rng.sample(unheld, more)}
            bags.append({**context.inventory, **extra})
    if held:
        dropped = rng.choice(held)
        bags.append({item: count for item, count in context.inventory.items() if item != dropped})
    return _rule_rows([replace(context, inventory=bag) for bag in bags], request, prior, task, split)


def _rule_rows(
    variants: list[LocalContext], request: GenerationRequest, prior: Prior, task: TeamTask, split: str
) -> list[SupervisionRow]:
    """The rows of ``request`` put to each variant of the peer, answered by the truthful rule."""
    rule = RulePeer(prior)
    return [
        _said_row(variant, request, rule.generate(variant, request).text, prior, task, split) for variant in variants
    ]


def team_rows(
    prior: Prior,
    seed: int,
    split: str = TRAINING,
    surface: SurfaceName = SurfaceName.DSL,
    sizes: tuple[int, ...] = SMALL_TEAMS,
) -> Iterator[SupervisionRow]:
    """Endless rows of ``split``: a fresh task each time (its team size drawn from ``sizes``), its rows shuffled;
    deterministic in ``seed``."""
    rng = random.Random(seed)
    while True:
        task = draw_task(prior, rng, split, sizes)
        try:
            rows = task_rows(task, prior, rng, split, surface)
        except GencoordError:  # a drawn task the planner cannot carry out gives no row to learn from
            continue
        rng.shuffle(rows)
        yield from rows
