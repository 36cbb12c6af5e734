"""Thinking takes time in the world: team tasks wait their time to commitment, gate writers lose action windows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gencoord.errors import ConfigError
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.experiment import config_digest
from gencoord.gate.config import default_gate_config
from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import gate_pool
from gencoord.gate.rounds import run_gate_episode
from gencoord.prior.load import team_prior
from gencoord.protocol.generation import Generation, Reply
from gencoord.run.team import run_team_task
from gencoord.runtime.thinking import PAPER_MESSAGE_S, THINKING_TASK, Thinking, after_thinking, parse_thinking
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld
from gencoord.worlds.actions import GiveItem, Program, Wait

PRIOR = team_prior()


def _pickaxe(limit: float = 300.0) -> TeamTask:
    return TeamTask(
        id="pickaxe",
        agents=[TeamAgent(name="a", inventory={"stick": 2}), TeamAgent(name="b", inventory={"iron_ingot": 3})],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="a"),
        world=TeamWorld(crafting_table=True),
        time_limit_s=limit,
    )


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6), st.floats(0.05, 30.0))
def test_every_agent_waits_before_its_first_action_and_nothing_else_moves(agents: list[str], seconds: float) -> None:
    actions = tuple(GiveItem(agent, f"t{i}", "a", "dirt", 1) for i, agent in enumerate(agents))
    deps = tuple((i - 1,) if i else () for i in range(len(actions)))
    program = Program(actions, deps, (len(actions) - 1,))
    waited = after_thinking(program, seconds)
    waits = [a for a in waited.actions if isinstance(a, Wait)]
    assert [w.agent for w in waits] == list(dict.fromkeys(agents)) and {w.task for w in waits} == {THINKING_TASK}
    shift = len(waits)
    assert waited.actions[shift:] == actions
    assert waited.deps[shift:] == tuple(tuple(d + shift for d in ds) for ds in deps)
    assert waited.handoffs == (len(actions) - 1 + shift,)
    assert after_thinking(program, 0.0) is program


def test_a_team_task_starts_acting_after_its_exchange_is_written() -> None:
    task = _pickaxe()
    instant = run_team_task(task, PRIOR)
    thought = run_team_task(task, PRIOR, thinking=Thinking(per_message_s=2.0))
    messages = len(thought.generations)
    assert instant.success and thought.success and instant.thinking_s == 0.0
    assert thought.thinking_s == pytest.approx(2.0 * messages)
    assert instant.duration_s is not None and thought.duration_s is not None
    assert thought.duration_s == pytest.approx(instant.duration_s + thought.thinking_s, abs=0.05)
    assert [m.payload for m in thought.wire.messages] == [m.payload for m in instant.wire.messages]


def test_thinking_counts_against_the_tasks_time_limit() -> None:
    fast = run_team_task(_pickaxe(limit=20.0), PRIOR)
    slow = run_team_task(_pickaxe(limit=20.0), PRIOR, thinking=Thinking(per_message_s=10.0))
    assert fast.success and not slow.success and slow.code == "TIME_LIMIT"


def test_measured_thinking_takes_each_replys_own_time() -> None:
    replies = [Generation("a", "team_lead", Reply("x", 1, latency_s=1.25)), Generation("b", "team_have", Reply("y", 0))]
    assert Thinking(measured=True).total(replies) == pytest.approx(1.25)
    assert Thinking(per_message_s=2.0).total(replies) == pytest.approx(4.0)
    assert Thinking().total(replies) == 0.0 and Thinking().none


@pytest.mark.parametrize(("text", "expected"), [("none", 0.0), ("paper", PAPER_MESSAGE_S), ("1.5", 1.5)])
def test_thinking_is_written_by_name_or_seconds(text: str, expected: float) -> None:
    assert parse_thinking(text).per_message_s == pytest.approx(expected)
    assert parse_thinking("measured").measured


@pytest.mark.parametrize("text", ["-1", "fast", "nan", "1e9", ""])
def test_bad_thinking_is_refused_with_its_code(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_thinking(text)
    assert refused.value.reason == "BAD_THINKING"


def test_a_gate_writer_loses_the_windows_its_message_takes_and_no_thinking_changes_nothing() -> None:
    config = default_gate_config()
    instances = gate_pool(12, seed=0)
    talk = GateCondition.COMMUNICATION_FIRST
    plain = [run_gate_episode(instance, talk, config=config) for instance in instances]
    again = [run_gate_episode(instance, talk, config=config, thinking=Thinking()) for instance in instances]
    slow = [run_gate_episode(i, talk, config=config, thinking=Thinking(per_message_s=4.0)) for i in instances]
    assert [r.record() for r in plain] == [r.record() for r in again]
    talked = [(p, s) for p, s in zip(plain, slow, strict=True) if p.messages]
    assert talked, "communication-first talks on some instance"
    assert all(thinking.thinking_s > 0 for _, thinking in talked)
    assert all(quick.thinking_s == 0 for quick in plain)
    assert sum(s.completion_steps for _, s in talked) > sum(p.completion_steps for p, _ in talked)
    assert sum(s.duration_s for _, s in talked) > sum(p.duration_s for p, _ in talked)


def test_a_default_config_keeps_its_digest_and_the_gate_refuses_measured_thinking(tmp_path: object) -> None:
    shipped = load_experiment(find_experiment("gate_ablation"))
    same = shipped.model_copy(update={"thinking": Thinking()})
    assert config_digest(shipped) == config_digest(same)
    slower = shipped.model_copy(update={"thinking": Thinking(per_message_s=1.0)})
    assert config_digest(slower) != config_digest(shipped)
    with pytest.raises(ValueError, match="give per_message_s"):
        type(shipped).model_validate({**shipped.model_dump(), "thinking": {"measured": True}})
