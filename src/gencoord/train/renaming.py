"""Fresh names for a training row, so that a small model learns to copy names rather than recall them.

Trained on a handful of templates, a tiny model recalls each template's output from its
name and never looks at the task structure in its input; a held-out template's names
(``roof_site``, ``MARKER_TERMINAL``) are then out of its reach however they are encoded.
Renaming a row's copyable instance names (binding codes and places that its prompt shows
and its target writes) to fresh random strings, consistently in both, leaves copying from
the input as the only way to write them. A name the prompt does not show stays: renamed,
nothing could recover it (a Goal×Capability goal names what to build; the order chest is
known, not shown). The fresh strings are outside the vocabulary, so the tiny codec
spells them a character per token, which is how a held-out name reaches the model too.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Iterable

from gencoord.prior.prior import Prior

_NAME_CHARACTER = "A-Za-z_"


def instance_names(prior: Prior) -> frozenset[str]:
    """The names a template instance binds: binding codes and places (public, in the prior)."""
    return frozenset(prior.codebook) | frozenset(prior.default_episode.refs)


def fresh_name(like: str, rng: random.Random, taken: Iterable[str] = ()) -> str:
    """A random name of ``like``'s case (codes are upper case, places lower case), not in ``taken``."""
    letters = string.ascii_uppercase if like.isupper() else string.ascii_lowercase
    avoid = set(taken)
    while True:
        parts = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 6))) for _ in range(rng.randint(1, 2))]
        name = "_".join(parts)
        if name not in avoid and name != like:
            return name


def _names_in(text: str, names: frozenset[str]) -> set[str]:
    return {match.group(0) for match in re.finditer(f"[{_NAME_CHARACTER}]+", text)} & names


def renamed(prompt: str, target: str, names: frozenset[str], rate: float, rng: random.Random) -> tuple[str, str]:
    """``prompt`` and ``target`` with each of ``names`` that both hold replaced, with probability ``rate``, by one
    fresh name in both."""
    copyable = sorted(_names_in(prompt, names) & _names_in(target, names))
    fresh: dict[str, str] = {}
    for name in copyable:
        if rng.random() < rate:
            fresh[name] = fresh_name(name, rng, taken=[*names, *fresh.values()])
    if not fresh:
        return prompt, target
    pattern = re.compile(
        f"(?<![{_NAME_CHARACTER}])("
        + "|".join(map(re.escape, sorted(fresh, key=len, reverse=True)))
        + f")(?![{_NAME_CHARACTER}])"
    )

    def swap(text: str) -> str:
        return pattern.sub(lambda match: fresh[match.group(1)], text)

    return swap(prompt), swap(target)
