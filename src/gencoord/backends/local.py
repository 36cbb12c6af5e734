"""Backends driven by a local trained model (the tiny CPU preset, or any checkpoint we trained).

* Direct: the model writes the whole record (Short DSL or JSON, as it was trained).
* Factor-Code + Rule: the model writes only the binding code; the composer expands it
  through the shared task structure into the canonical record, so the peer-facing
  commitment is exactly the one a rule would send.
* Constrained direct: the Short DSL model decodes under a grammar grounded in the agent's
  context (``gencoord.backends.constrained``), so every output parses.
* Checked drafts (a team lead, ``drafts`` > 1): the lead decodes greedily, runs its own dry run
  of the proposal from what it knows (its view's bags, the public world: the planner's
  check, never the true world), and while that fails draws another proposal by sampling,
  up to ``drafts`` in all. It sends the first that passes, or its greedy one when none does.
  Each round of proposing draws fresh samples (its prompt is the same after a refusal that changes
  nothing it knows, and the same samples would fail again). Every draft counts as a model call,
  with its tokens and time.

Each call is one model call with real token counts from the model's own tokenizer and
measured latency. The text goes to the protocol unchecked: parsing and the contract
check are the protocol's job, so a bad output fails there with its stable code.
"""

from __future__ import annotations

import multiprocessing
import time
from functools import cache
from pathlib import Path

import torch

from gencoord.backends.constrained import logits_processor
from gencoord.backends.context import model_input
from gencoord.backends.rule import at_stage, composed
from gencoord.backends.team_input import team_input
from gencoord.dsl import team_dialogue
from gencoord.dsl.ast import Proposal
from gencoord.dsl.surface import SurfaceName, surface
from gencoord.errors import BackendError, GencoordError
from gencoord.models.generate import MAX_NEW_TOKENS, generate
from gencoord.models.load import LoadedModel, load_model
from gencoord.models.variant import Records, Target
from gencoord.planning.planner import makespan
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.reasons import Reason
from gencoord.tasks.context import LocalContext

_BUDGET_FACTOR = 32  # a binding code is a few tokens
_RECEIVER_STAGES = (Stage.RECEIVER_AFTER_REQUEST, Stage.RECEIVER_WITHOUT_REQUEST)


@cache
def loaded(path: str) -> LoadedModel:
    """One copy of a checkpoint per process, however many episodes use it.

    Inside a worker of the experiment pool, torch gets one thread: the pool already puts
    one worker on every core, and more threads per worker only fight over them.
    """
    if multiprocessing.parent_process() is not None:
        torch.set_num_threads(1)
    return load_model(Path(path))


DRAFT_TEMPERATURE = 1.0
"""Temperature of a lead's sampled drafts after its greedy one: the model's own distribution. Chosen on generated
team tasks (seeds 7 and 11, not the benchmark's): at 1.0 more of the drafts a greedy lead misses pass its dry run
than at 0.7 (52 of 60 tasks against 49, 8 drafts)."""


class LocalModelBackend:
    def __init__(self, checkpoint: Path, prior: Prior, constrained: bool = False, drafts: int = 1) -> None:
        self.model = loaded(str(checkpoint.resolve()))
        self.prior = prior
        spec = self.model.spec
        self.constrained = constrained and spec.target is Target.DIRECT and spec.surface is SurfaceName.DSL
        self.drafts = drafts
        kind = self.model.spec.target.value
        checked = f"+{drafts}drafts" if drafts > 1 else ""
        self.name = f"{kind}{'+grammar' if self.constrained else ''}{checked}:{checkpoint.name}"
        self.speaks = spec.surface is SurfaceName.FREEFORM  # a model trained on sentences writes its own words

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if self.drafts <= 1 or request.stage is not Stage.TEAM_LEAD or context.team is None:
            return self._generate(context, request)
        first = reply = self._generate(context, request)
        calls, tokens_in, tokens_out, latency = 0, 0, 0, 0.0
        for draft in range(self.drafts):
            if draft:
                with torch.random.fork_rng():
                    torch.manual_seed((request.round - 1) * self.drafts + draft)
                    reply = self._generate(context, request, DRAFT_TEMPERATURE)
            calls += reply.model_calls
            tokens_in += reply.input_tokens or 0
            tokens_out += reply.output_tokens or 0
            latency += reply.latency_s
            if self._carries(context, reply.text):
                break
        else:
            reply = first
        return Reply(reply.text, calls, input_tokens=tokens_in, output_tokens=tokens_out, latency_s=latency)

    def _carries(self, context: LocalContext, text: str) -> bool:
        """The lead's own dry run, from its view: the proposal parses (its words heard, when it speaks them, as
        its peers will hear them), checks, resolves and reaches the goal."""
        assert context.team is not None
        spoken = self.speaks and context.surface is SurfaceName.FREEFORM
        try:
            proposal = team_dialogue.hear_proposal(text, self.prior.vocab) if spoken else self.prior.parse(text)
        except GencoordError:
            return False
        return makespan(context.team, proposal, context.agent, self.prior) is not None

    def _generate(self, context: LocalContext, request: GenerationRequest, temperature: float | None = None) -> Reply:
        spec = self.model.spec
        if spec.records is Records.TEAM:
            prompt = team_input(context, request, self.prior)
        else:
            prompt = model_input(context, request, self.prior, spec.view, spec.compact)
        started = time.perf_counter()
        processors = [logits_processor(self.model, self.prior, context, request, prompt)] if self.constrained else None
        budget = _BUDGET_FACTOR if spec.target is Target.FACTOR else MAX_NEW_TOKENS
        try:
            text, tokens_in, tokens_out = generate(
                self.model.model, self.model.codec, prompt, budget, processors, temperature
            )
        except AssertionError:  # xgrammar's matcher: no token of this vocabulary continues the grammar
            if not self.constrained:
                raise
            raise BackendError(
                Reason.GRAMMAR_DEAD_END,
                f"{self.name}: the model's vocabulary cannot spell any continuation the grammar allows "
                "(names of this task outside what the model was trained on)",
            ) from None
        latency = time.perf_counter() - started
        if spec.target is Target.FACTOR:
            text = self._compose(text.strip(), context, request)
        return Reply(text, model_calls=1, input_tokens=tokens_in, output_tokens=tokens_out, latency_s=latency)

    def _compose(self, code: str, context: LocalContext, request: GenerationRequest) -> str:
        """The canonical record for the predicted code, or the raw code when it names no binding.

        A raw code then reaches the parser and fails there as a PARSE_FAILURE: the model's
        error is reported as what it is.
        """
        if code not in self.prior.codebook:
            return code
        spoken = surface(context.surface, self.prior.vocab)
        if request.stage in _RECEIVER_STAGES:
            proposal = composed(self.prior, code, context.peer, context.agent, context.params)
            assert proposal.request is not None
            return spoken.serialize(Proposal(proposal.request.plan, ()))
        proposal = composed(self.prior, code, context.agent, context.peer, context.params)
        return spoken.serialize(at_stage(proposal, request, self.prior, context.surface))
