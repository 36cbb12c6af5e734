"""The API backend against a real OpenAI-compatible server on this machine: `transformers serve`.

The test builds a tiny chat model (random weights, a character tokenizer with a chat
template) and serves it. What is checked is the transport, not the answers: whole and
streamed answers agree and carry usage, an episode and a team task with the served model in
every role end in a typed failure (its text is noise) with their tokens counted, and a server
that dies mid-run stops the backend with API_UNAVAILABLE rather than a traceback. A base prompted over a server
this process starts (``prompted:``) plays an episode the same way, and no server outlives what started it.
"""

from __future__ import annotations

import os
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

from gencoord.backends.api import ApiBackend
from gencoord.backends.registry import backend_set, team_players
from gencoord.errors import BackendError, FailureCode
from gencoord.gate.adjudicators import adjudicator_for
from gencoord.gate.policy import Features, ModelAdjudicator
from gencoord.models.serving import stop_serving, transformers_serve
from gencoord.prior import Prior
from gencoord.prior.load import team_prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.run.episode import run_episode
from gencoord.run.team import run_team_task
from gencoord.tasks import SuiteDocument, build_episode, paper_pool
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import read_task_file

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("api-served")]
MINDCRAFT_SAMPLE = Path(__file__).parents[1] / "src" / "gencoord" / "experiments" / "team" / "mindcraft_sample.json"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _tiny_chat_model(folder: Path) -> Path:
    special = ["<|pad|>", "<|im_start|>", "<|im_end|>"]
    vocab = {token: index for index, token in enumerate([*special, *string.printable])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<|pad|>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|pad|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=8192,
        eos_token_id=vocab["<|im_end|>"],
        pad_token_id=vocab["<|pad|>"],
    )
    Qwen3ForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    folder = _tiny_chat_model(tmp_path_factory.mktemp("tiny-chat"))
    with transformers_serve(folder, folder / "serve.log", ready_s=180) as server:
        yield server.url, str(folder), server.process


