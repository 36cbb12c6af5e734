"""Fresh task structure for a training row, so that a small model learns to copy paths rather than recall them.

Renaming (``gencoord.train.renaming``) gives a row fresh names, but every row of a training
template keeps that template's structure — which steps, in which order, with which keys —
and a 0.2 M-parameter model learns to recall it: on a held-out template it writes a familiar
template's path, even as a receiver whose whole answer is the delivered request. A
restructured row replaces the full view's paths with a random recombination of the training
templates' own steps (steps before the hand-over, a hand-over, steps after it, receiver steps),
and the task's quantities by random ones, consistently in the view, the task line, the
delivered request and the target, so that the target can only be written by copying: the
private binding's line for a sender, the delivered request for a receiver, with quantities
looked up in the task line by name. The steps come from the templates the
model trains on, so nothing of a held-out template enters training.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace

from gencoord.prior.prior import Prior
from gencoord.prior.views import STEP_SEPARATOR, stages_of
from gencoord.protocol.generation import Stage
from gencoord.train.data import SupervisionRow

_VIEW_LINE = re.compile(r"^([A-Za-z_]+): SELF (.+) \| REQ (.+)$")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_BIND = re.compile(r"bind=([A-Za-z_]+)")
_STAGES = (Stage.SENDER_INITIAL.value, Stage.RECEIVER_AFTER_REQUEST.value)
_LARGEST = 64  # a stack: restructured rows draw their quantities from 1..64
_PLACE = re.compile(r"\b(dst|site)=([a-z_]+)")


@dataclass(frozen=True)
class StepPool:
    """The training templates' steps by coarse stage."""

    before: tuple[str, ...]
    handoff: tuple[str, ...]
    after: tuple[str, ...]
    receiver: tuple[str, ...]
    places: dict[str, tuple[str, ...]]  # a place key (dst, site) → the places the steps name under it

    @classmethod
    def of(cls, prior: Prior, templates: frozenset[str]) -> StepPool:
        stages = [stages_of(paths) for name in sorted(templates) for paths in prior.templates[name].bindings.values()]
        every = {step for s in stages for part in (s.before, s.handoff, s.after, s.receiver) for step in part}
        places: dict[str, set[str]] = {}
        for step in every:
            for match in _PLACE.finditer(step):
                places.setdefault(match.group(1), set()).add(match.group(2))
        return cls(
            places={key: tuple(sorted(values)) for key, values in places.items()},
            before=tuple(sorted({step for s in stages for step in s.before})),
            handoff=tuple(sorted({step for s in stages for step in s.handoff})),
            after=tuple(sorted({step for s in stages for step in s.after})),
            receiver=tuple(sorted({step.replace(_bind_of(step), "") for s in stages for step in s.receiver})),
        )


def _bind_of(step: str) -> str:
    found = _BIND.search(step)
    return "" if found is None else found.group(0) + ","


def _with_code(step: str, code: str) -> str:
    skill, _, rest = step.partition("(")
    return f"{skill}(bind={code},{rest}"


def _fill(path: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], path)


def _random_steps(pool: StepPool, params: list[str], rng: random.Random) -> tuple[list[str], list[str]]:
    """One binding's (sender, receiver) steps, quantities drawn from the task's parameters, the code not yet set."""

    def pick(steps: tuple[str, ...], low: int, high: int) -> list[str]:
        return rng.sample(steps, min(len(steps), rng.randint(low, high))) if steps else []

    sender = [*pick(pool.before, 1, 2), *pick(pool.handoff, 1, 1), *pick(pool.after, 0, 1)]
    return [_requantified(step, params, rng) for step in sender], [
        _requantified(step, params, rng) for step in pick(pool.receiver, 1, 2)
    ]


def _requantified(step: str, params: list[str], rng: random.Random) -> str:
    return _PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1) == "receiver" else f"{{{rng.choice(params)}}}", step)


def _sibling_steps(
    base: tuple[list[str], list[str]], pool: StepPool, params: list[str], rng: random.Random
) -> tuple[list[str], list[str]]:
    """``base`` with one receiver step drawn afresh: a binding that differs from another in one step only.

    Sibling bindings are what real templates hold (the same gathering, then the depot or
    the order chest), and what makes a view line hard to pick: with every binding's paths
    drawn apart, the right line could be told by its shape instead of by its code.
    """
    sender, receiver = list(base[0]), list(base[1])
    index = rng.randrange(len(receiver))
    others = [step for step in pool.receiver if _requantified(step, params, rng) != receiver[index]]
    if others:
        receiver[index] = _requantified(rng.choice(others), params, rng)
    return sender, receiver


