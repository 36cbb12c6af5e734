"""What the codec needs to know about the prior: skill names and key spellings."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from gencoord.dsl.ast import Args, Value

MAX_PATH_TASKS = 5
"""The paper's cap on the tasks of one path; a prior may set another (``limits.max_path_tasks``)."""


@dataclass(frozen=True)
class Vocabulary:
    """The lexical part of the executable prior.

    ``aliases`` maps every accepted key spelling (compact keys included) to its compact
    key; ``key_order`` gives each skill's canonical argument order; ``full_names`` gives
    each compact key's long name for the JSON surface; ``max_path_tasks`` caps every path.
    """

    skills: frozenset[str]
    aliases: Mapping[str, str]
    key_order: Mapping[str, tuple[str, ...]]
    full_names: Mapping[str, str]
    max_path_tasks: int = MAX_PATH_TASKS
    _rank: dict[str, dict[str, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_rank",
            {skill: {key: i for i, key in enumerate(order)} for skill, order in self.key_order.items()},
        )

    @classmethod
    def from_tables(
        cls,
        skills: Mapping[str, Sequence[str]],
        keys: Mapping[str, tuple[str, Sequence[str]]],
        max_path_tasks: int = MAX_PATH_TASKS,
    ) -> Vocabulary:
        """From skill → argument keys in canonical order, and key → (JSON-surface name, alias spellings)."""
        return cls(
            skills=frozenset(skills),
            aliases={spelled: key for key, (_, aliases) in keys.items() for spelled in (key, *aliases)},
            key_order={name: tuple(args) for name, args in skills.items()},
            full_names={key: full for key, (full, _) in keys.items()},
            max_path_tasks=max_path_tasks,
        )

    def canonical_args(self, skill: str, args: Mapping[str, Value]) -> Args:
        """Arguments in the skill's canonical order; keys outside the schema follow, sorted."""
        ordered = tuple((key, args[key]) for key in self.key_order.get(skill, ()) if key in args)
        if len(ordered) == len(args):
            return ordered
        rank = self._rank.get(skill, {})
        return ordered + tuple(sorted((k, v) for k, v in args.items() if k not in rank))


_PRIOR_DATA = Path(__file__).parents[1] / "prior" / "data"
"""The packaged prior's declarative files, read as data: the codec never loads the prior itself."""


@cache
def default_vocabulary() -> Vocabulary:
    """The packaged prior's vocabulary (its 8 skills and the paper's compact keys), so ``parse(text)`` needs no prior.

    A user prior with other skills or keys brings its own: ``Prior.parse`` uses ``prior.vocab``.
    """
    skills = tomllib.loads((_PRIOR_DATA / "skills.toml").read_text(encoding="utf-8"))["skills"]
    keys = tomllib.loads((_PRIOR_DATA / "keys.toml").read_text(encoding="utf-8"))["keys"]
    return Vocabulary.from_tables(
        {name: spec["args"] for name, spec in skills.items()},
        {key: (spec["full"], spec.get("aliases", [])) for key, spec in keys.items()},
    )
