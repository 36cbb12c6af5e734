"""The task suites: forward templates and Goal×Capability, clusters, pools, episodes."""

from gencoord.tasks.cluster import PAPER_POOLS, Cluster, Split, WorldVariant, draw_pool, make_cluster, paper_pool
from gencoord.tasks.context import LocalContext
from gencoord.tasks.instances import ROLE_PERMUTATIONS, EpisodeSpec, build_episode
from gencoord.tasks.suites import SuiteDocument, default_suites, load_suites

__all__ = [
    "PAPER_POOLS",
    "ROLE_PERMUTATIONS",
    "Cluster",
    "EpisodeSpec",
    "LocalContext",
    "Split",
    "SuiteDocument",
    "WorldVariant",
    "build_episode",
    "default_suites",
    "draw_pool",
    "load_suites",
    "make_cluster",
    "paper_pool",
]
