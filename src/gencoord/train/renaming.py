"""Fresh names for a training row, so that a small model learns to copy names rather than recall them.

Trained on a handful of templates, a tiny model recalls each template's output from its
name and never looks at the task structure in its input; a held-out template's names
(``roof_site``, ``MARKER_TERMINAL``, ``oak_slab``) are then out of its reach however they
are encoded. Renaming a row's copyable instance names (binding codes, places and items that
its prompt shows and its target writes) to fresh random strings, consistently in both,
leaves copying from the input as the only way to write them. A name the prompt does not
show stays: renamed, nothing could recover it (a Goal×Capability goal names what to build;
the order chest is known, not shown). A forward template's name is renamed where the prompt
shows it, so the template cannot be recalled by name and its structure must be read from
the view, as a held-out template's must. The fresh strings are outside the vocabulary, so
the tiny codec reads them as a held-out name reaches the model: as a name slot, or spelled.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Iterable

from gencoord.prior.prior import Prior

_NAME_CHARACTER = "A-Za-z_"


def instance_names(prior: Prior) -> frozenset[str]:
    """The names a template instance binds: binding codes, places and the items its paths name (public, in the
    prior)."""
    items = {
        match.group(1)
        for spec in prior.templates.values()
        for paths in spec.bindings.values()
        for text in (paths.sender, paths.receiver)
        for match in re.finditer(r"(?:item|input)=([a-z_]+)", text)
    }
    return frozenset(prior.codebook) | frozenset(prior.default_episode.refs) | frozenset(items)


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


def renamed(
    prompt: str,
    target: str,
    names: frozenset[str],
    rate: float,
    rng: random.Random,
    templates: frozenset[str] = frozenset(),
) -> tuple[str, str]:
    """``prompt`` and ``target`` with each of ``names`` that both hold, and each of ``templates`` the prompt
    holds, replaced, with probability ``rate``, by one fresh name in both."""
    copyable = sorted((_names_in(prompt, names) & _names_in(target, names)) | _names_in(prompt, templates))
    names = names | templates
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
