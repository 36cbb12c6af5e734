"""The gate's helpers are a backend: the rule by default, an endpoint or a model instead, a hostile one refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from gencoord.backends.registry import team_players
from gencoord.errors import ConfigError
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.experiment import config_digest
from gencoord.gate.config import default_gate_config
from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import gate_pool
from gencoord.gate.rounds import run_gate_episode
from gencoord.prior.load import default_prior
from gencoord.protocol.generation import GenerationRequest, Reply
from gencoord.tasks.context import LocalContext
from tests.chat_stub import TeamApi, serving

PRIOR = default_prior()
TALK = GateCondition.COMMUNICATION_FIRST


def _runs(helper: object | None, count: int = 10) -> list[dict[str, object]]:
    config = default_gate_config()
    return [
        run_gate_episode(instance, TALK, config=config, helper=helper).record()  # type: ignore[arg-type]
        for instance in gate_pool(count, seed=0)
    ]


def test_an_endpoint_helping_as_the_rule_would_gives_the_rules_episodes() -> None:
    rule = _runs(None)
    with serving(TeamApi) as url:
        endpoint = _runs(team_players(f"lead=planner,peers=api:{url}#stub", PRIOR).peers)
    calls = [int(record.pop("helper_model_calls")) for record in endpoint]  # type: ignore[call-overload]
    assert [r.pop("helper_model_calls") for r in rule] == [0] * len(rule)
    assert endpoint == rule and sum(calls) > 0


class Garbled:
    """A helper that answers what no reader accepts."""

    name = "garbled"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return Reply(self.text, model_calls=1)


@pytest.mark.parametrize("text", ["", "MAYBE", "COUNTER reason=SHORT", "ACCEPT\nREQ -", "x" * 5000])
def test_a_helper_whose_answer_cannot_be_read_refuses_and_the_episode_goes_on(text: str) -> None:
    records = _runs(Garbled(text), count=6)
    escalated = [issue for record in records for issue in record["issues"] if issue["escalated"]]  # type: ignore[attr-defined]
    assert escalated and all(issue["exchange_error"] for issue in escalated)
    assert all(record["rounds"] <= record["budget"] for record in records)


def test_a_gate_config_names_its_helpers_and_the_rule_keeps_the_digest(tmp_path: Path) -> None:
    shipped = load_experiment(find_experiment("gate_ablation"))
    assert str(shipped.helpers) == "rule"  # type: ignore[union-attr]
    helped = shipped.model_copy(update={"helpers": "api:http://h/v1#m"})
    assert config_digest(helped) != config_digest(shipped)
    with pytest.raises(ValueError, match="cannot answer as a team peer"):
        type(shipped).model_validate({**shipped.model_dump(), "helpers": "planner"})
    with pytest.raises(ConfigError):
        team_players("lead=planner,peers=planner", PRIOR)
