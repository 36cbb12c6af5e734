"""The gate's gray zone judged by a model named in the config, through the real harness."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gencoord.errors import ConfigError
from gencoord.eval.config import parse_experiment
from gencoord.eval.runner import create_run, read_records, run_experiment
from tests.chat_stub import ChatHandler, completion, serving


class _Judge(ChatHandler):
    """Always answers ESCALATE and remembers the prompts."""

    prompts: ClassVar[list[str]] = []

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        _Judge.prompts.append(body["messages"][-1]["content"])
        return 200, completion(body["model"], "ESCALATE", 50, 1)


@pytest.fixture
def judge() -> Iterator[str]:
    with serving(_Judge) as url:
        yield f"api:{url}#judge"


def test_an_api_adjudicator_decides_the_gray_zone_of_a_gate_run(judge: str, tmp_path: Path) -> None:
    _Judge.prompts.clear()
    config = parse_experiment(
        f'name = "judged"\nkind = "gate"\ninstances = 12\nconditions = ["full", "communication_first"]\n'
        f'adjudicator = "{judge}"\n'
    )
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    records = read_records(run_dir)
    assert {r["adjudicator"] for r in records} == {judge}
    assert _Judge.prompts and all("ESCALATE or LOCAL" in prompt and "features:" in prompt for prompt in _Judge.prompts)


def test_an_unknown_adjudicator_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown adjudicator"):
        parse_experiment(
            'name = "x"\nkind = "gate"\ninstances = 2\nconditions = ["full"]\nreference = "full"\n'
            'adjudicator = "oracle"\n'
        )
