"""gencoord: executable skill-path commitments for embodied agent teams (GenCoord).

The public surface, in one import::

    import gencoord

    proposal = gencoord.parse("SELF -\\nREQ agent_a craft.item(q=1,input=oak_planks,item=crafting_table)")
    prior = gencoord.default_prior()                      # or gencoord.load_prior(path)
    result = gencoord.run_forward(generate, "agent_b", "agent_a", prior, prior.episode("ACTIVE_ORDER_BRANCH"))
    cluster = gencoord.make_cluster("CHEST_A_OR_B", "CHEST_A")
    spec = gencoord.build_episode(cluster, 0, 0, prior, gencoord.default_suites())
    episode = gencoord.run_episode(spec)                  # rule backends on the embedded world
    gencoord.check_executor(MyExecutor())                 # the shipped conformance checks
    gencoord.check_backend(MyBackend(), [gencoord.Stage.SENDER_INITIAL])

Every failure a user can cause is a :class:`GencoordError` with a stable ``code`` and ``reason``.
"""

__version__ = "0.1.0"  # before the imports below: submodules read it

from gencoord.backends.base import Backend
from gencoord.backends.conformance import check_backend
from gencoord.dsl.ast import Proposal
from gencoord.dsl.parse import parse
from gencoord.dsl.serialize import serialize
from gencoord.errors import ConformanceError, FailureCode, GencoordError
from gencoord.prior.load import default_prior, load_prior
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success
from gencoord.run.episode import Condition, EpisodeResult, run_episode
from gencoord.run.lifecycle import run_feedback, run_forward
from gencoord.tasks.cluster import make_cluster
from gencoord.tasks.episode import EpisodeSpec, build_episode
from gencoord.tasks.spec import default_suites
from gencoord.worlds.conformance import check_executor
from gencoord.worlds.executor import Executor
from gencoord.worlds.sim.executor import SimExecutor

__all__ = [
    "Backend",
    "Condition",
    "ConformanceError",
    "EpisodeResult",
    "EpisodeSpec",
    "Executor",
    "Fail",
    "FailureCode",
    "GencoordError",
    "GenerationRequest",
    "NoCommitment",
    "Prior",
    "Proposal",
    "ProtocolResult",
    "Reply",
    "SimExecutor",
    "Stage",
    "Success",
    "__version__",
    "build_episode",
    "check_backend",
    "check_executor",
    "default_prior",
    "default_suites",
    "load_prior",
    "make_cluster",
    "parse",
    "run_episode",
    "run_feedback",
    "run_forward",
    "serialize",
]
