"""The gate's gray zone judged by a model named in the config, through the real harness."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from gencoord.errors import ConfigError
from gencoord.eval.config import parse_experiment
from gencoord.eval.runner import create_run, read_records, run_experiment


class _Judge(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that always answers ESCALATE and remembers the prompts."""

    prompts: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Judge.prompts.append(body["messages"][-1]["content"])
        payload = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ESCALATE"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51},
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def judge() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"api:http://127.0.0.1:{server.server_address[1]}/v1#judge"
    server.shutdown()


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
