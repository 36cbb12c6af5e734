"""What the codec needs to know about the prior: skill names and key spellings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gencoord.dsl.ast import Args, Value


@dataclass(frozen=True)
class Vocabulary:
    """The lexical part of the executable prior.

    ``aliases`` maps every accepted key spelling (compact keys included) to its compact
    key; ``key_order`` gives each skill's canonical argument order; ``full_names`` gives
    each compact key's long name for the JSON surface.
    """

    skills: frozenset[str]
    aliases: Mapping[str, str]
    key_order: Mapping[str, tuple[str, ...]]
    full_names: Mapping[str, str]
    _rank: dict[str, dict[str, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_rank",
            {skill: {key: i for i, key in enumerate(order)} for skill, order in self.key_order.items()},
        )

    def canonical_args(self, skill: str, args: Mapping[str, Value]) -> Args:
        """Arguments in the skill's canonical order; keys outside the schema follow, sorted."""
        ordered = tuple((key, args[key]) for key in self.key_order.get(skill, ()) if key in args)
        if len(ordered) == len(args):
            return ordered
        rank = self._rank.get(skill, {})
        return ordered + tuple(sorted((k, v) for k, v in args.items() if k not in rank))