def _place_sibling(
    base: tuple[list[str], list[str]], pool: StepPool, rng: random.Random
) -> tuple[list[str], list[str]] | None:
    """``base`` with one place of its receiver's steps changed, or None where they name none.

    Real branches often differ in one place only (the depot or the order chest), or swap two
    (the sender builds the wall and requests the roof, or the other way round); a sibling
    drawn a step apart is told from its first binding by its first differing skill, these
    only by the one name. Where the sender names another place under the same key, the
    two swap.
    """
    sender, receiver = list(base[0]), list(base[1])
    found = [(index, match) for index, step in enumerate(receiver) for match in _PLACE.finditer(step)]
    if not found:
        return None
    index, match = rng.choice(found)
    key, old = match.groups()
    mine = sorted({m.group(2) for step in sender for m in _PLACE.finditer(step) if m.group(1) == key} - {old})
    choices = mine or [place for place in pool.places[key] if place != old]
    if not choices:
        return None  # no other place to name: the sibling would be the first binding itself
    new = rng.choice(choices)
    step = receiver[index]
    receiver[index] = step[: match.start(2)] + new + step[match.end(2) :]
    if mine:
        taken = re.compile(rf"\b{key}={re.escape(new)}\b")
        sender = [taken.sub(f"{key}={old}", step) for step in sender]
    return sender, receiver


def _paths(code: str, steps: tuple[list[str], list[str]]) -> tuple[str, str]:
    sender, receiver = steps
    return STEP_SEPARATOR.join(sender), STEP_SEPARATOR.join([_with_code(receiver[0], code), *receiver[1:]])


def _random_structure(
    codes: list[str], pool: StepPool, params: list[str], rng: random.Random, siblings: float, places: float
) -> dict[str, tuple[str, str]]:
    """Every binding's paths: drawn apart, or, with probability ``siblings``, each a variant of the first:
    one place apart with probability ``places`` (:func:`_place_sibling`), else one step apart."""
    first = _random_steps(pool, params, rng)
    related = rng.random() < siblings
    steps = {
        code: first
        if index == 0
        else (
            (places and rng.random() < places and _place_sibling(first, pool, rng))
            or _sibling_steps(first, pool, params, rng)
            if related
            else _random_steps(pool, params, rng)
        )
        for index, code in enumerate(codes)
    }
    return {code: _paths(code, value) for code, value in steps.items()}


def _task_line(task: str, values: dict[str, str]) -> str:
    return " ".join(task.split()[:2] + [f"{name}={value}" for name, value in values.items()])


def _view_line(code: str, sender: str, receiver: str) -> str:
    return f"{code}: SELF {sender} | REQ {receiver}"


def restructured(
    row: SupervisionRow, pool: StepPool, rng: random.Random, siblings: float = 0.0, places: float = 0.0
) -> SupervisionRow:
    """``row`` with fresh random paths for every binding of its view, or unchanged where it has none;
    with probability ``siblings`` the bindings are variants of the first, each one place apart
    with probability ``places`` (:func:`_place_sibling`) and one step apart otherwise
    (:func:`_sibling_steps`).

    Only forward sender and receiver rows of a full view in compact Short DSL are rewritten:
    they are the rows whose target is a copy of one view line or of the delivered request.
    """
    lines = row.prompt.split("\n")
    codes = [match.group(1) for line in lines if (match := _VIEW_LINE.match(line))]
    task = next((line for line in lines if line.startswith("task ")), None)
    agents = next((line.split() for line in lines if line.startswith("agent ")), None)
    if row.stage not in _STAGES or not codes or task is None or agents is None or len(agents) < 6:
        return row
    names = [part.split("=", 1)[0] for part in task.split()[2:] if "=" in part]
    if not names:
        return row
    values = {name: str(rng.randint(1, _LARGEST)) for name in names}  # quantities to copy, not to recall
    me, peer = agents[1], agents[5]
    paths = _random_structure(codes, pool, names, rng, siblings, places)
    rewritten = [
        _task_line(task, values)
        if line == task
        else line
        if (match := _VIEW_LINE.match(line)) is None
        else _view_line(match.group(1), *paths[match.group(1)])
        for line in lines
    ]
    if row.stage == Stage.SENDER_INITIAL.value:
        active = next((line.split("=", 1)[1] for line in lines if line.startswith("private binding=")), None)
        if active not in paths:
            return row
        filled = {**values, "receiver": peer}
        sender, receiver = (_fill(path, filled) for path in paths[active])
        target = f"SELF {sender}\nREQ {peer} {receiver}"
    else:
        incoming = next((index for index, line in enumerate(lines) if line.startswith("incoming REQ ")), None)
        code = None if incoming is None else _BIND.search(lines[incoming])
        if incoming is None or code is None or code.group(1) not in paths:
            return row
        receiver = _fill(paths[code.group(1)][1], {**values, "receiver": me})
        rewritten[incoming] = f"incoming REQ {me} {receiver}"
        target = f"SELF {receiver}\nREQ -"
    return replace(row, prompt="\n".join(rewritten), target=target)
