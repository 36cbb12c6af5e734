"""Whole episodes in real Minecraft: every forward template and both Goal×Capability modes.

Each runs through the real pipeline (protocol, compile, Mineflayer bots on the embedded
flying-squid server, verification against the server's ground truth) and must reach the
same C/H/T/F/G verdicts as the simulator on the same episode.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gencoord.prior import Prior
from gencoord.run.episode import Condition, run_episode
from gencoord.tasks import SuiteDocument
from gencoord.tasks.cluster import make_cluster
from gencoord.tasks.instances import build_episode
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.sim import SimExecutor

pytestmark = pytest.mark.minecraft

FORWARD = sorted(
    [
        "ACTIVE_ORDER_BRANCH",
        "BUILD_SITE_A_OR_B",
        "CHEST_A_OR_B",
        "CHEST_OR_CRAFTING_TABLE",
        "CRAFT_BEFORE_HANDOFF",
        "CRAFT_THEN_BUILD",
        "DEPOSIT_OR_BUILD",
        "DEPOT_OR_ORDER",
        "DUAL_BUILD_ALLOCATION",
        "PLANKS_OR_STICKS",
        "REMAINING_TERMINAL",
        "SLABS_OR_STAIRS",
    ]
)
CAPABILITY = [("GC_STICK_ORDER", "RAW_PROCESSOR"), ("GC_TABLE_ORDER", "FINISHED_RECEIVER")]


@pytest.fixture(scope="module")
def minecraft() -> Iterator[MinecraftExecutor]:
    executor = MinecraftExecutor()
    yield executor
    executor.close()


def _cases(suites: SuiteDocument) -> list[tuple[str, str]]:
    forward = [(name, sorted(suites.forward.templates[name].goals)[-1]) for name in FORWARD]
    return forward + CAPABILITY


def test_the_cases_cover_every_template_and_mode(suites: SuiteDocument) -> None:
    assert set(FORWARD) == set(suites.forward.templates)
    assert {mode for _, mode in CAPABILITY} == set(suites.goal_capability.modes)


@pytest.mark.parametrize("index", range(len(FORWARD) + len(CAPABILITY)))
def test_an_episode_gets_the_simulators_verdicts(
    index: int, minecraft: MinecraftExecutor, prior: Prior, suites: SuiteDocument
) -> None:
    template, choice = _cases(suites)[index]
    forward = template in suites.forward.templates
    cluster = make_cluster(template, choice, seed=3, param_choice=1 if forward else 0, suites=suites)
    spec = build_episode(cluster, 0, 3, prior, suites)
    simulated = run_episode(spec, executor=SimExecutor(prior.game), prior=prior, suites=suites)
    real = run_episode(spec, executor=minecraft, prior=prior, suites=suites)
    assert real.execution is not None and simulated.execution is not None
    failures = [r.failure for r in real.execution.records if r.failure is not None]
    assert real.outcome.stages == simulated.outcome.stages, (template, choice, failures, real.outcome.message)
    assert real.execution.final.discrepancies == ()
    assert [r.action for r in real.execution.records] == [r.action for r in simulated.execution.records]


def test_a_single_step_sender_takes_its_first_step_in_minecraft_before_deciding_the_rest(
    minecraft: MinecraftExecutor, prior: Prior, suites: SuiteDocument
) -> None:
    cluster = make_cluster("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", seed=7, param_choice=1, suites=suites)
    spec = build_episode(cluster, 1, 7, prior, suites)
    simulated = run_episode(spec, Condition.SINGLE_STEP, executor=SimExecutor(prior.game), prior=prior, suites=suites)
    real = run_episode(spec, Condition.SINGLE_STEP, executor=minecraft, prior=prior, suites=suites)
    assert real.execution is not None and simulated.execution is not None
    assert real.outcome.stages == simulated.outcome.stages, real.outcome.message
    step = [r for r in real.execution.records if r.action.task == f"{spec.sender}#1"]
    assert step and list(real.execution.records[: len(step)]) == step  # run first, in the world, before the rest
    assert sorted(r.index for r in real.execution.records) == list(range(len(real.execution.program.actions)))
    assert real.execution.final.discrepancies == ()


@pytest.mark.parametrize(
    ("template", "condition"),
    [("CHEST_OR_CRAFTING_TABLE", Condition.GOAL_DELIVERY), ("DEPOSIT_OR_BUILD", Condition.COMPATIBLE_ALTERNATIVE)],
)
def test_a_private_structure_delivery_gets_the_simulators_verdicts_in_minecraft(
    template: str, condition: Condition, minecraft: MinecraftExecutor, prior: Prior, suites: SuiteDocument
) -> None:
    """The receiver plans a delivered GOAL itself (crafting included), or fulfils a compatible alternative."""
    cluster = make_cluster(template, sorted(suites.forward.templates[template].goals)[0], seed=5, suites=suites)
    spec = build_episode(cluster, 1, 5, prior, suites)
    simulated = run_episode(spec, condition, executor=SimExecutor(prior.game), prior=prior, suites=suites)
    real = run_episode(spec, condition, executor=minecraft, prior=prior, suites=suites)
    assert real.execution is not None and real.protocol.trace.delivery is not None
    assert real.outcome.stages == simulated.outcome.stages, real.outcome.message
    assert real.outcome.stages["F"] and real.outcome.stages["G"] == (condition is Condition.GOAL_DELIVERY)
    assert real.execution.final.discrepancies == ()
