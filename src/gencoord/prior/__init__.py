"""The executable prior K: skill catalog, typed schema, grounding, task structure, codebook."""

from gencoord.prior.compose import compose
from gencoord.prior.contract import check_proposal
from gencoord.prior.load import default_prior, load_prior
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode, Ref

__all__ = ["Prior", "PublicEpisode", "Ref", "check_proposal", "compose", "default_prior", "load_prior"]
