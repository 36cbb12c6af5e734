"""A backend behind any OpenAI-compatible chat API (DeepSeek, vLLM, Ollama, OpenAI, ...).

The prompt carries the grammar in brief, worked examples composed from the shared task
structure (other templates than the agent's own, so it cannot copy its answer; for a
requester's revision, a worked COUNTER from another goal), and the agent's model input.
Transient failures (connection, timeout, rate limit, 5xx) are retried with exponential
backoff; usage is read from the response for token counts and an optional charge estimate.
The reply text goes to the protocol unchecked, like any model output.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import cast

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam

from gencoord.backends.context import model_input
from gencoord.backends.rule import composed
from gencoord.backends.team_input import TEAM_STAGES, team_input
from gencoord.dsl.ast import Proposal
from gencoord.dsl.dialogue import ASK, DONE, FINAL, MORE, PREPOSITIONS, VERBS, scripted
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import BackendError, ConfigError
from gencoord.models.chat import messages
from gencoord.prior.prior import Prior
from gencoord.prior.views import PriorView
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.response import Response
from gencoord.reasons import Reason
from gencoord.tasks.context import LocalContext

TIMEOUT_S = 30.0
"""How long one call may take before it is retried (``timeout_s``: a slower local server's own)."""
MAX_NEW_TOKENS = 512
"""A tuned model's answer budget, as in process (``gencoord.models.generate``): an eight-agent plan runs long."""
_TRANSIENT = (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError, openai.InternalServerError)
_FENCE = re.compile(r"^```[a-z]*\n|\n?```$")
GRAMMAR = (
    "Answer with exactly two lines and nothing else.\n"
    "Line 1: SELF - or SELF followed by your own tasks joined by ' > '.\n"
    "Line 2: REQ - or REQ <peer agent> followed by the tasks you ask the peer to do.\n"
    "A task is skill(key=value,...), e.g. resource.obtain(q=8,item=oak_planks).\n"
    "When you received a request, adopt it as your SELF line and answer REQ -.\n"
    "At stage sender_step commit only your next task (SELF <task>, REQ -); at stage sender_after_obtain, "
    "with that task done, write the rest of your path and the REQ."
)

DELIVERY_RULES = (
    "At stage receiver_delivery you received your part of the sender's plan as one message: "
    "'<KIND> <you> id=- from=<sender> receives=<n>:<item> :: <body>' (receives=- when nothing is handed to you). "
    "PATH: the body is your path; adopt it. SLICE: the body is nodes '<name>@<owner>=<task>' and edges "
    "'<a>-><b>' (a before b), joined by ' ; '; your path is your own nodes in an order the edges allow. "
    "GOAL: the body is conjuncts 'kind(holder,item,quantity)' joined by ' & ' that must hold; plan your own "
    "path to them from your inventory plus what you receive. Answer SELF <your path> and REQ -."
)

DIALOGUE_RULES = (
    "You talk with your peer in a controlled dialogue. Answer with your next turn only, one line.\n"
    "As the sender: open with 'Hi <peer>, <you> here. I will <your steps>.' then ask for one peer step per "
    "turn as '<peer>, please <step>.'; later turns start 'Next, <peer>, please <step>.'. End your last turn with "
    f"'{DONE}' and every other turn with '{MORE}'\n"
    f"As the receiver: answer 'Okay <sender>, I will <the steps just asked>.' then '{FINAL}' once the sender "
    f"said '{DONE}', otherwise '{ASK}'\n"
    "A step is '<verb> <quantity> <item>' followed by '<preposition> <value>' pairs; steps of one path are "
    "joined by ', then '. Verbs: "
    + "; ".join(f"{verb} = {skill}" for skill, verb in VERBS.items())
    + ". Prepositions: "
    + "; ".join(f"{words} = {key}" for key, words in PREPOSITIONS.items())
    + "."
)


TEAM_RULES = {
    Stage.TEAM_LEAD: (
        "You lead a team task in Minecraft. The input gives the goal, every teammate's bag as far as you know it "
        "(bag <agent>: q=<count>,item=<item> ...), what the world offers, and the cheapest plan: one 'step <task>' "
        "line per job in the order one maker would run them (gathering, putting the crafting table down, each craft), "
        "then 'need q=<count>,item=<item> ...': what the plan consumes beyond what it makes, which the bags hand "
        "over or gathering brings. You decide who runs each step and who hands what to whom.\n"
        "Answer with the team's plan and nothing else: line 1 is SELF - or SELF followed by your own tasks joined by "
        "' > '; then one line REQ <teammate> <tasks> for each teammate you ask to act, or the single line REQ -.\n"
        "A task is skill(key=value,...). Skills: {skills}.\n"
        "Hand items over with resource.deliver(q=<n>,item=<item>,to=<agent>); craft with craft.item(q=<made>,"
        "input=<an ingredient>,item=<result>), adding station=crafting_station for a table recipe; put a held "
        "crafting table down first with station.place(q=1,item=crafting_table,station=crafting_station)."
    ),
    Stage.TEAM_HAVE: (
        "You are a teammate. The lead asked which of the listed items you hold (incoming ASK <items>). Answer with "
        "one line and nothing else: HAVE <item>=<count> ... naming only asked items you hold, each once, or HAVE - "
        "when you hold none; then, if your input lists skills you cannot use, CANNOT <skill> ...."
    ),
    Stage.TEAM_RESPONSE: (
        "You are a teammate. The lead proposes a plan; the REQ line naming you is what you are asked to do, and "
        "other lines show what you will be handed; each 'ledger item=<item> have=<held> gets=<handed or made> "
        "uses=<used>' line sums one item your tasks use. Answer with one line and nothing else:\n"
        "ACCEPT reason=CAN_DO when your bag, plus what you are handed, covers your tasks and you may use every skill;\n"
        "COUNTER reason=SHORT item=<item> have=<count> when you hold too few of an item your tasks use;\n"
        "REJECT reason=BLOCKED_SKILL skill=<skill> when a task uses a skill you cannot use."
    ),
    Stage.GATE_HELP: (
        "You are a teammate a blocked agent asks for help. Your bag lists what you can spare without hurting your "
        "own work; 'ready' lists tasks of your own you can start now. The REQ line naming you is what you are "
        "asked. Answer with one line and nothing else:\n"
        "ACCEPT reason=ALREADY_PLANNED when every task asked of you is one of your ready tasks;\n"
        "ACCEPT reason=CAN_SUPPLY when you can make every delivery from what you can spare;\n"
        "COUNTER reason=SHORT item=<item> have=<count> when you can spare only part of a delivery;\n"
        "REJECT reason=CANNOT_SUPPLY item=<item> when you can spare none of an item asked;\n"
        "REJECT reason=NOT_READY for any other task."
    ),
}


TEAM_WORDS = {
    Stage.TEAM_LEAD: (
        "You lead a team task in Minecraft and talk with your teammates in plain sentences. The input gives the goal, "
        "every teammate's bag as far as you know it, what the world offers, and the recipes of the cheapest plan.\n"
        "Write the team's plan as one message and nothing else: 'Hi team, <you> here. Here is the plan. I will "
        "<your steps>. <teammate>, please <their steps>. That is everything.' (say 'I have nothing to do myself.' "
        "when you have no steps; one '<teammate>, please ...' sentence per teammate you ask).\n"
        "A step is '<verb> <quantity> <item>' followed by '<preposition> <value>' pairs; steps are joined by "
        "', then '. Verbs: {verbs}. Prepositions: {prepositions}."
    ),
    Stage.TEAM_HAVE: (
        "You are a teammate. The lead asked which of the listed items you hold. Answer in one sentence and nothing "
        "else: 'Hi <lead>, <you> here. I have <count> <item>, <count> <item>.' naming only asked items you hold, or "
        "'I have none of those.'; then, if your input lists skills you cannot use, 'I cannot use <skill> or <skill>.'"
    ),
    Stage.TEAM_RESPONSE: (
        "You are a teammate. The lead told you the plan; the sentence addressed to you is what you are asked to "
        "do. Answer in one message and nothing else: 'Okay <lead>, I will <your last step>. That is my whole plan.' "
        "when your bag, plus what you are handed, covers your steps; 'Sorry <lead>, I only have <count> <item>.' "
        "when you hold too few of an item; 'Sorry <lead>, I cannot use <skill>.' when a step uses a skill you "
        "cannot use."
    ),
}


def team_instructions(stage: Stage, prior: Prior, surface: SurfaceName = SurfaceName.DSL) -> str:
    """The rules of one team message in the surface spoken, with the skill catalog read from the prior."""
    if surface is SurfaceName.FREEFORM:
        verbs = "; ".join(f"{verb} = {skill}" for skill, verb in VERBS.items())
        prepositions = "; ".join(f"{words} = {key}" for key, words in PREPOSITIONS.items())
        return TEAM_WORDS[stage].replace("{verbs}", verbs).replace("{prepositions}", prepositions)
    skills = "; ".join(f"{name}({','.join(spec.args)})" for name, spec in sorted(prior.skills.items()))
    return TEAM_RULES[stage].replace("{skills}", skills)


RETRY_AFTER_CAP_S = 60.0
"""The longest a server's ``Retry-After`` is waited for before a try: a longer one is the endpoint down."""


def _wait_s(error: Exception, backoff_s: float) -> float:
    """How long to wait before the next try: what a rate-limited (429) or busy (503) server asks, else the backoff.

    Endpoints that rate-limit (OpenAI's, vLLM's and LiteLLM's proxies) say when to come back; coming
    back sooner only earns another 429.
    """
    response = getattr(error, "response", None)
    asked = None if response is None else response.headers.get("retry-after")
    try:
        return min(max(float(asked), 0.0), RETRY_AFTER_CAP_S) if asked else backoff_s
    except ValueError:  # an HTTP date: rare from model endpoints; the backoff serves
        return backoff_s


def _price(variable: str) -> float:
    """A price per million tokens from the environment (0 when unset)."""
    text = os.environ.get(variable, "").strip()
    try:
        price = float(text) if text else 0.0
    except ValueError:
        raise ConfigError(
            Reason.BAD_PRICE, f"${variable} must be a number (per million tokens), not {text!r}"
        ) from None
    if price < 0:
        raise ConfigError(Reason.BAD_PRICE, f"${variable} must not be negative, got {text}")
    return price


@dataclass
class Usage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    charge: float = 0.0  # in the currency of the configured prices


class ApiBackend:
    def __init__(
        self,
        base_url: str,
        model: str,
        prior: Prior,
        *,
        api_key: str | None = None,
        timeout_s: float | None = None,
        retries: int = 3,
        backoff_s: float = 0.5,
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
        stream: bool = False,
        tuned: bool = False,
    ) -> None:
        """Prices are per million tokens; unset, they come from $GENCOORD_API_PRICE_IN / _OUT (else none).

        ``tuned``: the served model is one ``gencoord finetune`` tuned on the team rows; it is sent the messages it
        was trained on (:mod:`gencoord.models.chat`) instead of the rules and worked examples an untuned model
        needs, so it reads over the API exactly what it reads in process.
        """
        key = api_key or os.environ.get("GENCOORD_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
        timeout = TIMEOUT_S if timeout_s is None else timeout_s
        self.client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=0)
        self.model = model
        self.prior = prior
        self.retries = retries
        self.backoff_s = backoff_s
        self.prices = (
            _price("GENCOORD_API_PRICE_IN") if price_in_per_mtok is None else price_in_per_mtok,
            _price("GENCOORD_API_PRICE_OUT") if price_out_per_mtok is None else price_out_per_mtok,
        )
        self.usage = Usage()
        self.stream = stream  # take the answer as server-sent chunks (usage from the last one, where sent)
        self.tuned = tuned
        self.name = f"{'served' if tuned else 'api'}:{model}"
        self.speaks = True  # under the free-form surface it writes its own sentences

    def _example_proposals(self, context: LocalContext) -> Iterator[tuple[str, str, Proposal]]:
        """(template, binding, proposal) from templates other than the agent's own, longest request first."""
        shown = []
        for template, spec in sorted(self.prior.templates.items()):
            if template == context.template or spec.family == "GOAL_CAPABILITY":
                continue
            binding = sorted(spec.bindings)[0]
            shown.append((template, binding, composed(self.prior, binding, "agent_x", "agent_y", {})))
        shown.sort(key=lambda item: -len(item[2].request.plan) if item[2].request else 0)
        yield from shown

    def _revision(self, context: LocalContext) -> str:
        """How a requester revises after a bounded response, with a worked COUNTER from another goal than its own."""
        goal = context.private.get("goal")
        rules = (
            "At stage requester_after_response you see your initial record and the peer's response. After ACCEPT, "
            "write your initial record again unchanged. After COUNTER counter_offer_id=<id>, move the work as that "
            "offer says and write the revised record."
        )
        for offer_id, offer in sorted(self.prior.counter_offers.items()):
            for source, target in sorted(offer.moves.items()):
                if self.prior.codebook[source] == goal:
                    continue
                initial = composed(self.prior, source, "agent_x", "agent_y", {})
                revised = composed(self.prior, target, "agent_x", "agent_y", {})
                response = Response("COUNTER", offer.reason, offer_id).serialize()
                return (
                    f"{rules}\n\nExample ({self.prior.codebook[source]}):\ninitial record:\n"
                    f"{self.prior.serialize(initial)}\nresponse: {response}\nrevised record:\n"
                    f"{self.prior.serialize(revised)}"
                )
        return rules

    def _instructions(self, context: LocalContext, request: GenerationRequest) -> str:
        """The rules of the surface the agent speaks, and two worked examples in it."""
        if request.stage is Stage.REQUESTER_AFTER_RESPONSE:
            return f"{GRAMMAR}\n\n{self._revision(context)}"
        if request.stage is Stage.RECEIVER_DELIVERY:
            return f"{GRAMMAR}\n\n{DELIVERY_RULES}"
        examples = list(islice(self._example_proposals(context), 2))
        if request.stage in (Stage.DIALOGUE_SENDER, Stage.DIALOGUE_RECEIVER):
            shown = [
                f"Example ({template}, binding {binding}):\n" + "\n".join(scripted(proposal, "agent_x"))
                for template, binding, proposal in examples
            ]
            return f"{DIALOGUE_RULES}\n\n" + "\n\n".join(shown)
        shown = []
        for template, binding, proposal in examples:
            assert proposal.request is not None
            answer = self.prior.serialize(Proposal(proposal.request.plan, ()))
            shown.append(
                f"Example ({template}, binding {binding}):\nsender writes:\n{self.prior.serialize(proposal)}\n"
                f"receiver, given that REQ, writes:\n{answer}"
            )
        return f"{GRAMMAR}\n\n" + "\n\n".join(shown)

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if self.tuned:
            if request.stage not in TEAM_STAGES:
                raise BackendError(
                    Reason.TEAM_MODEL_ONLY,
                    f"{self.name} was fine-tuned on team messages; it cannot play {request.stage}",
                )
            tuned = cast(list[ChatCompletionMessageParam], messages(team_input(context, request, self.prior)))
            return self.complete(tuned, max_tokens=MAX_NEW_TOKENS)
        if request.stage in TEAM_STAGES:
            system = team_instructions(request.stage, self.prior, context.surface)
            user = team_input(context, request, self.prior)
        else:
            system, user = (
                self._instructions(context, request),
                model_input(context, request, self.prior, PriorView.FULL),
            )
        return self.complete([{"role": "system", "content": system}, {"role": "user", "content": user}])

    def ask(self, prompt: str) -> str:
        """One user message, the reply's text: what a gate adjudicator needs from a model."""
        return self.complete([{"role": "user", "content": prompt}], max_tokens=8).text

    def complete(self, messages: list[ChatCompletionMessageParam], max_tokens: int = 400) -> Reply:
        """One chat completion with retries on transient failures, counted in ``usage``."""
        started = time.perf_counter()
        for attempt in range(self.retries + 1):
            try:
                content, usage = self._answer(messages, max_tokens)
                break
            except _TRANSIENT as exc:
                if attempt == self.retries:
                    raise BackendError(
                        Reason.API_UNAVAILABLE, f"{self.name}: {exc.__class__.__name__} after {attempt + 1} tries"
                    ) from None
                time.sleep(_wait_s(exc, self.backoff_s * 2**attempt))
            except openai.APIStatusError as exc:
                raise BackendError(Reason.API_ERROR, f"{self.name}: HTTP {exc.status_code}: {exc.message}") from None
        latency = time.perf_counter() - started
        text = _FENCE.sub("", content.strip()).strip()
        tokens_in = None if usage is None else usage.prompt_tokens
        tokens_out = None if usage is None else usage.completion_tokens
        self.usage.calls += 1
        self.usage.input_tokens += tokens_in or 0
        self.usage.output_tokens += tokens_out or 0
        charge = ((tokens_in or 0) * self.prices[0] + (tokens_out or 0) * self.prices[1]) / 1e6
        self.usage.charge += charge
        return Reply(
            text,
            model_calls=1,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            latency_s=latency,
            charge=charge if any(self.prices) else None,
        )

    def _answer(
        self, messages: list[ChatCompletionMessageParam], max_tokens: int
    ) -> tuple[str, CompletionUsage | None]:
        """The answer's text and usage, whole or assembled from streamed chunks (a broken stream raises, to retry)."""
        if not self.stream:
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=0, max_tokens=max_tokens
            )
            return response.choices[0].message.content or "", response.usage
        parts: list[str] = []
        usage = None
        for chunk in self.client.chat.completions.create(
            model=self.model,
            messages=messages,
            temperature=0,
            max_tokens=max_tokens,
            stream=True,
            stream_options={"include_usage": True},
        ):
            parts += [choice.delta.content or "" for choice in chunk.choices]
            usage = chunk.usage or usage
        return "".join(parts), usage
