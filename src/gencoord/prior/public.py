"""The public episode instantiation xi_pub: who takes part and what may be named."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict


class Ref(BaseModel):
    """A grounding reference: a container, site, station or resource area."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str
    block: str | None = None
    position: tuple[int, int, int]
    entity: str | None = None  # a resource area of animals (a herd): the animal hunted there


@dataclass(frozen=True)
class PublicEpisode:
    """What every agent of an episode may know: the agents, the refs, the template.

    ``template`` restricts admissible bindings to that template's branches; None
    admits the whole codebook. ``unplaced`` names stations that stand only once an
    agent places the block (a team task whose crafting table is still in someone's bag).
    """

    agents: tuple[str, ...]
    refs: Mapping[str, Ref]
    template: str | None = None
    unplaced: frozenset[str] = frozenset()  # station spots with no block until an agent places one

    def ref_kind(self, name: str) -> str | None:
        ref = self.refs.get(name)
        return ref.kind if ref is not None else None

    def station_for(self, block: str) -> str | None:
        """The first station of the episode built from ``block`` (e.g. a crafting table)."""
        return next((name for name, ref in self.refs.items() if ref.kind == "station" and ref.block == block), None)
