"""A backend behind any OpenAI-compatible chat API (DeepSeek, vLLM, Ollama, OpenAI, ...).

The prompt carries the grammar in brief, worked examples composed from the shared task
structure (other templates than the agent's own, so it cannot copy its answer), and the
agent's model input. Transient failures (connection, timeout, rate limit, 5xx) are
retried with exponential backoff; usage is read from the response for token counts and
an optional charge estimate. The reply text goes to the protocol unchecked, like any
model output.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

import openai
from openai.types.chat import ChatCompletionMessageParam

from gencoord.backends.context import PriorView, model_input
from gencoord.backends.rule import composed
from gencoord.dsl.ast import Proposal
from gencoord.errors import BackendError
from gencoord.prior.prior import Prior
from gencoord.protocol.result import Reply
from gencoord.run.lifecycle import GenerationRequest
from gencoord.tasks.context import LocalContext

_TRANSIENT = (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError, openai.InternalServerError)
_FENCE = re.compile(r"^```[a-z]*\n|\n?```$")
GRAMMAR = (
    "Answer with exactly two lines and nothing else.\n"
    "Line 1: SELF - or SELF followed by your own tasks joined by ' > '.\n"
    "Line 2: REQ - or REQ <peer agent> followed by the tasks you ask the peer to do.\n"
    "A task is skill(key=value,...), e.g. resource.obtain(q=8,item=oak_planks).\n"
    "When you received a request, adopt it as your SELF line and answer REQ -."
)


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
        timeout_s: float = 30.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        price_in_per_mtok: float = 0.0,
        price_out_per_mtok: float = 0.0,
    ) -> None:
        key = api_key or os.environ.get("GENCOORD_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=0)
        self.model = model
        self.prior = prior
        self.retries = retries
        self.backoff_s = backoff_s
        self.prices = (price_in_per_mtok, price_out_per_mtok)
        self.usage = Usage()
        self.name = f"api:{model}"

    def _examples(self, context: LocalContext) -> str:
        """Two worked examples from templates other than the agent's own."""
        shown = []
        for template, spec in sorted(self.prior.templates.items()):
            if template == context.template or spec.family == "GOAL_CAPABILITY":
                continue
            binding = sorted(spec.bindings)[0]
            proposal = composed(self.prior, binding, "agent_x", "agent_y", {})
            assert proposal.request is not None
            answer = self.prior.serialize(Proposal(proposal.request.plan, ()))
            shown.append(
                f"Example ({template}, binding {binding}):\nsender writes:\n{self.prior.serialize(proposal)}\n"
                f"receiver, given that REQ, writes:\n{answer}"
            )
            if len(shown) == 2:
                break
        return "\n\n".join(shown)

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": f"{GRAMMAR}\n\n{self._examples(context)}"},
            {"role": "user", "content": model_input(context, request, self.prior, PriorView.FULL)},
        ]
        started = time.perf_counter()
        for attempt in range(self.retries + 1):
            try:
                response = self.client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    temperature=0,
                    max_tokens=300,
                )
                break
            except _TRANSIENT as exc:
                if attempt == self.retries:
                    raise BackendError(
                        "API_UNAVAILABLE", f"{self.name}: {exc.__class__.__name__} after {attempt + 1} tries"
                    ) from None
                time.sleep(self.backoff_s * 2**attempt)
            except openai.APIStatusError as exc:
                raise BackendError("API_ERROR", f"{self.name}: HTTP {exc.status_code}: {exc.message}") from None
        latency = time.perf_counter() - started
        text = _FENCE.sub("", (response.choices[0].message.content or "").strip()).strip()
        usage = response.usage
        tokens_in = None if usage is None else usage.prompt_tokens
        tokens_out = None if usage is None else usage.completion_tokens
        self.usage.calls += 1
        self.usage.input_tokens += tokens_in or 0
        self.usage.output_tokens += tokens_out or 0
        self.usage.charge += ((tokens_in or 0) * self.prices[0] + (tokens_out or 0) * self.prices[1]) / 1e6
        return Reply(text, model_calls=1, input_tokens=tokens_in, output_tokens=tokens_out, latency_s=latency)
