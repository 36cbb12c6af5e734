"""Natural-language descriptions of private facts (paper Table S16 / v2 S36).

Training descriptions pair seen facts with training openers; the evaluation conditions
keep that phrasing out: C1 recombines seen facts with unseen openers, C2 uses unseen
paraphrases, C3 adds an irrelevant sentence to C2.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from gencoord._config import package_text, parse_toml
from gencoord.errors import ConfigError

CONDITIONS = ("C1", "C2", "C3")


@dataclass(frozen=True, slots=True)
class Description:
    text: str
    binding: str
    condition: str  # train, C1, C2, C3


@cache
def descriptions() -> tuple[Description, ...]:
    """Training descriptions and the three held-out evaluation conditions, deterministic."""
    raw = parse_toml(package_text("gencoord.tasks", "descriptions.toml"), "descriptions.toml", ConfigError)
    openers, distractors = raw["openers"], raw["distractors"]["sentences"]
    rows: list[Description] = []
    for index, (binding, facts) in enumerate(sorted(raw["bindings"].items())):
        for fact in facts["seen"]:
            rows += [Description(o.format(fact=fact), binding, "train") for o in openers["train"]]
            rows += [Description(o.format(fact=fact), binding, "C1") for o in openers["recombined"]]
        for fact in facts["unseen"]:
            for number, opener in enumerate(openers["train"]):
                text = opener.format(fact=fact)
                rows.append(Description(text, binding, "C2"))
                noise = distractors[(index + number) % len(distractors)]
                rows.append(Description(f"{noise} {text}" if number % 2 else f"{text} {noise}", binding, "C3"))
    return tuple(rows)


def describe(binding: str, condition: str, key: str) -> str:
    """One description of ``binding`` in ``condition``, chosen deterministically by ``key``."""
    options = [row.text for row in descriptions() if row.binding == binding and row.condition == condition]
    if not options:
        raise KeyError(f"no {condition} description of {binding}")
    return random.Random(key).choice(options)
