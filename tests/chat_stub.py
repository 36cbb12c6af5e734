"""A local OpenAI-compatible ``/v1/chat/completions`` for tests: no network, answers from Python."""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gencoord.backends.rule import composed
from gencoord.prior import default_prior


def completion(model: str, content: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ChatHandler(http.server.BaseHTTPRequestHandler):
    """Subclasses answer a request body with (HTTP status, JSON payload)."""

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError

    def do_POST(self) -> None:
        status, payload = self.reply(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


@contextmanager
def serving(handler: type[ChatHandler]) -> Iterator[str]:
    """The stub's base URL (``http://127.0.0.1:<port>/v1``) while the block runs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()


class ComposerApi(ChatHandler):
    """Answers like a perfect model (via the composer)."""

    failures_left = 1  # the first call fails with a 503: the backend must retry

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if ComposerApi.failures_left:
            ComposerApi.failures_left -= 1
            return 503, {"error": {"message": "busy"}}
        prompt = body["messages"][-1]["content"]
        return 200, completion(body["model"], composer_answer(prompt), len(prompt) // 4, 30)


def composer_answer(prompt: str) -> str:
    incoming = re.search(r"^incoming (REQ \S+ (.+))$", prompt, re.MULTILINE)
    if incoming:
        return f"```\nSELF {incoming.group(2)}\nREQ -\n```"
    prior = default_prior()
    binding = re.search(r"^  binding: (\S+)$", prompt, re.MULTILINE)
    agent = re.search(r"^agent: (\S+)$", prompt, re.MULTILINE)
    peer = re.search(r"^peer: (\S+)$", prompt, re.MULTILINE)
    quantities = re.search(r"^quantities: (.+)$", prompt, re.MULTILINE)
    assert binding and agent and peer and quantities
    params = {k: int(v) for k, v in (item.split("=") for item in quantities.group(1).split(", "))}
    return prior.serialize(composed(prior, binding.group(1), agent.group(1), peer.group(1), params))
