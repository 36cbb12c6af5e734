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
    config = gencoord.load_experiment(Path("my.toml"))   # any kind: pair episodes, gate, team, composition, a plugin's
    summary = gencoord.run_experiment(config, gencoord.create_run(config))
    tasks = gencoord.read_task_file("mindcraft_tasks.json")   # gencoord's format or MINDcraft's, as shipped
    result = gencoord.run_task(tasks.tasks[0])             # any kind: crafting, cooking, construction

Writing a backend takes :class:`Backend` and what it reads, :class:`LocalContext`; a world,
:class:`Executor` with :class:`WorldSpec`, :class:`Program`, :class:`ActionRecord`,
:class:`WorldSnapshot` and :data:`HandoffHook`. A new backend family, experiment kind or
task format or world registers with :func:`register_backend`, :func:`register_experiment_kind`,
:func:`register_task_format` or :func:`register_world`,
or through an entry point (see the manual's Extending page).

Every failure a user can cause is a :class:`GencoordError` with a stable ``code`` and ``reason``.
"""

__version__ = "0.1.0"  # before the imports below: submodules read it

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gencoord.backends.base import Backend
    from gencoord.backends.conformance import check_backend
    from gencoord.backends.families import BackendFamily, BackendSpec, parse_backend, register_backend
    from gencoord.dsl.ast import Proposal
    from gencoord.dsl.parse import parse
    from gencoord.dsl.serialize import serialize
    from gencoord.errors import ConformanceError, FailureCode, GencoordError, OperationalError, ProtocolFailureError
    from gencoord.eval.config import load_experiment
    from gencoord.eval.experiment import ExperimentKind, ReportParts, RunPlan, plan_run, register_experiment_kind
    from gencoord.eval.report import write_report
    from gencoord.eval.runner import create_run, run_experiment
    from gencoord.prior.load import default_prior, load_prior
    from gencoord.prior.prior import Prior
    from gencoord.protocol.generation import GenerationRequest, Reply, Stage
    from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success
    from gencoord.run.any_task import run_task, task_record
    from gencoord.run.episode import Condition, EpisodeResult, run_episode
    from gencoord.run.kinds import TaskKind, register_task_kind
    from gencoord.run.lifecycle import run_feedback, run_forward
    from gencoord.run.team import run_team_task
    from gencoord.run.team_run import TeamResult
    from gencoord.tasks.cluster import make_cluster
    from gencoord.tasks.context import LocalContext
    from gencoord.tasks.instances import EpisodeSpec, build_episode
    from gencoord.tasks.suites import default_suites
    from gencoord.tasks.task_format import TaskFileFormat
    from gencoord.tasks.team import TaskBase, TeamTask
    from gencoord.tasks.team_files import load_team_tasks, read_task_file, register_task_format
    from gencoord.worlds.actions import Action, Program
    from gencoord.worlds.conformance import check_executor
    from gencoord.worlds.executor import ActionFailure, ActionRecord, Executor, HandoffHook, WorldSnapshot
    from gencoord.worlds.registry import World, register_world
    from gencoord.worlds.sim.executor import SimExecutor
    from gencoord.worlds.spec import WorldSpec

# Each public name is imported from its home module on first use (PEP 562), so that
# ``import gencoord.x`` (the command line's ``--help`` above all) does not load every layer.
_HOMES = {
    "Action": "gencoord.worlds.actions",
    "ActionFailure": "gencoord.worlds.executor",
    "ActionRecord": "gencoord.worlds.executor",
    "Backend": "gencoord.backends.base",
    "BackendFamily": "gencoord.backends.families",
    "BackendSpec": "gencoord.backends.families",
    "Condition": "gencoord.run.episode",
    "ConformanceError": "gencoord.errors",
    "EpisodeResult": "gencoord.run.episode",
    "EpisodeSpec": "gencoord.tasks.instances",
    "Executor": "gencoord.worlds.executor",
    "ExperimentKind": "gencoord.eval.experiment",
    "Fail": "gencoord.protocol.result",
    "FailureCode": "gencoord.errors",
    "GencoordError": "gencoord.errors",
    "OperationalError": "gencoord.errors",
    "ProtocolFailureError": "gencoord.errors",
    "GenerationRequest": "gencoord.protocol.generation",
    "HandoffHook": "gencoord.worlds.executor",
    "LocalContext": "gencoord.tasks.context",
    "NoCommitment": "gencoord.protocol.result",
    "Prior": "gencoord.prior.prior",
    "Program": "gencoord.worlds.actions",
    "Proposal": "gencoord.dsl.ast",
    "ProtocolResult": "gencoord.protocol.result",
    "Reply": "gencoord.protocol.generation",
    "ReportParts": "gencoord.eval.experiment",
    "RunPlan": "gencoord.eval.experiment",
    "SimExecutor": "gencoord.worlds.sim.executor",
    "Stage": "gencoord.protocol.generation",
    "Success": "gencoord.protocol.result",
    "TaskBase": "gencoord.tasks.team",
    "TaskFileFormat": "gencoord.tasks.task_format",
    "TaskKind": "gencoord.run.kinds",
    "TeamResult": "gencoord.run.team_run",
    "TeamTask": "gencoord.tasks.team",
    "World": "gencoord.worlds.registry",
    "WorldSnapshot": "gencoord.worlds.executor",
    "WorldSpec": "gencoord.worlds.spec",
    "build_episode": "gencoord.tasks.instances",
    "check_backend": "gencoord.backends.conformance",
    "check_executor": "gencoord.worlds.conformance",
    "create_run": "gencoord.eval.runner",
    "default_prior": "gencoord.prior.load",
    "default_suites": "gencoord.tasks.suites",
    "load_experiment": "gencoord.eval.config",
    "load_prior": "gencoord.prior.load",
    "load_team_tasks": "gencoord.tasks.team_files",
    "make_cluster": "gencoord.tasks.cluster",
    "parse": "gencoord.dsl.parse",
    "parse_backend": "gencoord.backends.families",
    "plan_run": "gencoord.eval.experiment",
    "read_task_file": "gencoord.tasks.team_files",
    "register_backend": "gencoord.backends.families",
    "register_experiment_kind": "gencoord.eval.experiment",
    "register_task_format": "gencoord.tasks.team_files",
    "register_task_kind": "gencoord.run.kinds",
    "register_world": "gencoord.worlds.registry",
    "run_episode": "gencoord.run.episode",
    "run_experiment": "gencoord.eval.runner",
    "run_feedback": "gencoord.run.lifecycle",
    "run_forward": "gencoord.run.lifecycle",
    "run_team_task": "gencoord.run.team",
    "run_task": "gencoord.run.any_task",
    "task_record": "gencoord.run.any_task",
    "serialize": "gencoord.dsl.serialize",
    "write_report": "gencoord.eval.report",
}


__all__ = [
    "Action",
    "ActionFailure",
    "ActionRecord",
    "Backend",
    "BackendFamily",
    "BackendSpec",
    "Condition",
    "ConformanceError",
    "EpisodeResult",
    "EpisodeSpec",
    "Executor",
    "ExperimentKind",
    "Fail",
    "FailureCode",
    "GencoordError",
    "GenerationRequest",
    "HandoffHook",
    "LocalContext",
    "NoCommitment",
    "OperationalError",
    "Prior",
    "Program",
    "Proposal",
    "ProtocolFailureError",
    "ProtocolResult",
    "Reply",
    "ReportParts",
    "RunPlan",
    "SimExecutor",
    "Stage",
    "Success",
    "TaskBase",
    "TaskFileFormat",
    "TaskKind",
    "TeamResult",
    "TeamTask",
    "World",
    "WorldSnapshot",
    "WorldSpec",
    "__version__",
    "build_episode",
    "check_backend",
    "check_executor",
    "create_run",
    "default_prior",
    "default_suites",
    "load_experiment",
    "load_prior",
    "load_team_tasks",
    "make_cluster",
    "parse",
    "parse_backend",
    "plan_run",
    "read_task_file",
    "register_backend",
    "register_experiment_kind",
    "register_task_format",
    "register_task_kind",
    "register_world",
    "run_episode",
    "run_experiment",
    "run_feedback",
    "run_forward",
    "run_task",
    "run_team_task",
    "serialize",
    "task_record",
    "write_report",
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
