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
from gencoord.dsl.ast import Proposal
from gencoord.planning.delivery import realized_path, received
from gencoord.prior import default_prior
from gencoord.protocol.delivery import Delivery, parse_delivery


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

    def extra_headers(self, status: int) -> dict[str, str]:
        """Headers beside the JSON's own (a rate limit's ``Retry-After``)."""
        return {}

    def do_POST(self) -> None:
        status, payload = self.reply(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in self.extra_headers(status).items():
            self.send_header(name, value)
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
    delivered = re.search(r"^incoming ((?:PATH|SLICE|GOAL) .+)$", prompt, re.MULTILINE)
    if delivered:  # a private-structure delivery: what the deterministic receiver takes on, from the prompt alone
        delivery = parse_delivery(delivered.group(1))
        assert isinstance(delivery, Delivery)
        held = re.search(r"^inventory: (.+)$", prompt, re.MULTILINE)
        assert held
        bag = (
            {}
            if held.group(1) == "empty"
            else {k: int(v) for k, v in (p.split("=") for p in held.group(1).split(", "))}
        )
        path = realized_path(delivery, received(delivery, bag), prior)
        return prior.serialize(Proposal(path, ()))
    binding = re.search(r"^  binding: (\S+)$", prompt, re.MULTILINE)
    agent = re.search(r"^agent: (\S+)$", prompt, re.MULTILINE)
    peer = re.search(r"^peer: (\S+)$", prompt, re.MULTILINE)
    quantities = re.search(r"^quantities: (.+)$", prompt, re.MULTILINE)
    assert binding and agent and peer and quantities
    params = {k: int(v) for k, v in (item.split("=") for item in quantities.group(1).split(", "))}
    return prior.serialize(composed(prior, binding.group(1), agent.group(1), peer.group(1), params))


class TeamApi(ChatHandler):
    """Answers every team message as the planner and the rule peers would, from the prompt alone.

    It proves the team prompt carries what a player of each role needs: the lead's view is
    rebuilt from its lines, a peer's bag and question likewise, and the answer is what the
    deterministic player writes from them.
    """

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = body["messages"][-1]["content"]
        return 200, completion(body["model"], team_answer(prompt), len(prompt) // 4, 20)


def _bag(text: str) -> dict[str, int]:
    """A bag line: a peer's ``item=count`` pairs, or the lead's ``q=count,item=item`` entries."""
    if text == "-":
        return {}
    lead = re.findall(r"q=(\d+),item=(\S+)", text)
    if lead:
        return {item: int(count) for count, item in lead}
    return {k: int(v) for k, v in (pair.split("=") for pair in text.split(" "))}


def team_answer(prompt: str) -> str:
    """The deterministic player's answer, in typed lines or, when the prompt says so, in the dialogue's words."""
    from gencoord.backends.peer import READY, RulePeer  # noqa: PLC0415
    from gencoord.dsl import team_dialogue  # noqa: PLC0415
    from gencoord.planning.planner import plan_team  # noqa: PLC0415
    from gencoord.prior.load import team_prior  # noqa: PLC0415
    from gencoord.protocol.generation import GenerationRequest, Stage  # noqa: PLC0415
    from gencoord.protocol.response import parse_response  # noqa: PLC0415
    from gencoord.protocol.supply import SupplyQuery, parse_answer  # noqa: PLC0415
    from gencoord.tasks.context import LocalContext  # noqa: PLC0415
    from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld  # noqa: PLC0415

    prior = team_prior()
    lines = dict(line.split(" ", 1) for line in prompt.split("\n") if " " in line)
    stage, agent = Stage(lines["stage"]), lines["agent"].split(" ")[0]
    words = lines.get("surface") == "freeform"
    if stage is Stage.TEAM_LEAD:
        count, item, _, holder = lines["goal"].split(" ")
        bags = re.findall(r"^bag (\S+): (.+)$", prompt, re.MULTILINE)
        cannot = dict(re.findall(r"^cannot (\S+): (.+)$", prompt, re.MULTILINE))
        agents = [TeamAgent(name=name, inventory=_bag(bag), blocked=cannot.get(name, "").split()) for name, bag in bags]
        world = TeamWorld(crafting_table=lines["table"] == "placed", resources=lines.get("gather", "").split())
        goal = TeamGoal(item=item, count=int(count), holder=holder)
        task = TeamTask(id="stub", agents=agents, goal=goal, world=world)
        proposal = plan_team(task, agent, prior).proposal
        assert proposal is not None
        return team_dialogue.say_plan(proposal, agent) if words else prior.serialize(proposal)
    bag = _bag(re.search(r"^bag \S+: (.+)$", prompt, re.MULTILINE).group(1))  # type: ignore[union-attr]
    blocked = tuple(lines.get("cannot", "").split())
    lead = lines["lead"]
    private = {READY: lines["ready"]} if "ready" in lines else {}
    context = LocalContext(agent, "peer", lead, None, (), {}, bag, {}, private, blocked=blocked)
    delivered = lines["incoming"].replace(" / ", "\n")
    if stage is Stage.TEAM_RESPONSE and words:
        heard = team_dialogue.hear_proposal(delivered, prior.vocab)
        decision = RulePeer(prior).generate(context, GenerationRequest(agent, stage, lead, prior.serialize(heard)))
        response = parse_response(decision.text)
        last = next(r.plan for r in heard.peer_requests if r.target == agent)[-1]
        return team_dialogue.say_response(response.decision, dict(response.extra), lead, last)
    said = RulePeer(prior).generate(context, GenerationRequest(agent, stage, lead, delivered)).text
    if stage is Stage.TEAM_HAVE and words:
        answer = parse_answer(said, SupplyQuery(tuple(delivered.split(" ")[1:])))
        return team_dialogue.say_have(answer.holds, answer.cannot, lead, agent)
    return said
