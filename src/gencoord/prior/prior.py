"""The executable prior K = (skills, task structure, typed schema, grounding contract)."""

from __future__ import annotations

from functools import cached_property

from gencoord.dsl.ast import Path, Proposal
from gencoord.dsl.parse import parse
from gencoord.dsl.serialize import serialize
from gencoord.dsl.vocabulary import Vocabulary
from gencoord.prior.gamedata import GameData
from gencoord.prior.model import PriorDocument, SkillSpec
from gencoord.prior.public import PublicEpisode


class Prior:
    """A loaded, validated prior; shared read-only by every agent of an episode."""

    def __init__(self, document: PriorDocument, game: GameData, origin: str) -> None:
        self.document = document
        self.game = game
        self.origin = origin
        self.keys = document.keys
        self.skills: dict[str, SkillSpec] = document.skills
        self.templates = document.templates
        self.workcell_modes = document.workcell_modes
        self.counter_offers = document.counter_offers
        self.max_quantity = document.limits.max_quantity
        self.codebook: dict[str, str] = {
            binding: template for template, spec in document.templates.items() for binding in spec.bindings
        }
        self.vocab = Vocabulary.from_tables(
            {name: spec.args for name, spec in document.skills.items()},
            {key: (spec.full, spec.aliases) for key, spec in document.keys.items()},
            document.limits.max_path_tasks,
        )
        self.spellings: dict[str, frozenset[str]] = {
            name: frozenset(s for key in spec.args for s in (key, *document.keys[key].aliases))
            for name, spec in document.skills.items()
        }

    @cached_property
    def default_episode(self) -> PublicEpisode:
        grounding = self.document.grounding
        return PublicEpisode(tuple(grounding.agents), dict(grounding.refs))

    def episode(self, template: str | None = None, agents: tuple[str, ...] | None = None) -> PublicEpisode:
        """A public episode over the default grounding, optionally for one template."""
        base = self.default_episode
        return PublicEpisode(agents or base.agents, base.refs, template)

    def parse(self, message: str | bytes) -> Proposal:
        return parse(message, self.vocab)

    def parse_path(self, text: str) -> Path:
        """A bare path (``a > b``), parsed and canonicalized as the SELF line of a record."""
        return parse(f"SELF {text}\nREQ -", self.vocab).self_plan

    def serialize(self, proposal: Proposal) -> str:
        return serialize(proposal, self.vocab)

    @property
    def roles(self) -> list[str]:
        return self.document.grounding.roles