def test_whole_and_streamed_answers_agree_and_carry_usage(
    served: tuple[str, str, subprocess.Popen[bytes]], prior: Prior, suites: SuiteDocument
) -> None:
    url, model, _ = served
    spec = build_episode(paper_pool("timing")[0], 0, 0, prior, suites)
    ask = GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
    whole = ApiBackend(url, model, prior, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
    streamed = ApiBackend(url, model, prior, stream=True)
    one, two = whole.generate(spec.contexts[spec.sender], ask), streamed.generate(spec.contexts[spec.sender], ask)
    assert one.text == two.text and one.text  # greedy: the same answer either way
    assert one.input_tokens == two.input_tokens and one.input_tokens is not None and one.input_tokens > 100
    assert one.output_tokens == two.output_tokens and one.output_tokens is not None and one.output_tokens > 0
    assert whole.usage.calls == streamed.usage.calls == 1 and one.latency_s > 0
    expected = (one.input_tokens * 1.0 + one.output_tokens * 2.0) / 1e6
    assert whole.usage.charge == pytest.approx(expected)


def test_an_episode_through_the_served_model_ends_in_a_typed_failure(
    served: tuple[str, str, subprocess.Popen[bytes]], prior: Prior, suites: SuiteDocument
) -> None:
    url, model, _ = served
    backend = ApiBackend(url, model, prior, stream=True)
    spec = build_episode(paper_pool("timing")[1], 1, 0, prior, suites)
    result = run_episode(spec, backends={agent: backend for agent in spec.contexts})
    assert result.outcome.failure is FailureCode.PARSE_FAILURE and not result.outcome.success
    [generation] = result.protocol.trace.generations  # the sender's noise stops the protocol at parsing
    assert generation.reply.model_calls == 1 and generation.reply.input_tokens and generation.reply.output_tokens


def test_a_team_task_with_the_served_model_in_every_role_ends_typed_with_its_tokens_counted(
    served: tuple[str, str, subprocess.Popen[bytes]],
) -> None:
    url, model, _ = served
    prior = team_prior()
    players = team_players(f"lead=api:{url}#{model},peers=api:{url}#{model}", prior)
    [task] = [t for t in read_task_file(MINDCRAFT_SAMPLE).tasks if isinstance(t, TeamTask)][:1]
    result = run_team_task(task, prior, lead_backend=players.lead, peer_backend=players.peers)
    assert not result.success and result.code is not None and result.failure is not None  # noise: a typed refusal
    assert result.model_calls >= 1 and result.tokens is not None and result.tokens > 0
    assert all(g.reply.latency_s > 0 for g in result.generations if g.reply.model_calls)


def test_a_server_that_dies_mid_run_stops_the_backend_with_a_code(
    served: tuple[str, str, subprocess.Popen[bytes]], prior: Prior, suites: SuiteDocument
) -> None:
    url, model, server = served
    backend = ApiBackend(url, model, prior, retries=1, backoff_s=0.01, timeout_s=5.0)
    spec = build_episode(paper_pool("timing")[2], 0, 0, prior, suites)
    ask = GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
    assert backend.generate(spec.contexts[spec.sender], ask).model_calls == 1
    server.kill()
    server.wait()
    with pytest.raises(BackendError) as caught:
        backend.generate(spec.contexts[spec.sender], ask)
    assert caught.value.reason == "API_UNAVAILABLE" and backend.usage.calls == 1


def _servers_started_here() -> list[int]:
    """This process's child processes running ``transformers serve`` (zombies included: they were not waited for)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"serve" in command:
            found.append(int(entry.name))
    return found


def test_a_server_that_does_not_answer_in_time_is_a_coded_error_and_is_stopped(tmp_path: Path) -> None:
    """Starting a server that never comes up (here: given no time to) names the outage and leaves no process."""
    before = _servers_started_here()  # the module's shared server may be up, when one process runs every test
    with pytest.raises(BackendError) as caught, transformers_serve(tmp_path, tmp_path / "serve.log", ready_s=0.0):
        pytest.fail("a server given no time to answer was taken as up")
    assert caught.value.reason == "API_UNAVAILABLE" and "did not answer in 0 s" in caught.value.message
    assert _servers_started_here() == before


def test_a_prompted_base_is_served_from_this_process_and_plays_an_episode_typed(
    tmp_path: Path, prior: Prior, suites: SuiteDocument
) -> None:
    """``prompted:<base>``: the base (here a local model folder) served by ``transformers serve`` started at first
    use, sent the rules and worked examples any endpoint is; untrained noise ends the episode as a parse failure
    with its tokens counted. Stopping it leaves no process."""
    base = _tiny_chat_model(tmp_path / "base")
    spec = build_episode(paper_pool("timing")[3], 0, 0, prior, suites)
    before = _servers_started_here()  # the module's shared server may be up, when one process runs every test
    try:
        backends = backend_set(f"prompted:{base}")(spec, False, prior, suites)
        result = run_episode(spec, backends=backends)
        assert len(_servers_started_here()) == len(before) + 1  # served from this process
        adjudicator = adjudicator_for(f"prompted:{base}")  # the gate's gray zone, asked of the same server
        assert isinstance(adjudicator, ModelAdjudicator)
        features = Features(C=1.0, R=0.5, I=0.5, L=0.2, H=0.0, cost=12, cost_share=0.5, budget_left=0.5)
        adjudicator.escalate(features)  # ESCALATE, LOCAL or None (noise: the gate then asks the logistic model)
        asked = adjudicator.ask.__self__  # type: ignore[attr-defined]  (the ApiBackend's bound ask)
        assert isinstance(asked, ApiBackend) and asked.usage.calls == 1 and asked.usage.output_tokens > 0
        assert len(_servers_started_here()) == len(before) + 1  # one server per base and process
    finally:
        stop_serving()
    assert result.outcome.failure is FailureCode.PARSE_FAILURE
    [generation] = result.protocol.trace.generations
    assert generation.reply.input_tokens and generation.reply.input_tokens > 100  # the rules and examples were sent
    assert _servers_started_here() == before


def test_a_server_goes_down_with_the_process_that_started_it_however_that_ends(tmp_path: Path) -> None:
    """A server answering a long call outlives a polite signal; killed outright, its starter takes it along."""
    folder = _tiny_chat_model(tmp_path / "base")
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(folder), str(tmp_path / "serve.log")], stdout=subprocess.PIPE, text=True
    )
    assert starter.stdout is not None
    server = int(starter.stdout.readline())
    os.kill(server, 0)  # it is up
    starter.kill()
    starter.wait()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{server}").exists() and b"serve" in _command(server) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not (Path(f"/proc/{server}").exists() and b"serve" in _command(server))


_STARTER = """
import sys, time
from pathlib import Path
from gencoord.models.serving import stop_serving, transformers_serve
with transformers_serve(Path(sys.argv[1]), Path(sys.argv[2]), ready_s=180) as served:
    print(served.process.pid, flush=True)
    time.sleep(600)
"""


def _command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
