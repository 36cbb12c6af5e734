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

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Each public name is imported from its home module on first use (PEP 562), so that
# ``import gencoord.x`` (the command line's ``--help`` above all) does not load every layer.
_HOMES = {
    "Backend": "gencoord.backends.base",
    "Condition": "gencoord.run.episode",
    "ConformanceError": "gencoord.errors",
    "EpisodeResult": "gencoord.run.episode",
    "EpisodeSpec": "gencoord.tasks.episode",
    "Executor": "gencoord.worlds.executor",
    "Fail": "gencoord.protocol.result",
    "FailureCode": "gencoord.errors",
    "GencoordError": "gencoord.errors",
    "GenerationRequest": "gencoord.protocol.generation",
    "NoCommitment": "gencoord.protocol.result",
    "Prior": "gencoord.prior.prior",
    "Proposal": "gencoord.dsl.ast",
    "ProtocolResult": "gencoord.protocol.result",
    "Reply": "gencoord.protocol.generation",
    "SimExecutor": "gencoord.worlds.sim.executor",
    "Stage": "gencoord.protocol.generation",
    "Success": "gencoord.protocol.result",
    "build_episode": "gencoord.tasks.episode",
    "check_backend": "gencoord.backends.conformance",
    "check_executor": "gencoord.worlds.conformance",
    "default_prior": "gencoord.prior.load",
    "default_suites": "gencoord.tasks.spec",
    "load_prior": "gencoord.prior.load",
    "make_cluster": "gencoord.tasks.cluster",
    "parse": "gencoord.dsl.parse",
    "run_episode": "gencoord.run.episode",
    "run_feedback": "gencoord.run.lifecycle",
    "run_forward": "gencoord.run.lifecycle",
    "serialize": "gencoord.dsl.serialize",
}


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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gencoord' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
