"""The team model: its rows, a smoke training, and every role decoded under its grammar."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import xgrammar as xgr
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from transformers import PreTrainedTokenizerFast

from gencoord.backends.constrained import grammar_for
from gencoord.backends.peer import RulePeer
from gencoord.backends.planner import PlannerBackend
from gencoord.backends.registry import CheckedFamily, team_players
from gencoord.backends.team_input import ledger_lines
from gencoord.dsl.serialize import format_task
from gencoord.dsl.surface import SurfaceName
from gencoord.models.manifest import CheckpointManifest
from gencoord.models.variant import ModelSpec, Records, TeamRoles
from gencoord.planning.drafts import making
from gencoord.planning.planner import makespan
from gencoord.prior.load import team_prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.supply import SupplyQuery, parse_answer
from gencoord.run.team import lead_of, run_team_task
from gencoord.run.team_exchange import heard_response
from gencoord.tasks.context import LocalContext
from gencoord.train.hf import PaperSettings, train_checkpoint
from gencoord.train.team import TEAM_PIECES, TeamPreset, fixed_team_rows, team_evaluation_rows, train_team
from gencoord.train.team_data import HELD_OUT, TRAINING, Recorder, draw_task, held_out, item_family, team_rows
from gencoord.train.tiny import build_model, build_tokenizer

PRIOR = team_prior()


@pytest.mark.parametrize("split", [TRAINING, HELD_OUT])
def test_rows_are_what_their_readers_parse_and_splits_keep_their_families(split: str) -> None:
    rows = list(itertools.islice(team_rows(PRIOR, 7, split), 300))
    assert {row.stage for row in rows} == {
        stage.value for stage in (Stage.TEAM_LEAD, Stage.TEAM_HAVE, Stage.TEAM_RESPONSE)
    }
    assert all(held_out(row.template) == (split == HELD_OUT) for row in rows)
    assert all(row.binding == item_family(row.template) for row in rows)
    decisions = set()
    for row in rows:
        assert row.prompt.endswith("\n>>>\n") and row.prompt.startswith(f"stage {row.stage}\n")
        if row.stage == Stage.TEAM_LEAD:
            PRIOR.parse(row.target)
        elif row.stage == Stage.TEAM_HAVE:
            asked = next(line for line in row.prompt.split("\n") if line.startswith("incoming ASK "))
            parse_answer(row.target, SupplyQuery(tuple(asked.split(" ")[2:])))
        else:
            decisions.add(heard_response(row.target).decision)
    assert decisions == {"ACCEPT", "COUNTER", "REJECT"}  # counterfactuals teach the refusals too


def test_held_out_families_are_fixed_by_name_and_cover_about_a_fifth() -> None:
    families = {item_family(item) for item in PRIOR.game.recipes}
    share = sum(held_out(family) for family in families) / len(families)
    assert 0.1 < share < 0.3
    rng = random.Random(3)
    assert all(held_out(draw_task(PRIOR, rng, HELD_OUT).goal.item) for _ in range(10))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), split=st.sampled_from([TRAINING, HELD_OUT]))
def test_the_prompts_steps_run_by_one_maker_reach_the_goal_once_the_bags_hand_over_its_needs(
    seed: int, split: str
) -> None:
    """The lead's ``step`` and ``need`` lines are a whole plan: the lead runs every step, each teammate hands
    over what it holds of each need, and the dry run from the same bags reaches the goal."""
    task = draw_task(PRIOR, random.Random(seed), split)
    assume(not any(agent.blocked for agent in task.agents))
    made = making(task, PRIOR)
    assume(made is not None)
    assert made is not None
    maker = lead_of(task)
    bags = {agent.name: agent.inventory for agent in task.agents}
    left = {item: amount - bags[maker].get(item, 0) for item, amount in made.needs.items()}
    requests = []
    for agent in sorted(name for name in bags if name != maker):
        gives = []
        for item in sorted(left):
            share = min(bags[agent].get(item, 0), max(left[item], 0))
            if share:
                gives.append(f"resource.deliver(q={share},item={item},to={maker})")
                left[item] -= share
        if gives:
            requests.append(f"REQ {agent} " + " > ".join(gives))
    assume(len(made.steps) <= PRIOR.vocab.max_path_tasks)
    own = " > ".join(format_task(step) for step in made.steps) or "-"
    plan = PRIOR.parse(f"SELF {own}\n" + ("\n".join(requests) or "REQ -"))
    assert makespan(task, plan, maker, PRIOR) is not None, plan


@pytest.mark.parametrize("split", [TRAINING, HELD_OUT])
def test_the_plan_the_rows_teach_has_the_lead_run_every_step_and_reaches_the_goal(split: str) -> None:
    rng = random.Random(41)
    for _ in range(6):
        task = draw_task(PRIOR, rng, split)
        lead = Recorder(PlannerBackend(PRIOR, lead_makes=True))
        result = run_team_task(task, PRIOR, lead_backend=lead, peer_backend=RulePeer(PRIOR))
        assert result.success, (task.id, result.code, result.message)
        context, _, reply = lead.heard[0]
        assert context.team is not None
        made = making(context.team, PRIOR)
        assert made is not None
        plan = PRIOR.parse(reply.text)
        crafts = [format_task(step) for step in made.steps if step.skill == "craft.item"]
        assert [format_task(t) for t in plan.self_plan if t.skill == "craft.item"] == crafts
        assert all(t.skill in {"resource.deliver", "station.place"} for r in plan.peer_requests for t in r.plan)


def test_a_peers_ledger_sums_what_its_path_uses_gets_and_holds_and_skips_what_it_cannot_read() -> None:
    context = LocalContext("agent_1", "peer", "agent_0", None, (), {}, {"oak_planks": 1, "stick": 2}, {}, {})
    delivered = (
        "SELF resource.deliver(q=1,item=oak_planks,to=agent_1)\n"
        "REQ agent_1 craft.item(q=4,input=oak_planks,item=stick) > resource.deliver(q=5,item=stick,to=agent_0)"
    )
    assert ledger_lines(context, delivered, PRIOR) == [
        "ledger item=oak_planks have=1 gets=1 uses=2",
        "ledger item=stick have=2 gets=4 uses=5",
    ]
    for hostile in ("SELF - / REQ agent_1 craft.item(q=", "Okay agent_0, I will hand over 2 sticks.", "REQ -"):
        assert ledger_lines(context, hostile, PRIOR) == []


CHARACTERS = [chr(code) for code in range(32, 127)] + ["\n", "[EOS]"]
"""A vocabulary of single characters: a grammar matched over it accepts or refuses whole strings."""
END = len(CHARACTERS) - 1


def _accepts(grammar: str, text: str) -> bool:
    info = xgr.TokenizerInfo(CHARACTERS, xgr.VocabType.RAW, stop_token_ids=[END])
    matcher = xgr.GrammarMatcher(xgr.GrammarCompiler(info).compile_grammar(grammar))
    return bool(matcher.accept_string(text) and matcher.accept_token(END))


def _planner_plans(seed: int, split: str, count: int = 8) -> Iterator[tuple[str, str, str]]:
    """(the lead's agent, its grammar, the planner's plan) for ``count`` drawn tasks of ``split``."""
    rng = random.Random(seed)
    for _ in range(count):
        lead = Recorder(PlannerBackend(PRIOR))
        run_team_task(draw_task(PRIOR, rng, split), PRIOR, lead_backend=lead, peer_backend=RulePeer(PRIOR))
        context, request, reply = lead.heard[0]
        yield context.agent, grammar_for(PRIOR, context, request), reply.text


@pytest.mark.parametrize("split", [TRAINING, HELD_OUT])
def test_the_lead_grammar_takes_every_planner_plan_and_no_craft_the_game_has_no_recipe_for(split: str) -> None:
    refused = 0
    for _, grammar, plan in _planner_plans(17, split):
        assert _accepts(grammar, plan), plan
        craft = re.search(r"input=([a-z_]+),item=([a-z_]+)", plan)
        if craft is None:
            continue
        item = craft.group(2)
        stranger = next(m for m in sorted(PRIOR.game.stack_sizes) if PRIOR.game.recipe(item, m) is None)
        assert not _accepts(grammar, plan.replace(craft.group(0), f"input={stranger},item={item}", 1))
        made = re.search(r"craft\.item\(q=([0-9]+),", plan)
        assert made is not None
        more = made.group(0).replace(f"q={made.group(1)}", f"q={int(made.group(1)) + 1}")
        assert not _accepts(grammar, plan.replace(made.group(0), more, 1))  # a craft is one of the plan's steps
        refused += 1
    assert refused  # the crafts were put to the test


def test_under_the_lead_grammar_no_path_hands_over_to_its_own_agent() -> None:
    tried = 0
    for lead, grammar, plan in _planner_plans(23, HELD_OUT):
        for line in plan.split("\n"):
            owner = lead if line.startswith("SELF") else line.split(" ")[1]
            handed = re.search(r"to=([a-z0-9_]+)\)", line)
            if handed is None:
                continue
            assert not _accepts(grammar, plan.replace(line, line.replace(handed.group(0), f"to={owner})")))
            tried += 1
    assert tried >= 3  # hand-overs were put to the test


def _peer_turns(seed: int, count: int) -> Iterator[tuple[LocalContext, GenerationRequest]]:
    """What rule peers were asked on ``count`` drawn tasks (training and held-out families) led by the
    planner's fastest plan (its projections ask peers to craft as well as to hand over)."""
    rng = random.Random(seed)
    for index in range(count):
        peers, split = Recorder(RulePeer(PRIOR)), (TRAINING, HELD_OUT)[index % 2]
        run_team_task(draw_task(PRIOR, rng, split), PRIOR, lead_backend=PlannerBackend(PRIOR), peer_backend=peers)
        yield from ((context, request) for context, request, _ in peers.heard)


def test_a_peers_grammar_takes_its_truthful_answer_and_no_claim_beyond_its_own_bag_or_skills() -> None:
    rule, tried = RulePeer(PRIOR), {"have": 0, "counter": 0, "reject": 0}
    unnamed = (  # coarse dirt's recipe takes gravel too, which the craft's text does not name
        LocalContext("agent_1", "peer", "agent_0", None, (), {}, {"dirt": 2}, {}, {}),
        GenerationRequest(
            "agent_1", Stage.TEAM_RESPONSE, "agent_0", "SELF -\nREQ agent_1 craft.item(q=4,input=dirt,item=coarse_dirt)"
        ),
    )
    for context, request in [unnamed, *_peer_turns(5, 30)]:
        asked = (request.delivered_request or "").split(" ")[1:]
        used = [line.split(" ")[1][5:] for line in ledger_lines(context, request.delivered_request or "", PRIOR)]
        variants = [context]
        for item in used:  # the same projection to a peer holding none of an item its path uses: the rule counters
            variants.append(replace(context, inventory={k: v for k, v in context.inventory.items() if k != item}))
        if request.stage is Stage.TEAM_RESPONSE:  # and to one barred from a skill of its path: the rule rejects
            mine = next(
                r.plan for r in PRIOR.parse(request.delivered_request or "").peer_requests if r.target == context.agent
            )
            variants.append(replace(context, blocked=(mine[0].skill,)))
        for variant in variants:
            grammar, truthful = grammar_for(PRIOR, variant, request), rule.generate(variant, request).text
            assert _accepts(grammar, truthful), (grammar, truthful)
            if truthful.startswith("HAVE"):
                tried["have"] += 1
                unheld = next(item for item in [*asked, "stick"] if not variant.inventory.get(item))
                assert not _accepts(grammar, f"HAVE {unheld}=1")
                held = [(item, count) for item, count in sorted(variant.inventory.items()) if item in asked]
                for item, count in held[:1]:
                    assert not _accepts(grammar, f"HAVE {item}={count + 1}")
                assert not _accepts(grammar, "HAVE - CANNOT craft.item") or "craft.item" in variant.blocked
            if truthful.startswith("COUNTER"):
                tried["counter"] += 1
                item, have = re.findall(r"item=(\S+) have=(\d+)", truthful)[0]
                assert not _accepts(grammar, f"COUNTER reason=SHORT item={item} have={int(have) + 1}")
            if truthful.startswith("REJECT"):
                tried["reject"] += 1
                usable = next(skill for skill in sorted(PRIOR.skills) if skill not in variant.blocked)
                assert not _accepts(grammar, f"REJECT reason=BLOCKED_SKILL skill={usable}")
    assert min(tried.values()) >= 3, tried  # every kind of answer was put to the test


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("team") / "tiny-team"
    preset = TeamPreset(layers=1, hidden=32, heads=2, kv_heads=1, head_dim=16, ffn=64, batch=4, warmup=2)
    losses: list[float] = []
    report = train_team(str(out), steps=12, seed=0, evaluate=1, preset=preset, log=lambda _, loss: losses.append(loss))
    assert report.steps == 12 and report.evaluated == report.held_out_evaluated == 3
    assert report.last_loss < report.first_loss
    return out


def test_a_checkpoint_for_one_role_trains_and_is_scored_on_that_roles_rows_alone(tmp_path: Path) -> None:
    preset = TeamPreset(layers=1, hidden=32, heads=2, kv_heads=1, head_dim=16, ffn=64, batch=4, warmup=2)
    seen, unseen = team_evaluation_rows(2, 0, roles=TeamRoles.PEERS)
    assert {row.stage for row in seen + unseen} == {Stage.TEAM_HAVE.value, Stage.TEAM_RESPONSE.value}
    assert {row.stage for row in fixed_team_rows(12, roles=TeamRoles.LEAD)} == {Stage.TEAM_LEAD.value}
    report = train_team(str(tmp_path / "lead"), steps=4, seed=0, evaluate=2, preset=preset, roles=TeamRoles.LEAD)
    assert report.steps == 4 and report.evaluated == report.held_out_evaluated == 2  # lead rows only
    assert str(CheckpointManifest.read(tmp_path / "lead").data).endswith("the lead role's stages only")
    task = draw_task(PRIOR, random.Random(4), HELD_OUT)
    players = team_players(f"lead=checked:{tmp_path / 'lead'},peers=rule", PRIOR)
    result = run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers)
    spoke = {g.stage for g in result.generations if g.reply.model_calls}
    assert spoke == {Stage.TEAM_LEAD.value}  # the lead's checkpoint leads (a 4-step model's path may run out of tokens)


def test_roles_train_only_team_checkpoints() -> None:
    from typer.testing import CliRunner  # noqa: PLC0415

    from gencoord.cli import app  # noqa: PLC0415

    result = CliRunner().invoke(app, ["train", "--out", "nowhere", "--roles", "lead"])
    assert result.exit_code == 2 and "OPTION_NOT_READ" in result.stderr
    assert "--roles is not read by the tiny trainer" in result.stderr and "team, checkpoint, lora" in result.stderr


def test_a_smoke_trained_team_model_saves_its_manifest_and_plays_every_role(smoke: Path) -> None:
    manifest = CheckpointManifest.read(smoke)
    assert manifest.records is Records.TEAM and manifest.kind == "tiny"
    task = draw_task(PRIOR, random.Random(11), HELD_OUT)
    for family in ("model", "constrained"):
        players = team_players(f"lead={family}:{smoke},peers={family}:{smoke}", PRIOR)
        result = run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers)
        assert result.success or (result.code is not None and result.message)
        assert result.model_calls >= 1 and (result.tokens or 0) > 0


def test_under_the_grammar_an_untrained_peer_never_writes_an_unreadable_line(smoke: Path) -> None:
    players = team_players(f"lead=planner,peers=constrained:{smoke}", PRIOR)
    rng = random.Random(5)
    for _ in range(6):
        task = draw_task(PRIOR, rng, HELD_OUT)
        result = run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers)
        assert result.failure != "PARSE_FAILURE", (result.code, result.message)


def test_the_hugging_face_path_fine_tunes_on_the_same_team_rows_and_plays_every_role(tmp_path: Path) -> None:
    """A tiny stand-in for Qwen3.5-0.8B (an HF folder with a fast tokenizer) takes the team rows, shape for shape."""
    rows = fixed_team_rows(48)
    base = tmp_path / "base"
    tokenizer = build_tokenizer([text for row in rows for text in (row.prompt, row.target)], pattern=TEAM_PIECES)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="[EOS]", pad_token="[PAD]", unk_token="[UNK]")
    build_model(
        tokenizer.get_vocab_size(), TeamPreset(layers=1, hidden=32, head_dim=16, ffn=64), seed=0
    ).save_pretrained(base)
    fast.save_pretrained(base)
    spec = ModelSpec(records=Records.TEAM)
    settings = PaperSettings(lr=5e-3, epochs=1, batch=8, micro_batch=4)
    report = train_checkpoint(base, rows, spec, tmp_path / "tuned", settings, evaluation=team_evaluation_rows(1, 0))
    assert report.steps == 6 and report.evaluated == report.held_out_evaluated == 3
    players = team_players(f"lead=constrained:{tmp_path / 'tuned'},peers=constrained:{tmp_path / 'tuned'}", PRIOR)
    task = draw_task(PRIOR, random.Random(2), HELD_OUT)
    result = run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers)
    assert result.model_calls >= 1 and (result.success or result.code is not None)


def test_a_tiny_team_model_trained_on_words_speaks_and_is_read_by_the_extractor(tmp_path: Path) -> None:
    preset = TeamPreset(layers=1, hidden=32, heads=2, kv_heads=1, head_dim=16, ffn=64, batch=4, warmup=2)
    out = tmp_path / "tiny-team-words"
    report = train_team(str(out), steps=6, seed=0, evaluate=1, preset=preset, surface=SurfaceName.FREEFORM)
    assert CheckpointManifest.read(out).surface == SurfaceName.FREEFORM and report.steps == 6
    players = team_players(f"lead=model:{out},peers=model:{out}", PRIOR)
    assert players.lead.speaks  # type: ignore[attr-defined]
    for seed in range(3):
        task = draw_task(PRIOR, random.Random(seed), HELD_OUT)
        result = run_team_task(
            task, PRIOR, surface=SurfaceName.FREEFORM, lead_backend=players.lead, peer_backend=players.peers
        )
        assert result.success or (result.code is not None and result.message)  # words it cannot be read in: a code
        assert result.model_calls >= 1


SHIPPED = Path(__file__).parents[1] / "src" / "gencoord" / "experiments" / "checkpoints" / "tiny-team"


def test_a_checked_lead_sends_a_draft_its_own_dry_run_carries_or_its_greedy_one_and_counts_every_draft() -> None:
    from gencoord.backends.local import LocalModelBackend  # noqa: PLC0415
    from gencoord.planning.planner import makespan as dry_run_time  # noqa: PLC0415

    greedy = LocalModelBackend(SHIPPED, PRIOR, constrained=True)
    checked = team_players(f"lead=checked:{SHIPPED},peers=rule", PRIOR).lead
    drafts = CheckedFamily.drafts
    rng, redrafted = random.Random(5), 0
    for _ in range(7):  # these seven held-out tasks draw both: a draft carried after redrafting, and none
        lead = Recorder(checked)
        run_team_task(draw_task(PRIOR, rng, HELD_OUT), PRIOR, lead_backend=lead, peer_backend=RulePeer(PRIOR))
        for context, request, reply in lead.heard[:1]:
            assert context.team is not None
            first = greedy.generate(context, request).text
            carried = dry_run_time(context.team, PRIOR.parse(reply.text), context.agent, PRIOR) is not None
            assert 1 <= reply.model_calls <= drafts
            assert carried or (reply.text == first and reply.model_calls == drafts)
            assert reply.model_calls == 1 or not (
                dry_run_time(context.team, PRIOR.parse(first), context.agent, PRIOR) is not None
            )
            redrafted += reply.model_calls > 1
    assert redrafted  # some greedy proposal failed the lead's own dry run and was drafted again


def test_each_round_of_a_checked_lead_samples_afresh_and_sends_its_greedy_proposal_when_none_carries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a refusal that changes nothing the lead knows, its prompt is the same: the same seeds would draw the
    same failing drafts again."""
    from gencoord.backends.local import LocalModelBackend  # noqa: PLC0415

    checked = team_players(f"lead=checked:{SHIPPED},peers=rule", PRIOR).lead
    assert isinstance(checked, LocalModelBackend)
    recorder = Recorder(checked)
    run_team_task(
        draw_task(PRIOR, random.Random(3), HELD_OUT), PRIOR, lead_backend=recorder, peer_backend=RulePeer(PRIOR)
    )
    context, request, _ = next(heard for heard in recorder.heard if heard[1].stage is Stage.TEAM_LEAD)
    seeds: list[int] = []

    def failing(context: LocalContext, request: GenerationRequest, temperature: float | None = None) -> Reply:
        if temperature is not None:
            seeds.append(torch.initial_seed())
        return Reply("SELF -" if temperature is None else "not a proposal", 1, input_tokens=3, output_tokens=2)

    monkeypatch.setattr(checked, "_generate", failing)
    drafts = CheckedFamily.drafts
    for round_index in (1, 2, 3):
        reply = checked.generate(context, replace(request, round=round_index))
        assert reply.text == "SELF -" and reply.model_calls == drafts and reply.output_tokens == 2 * drafts
    assert len(seeds) == 3 * (drafts - 1) and len(set(seeds)) == len(seeds)  # no round redraws another's sample


def test_checked_drafts_are_a_team_leads_and_refused_for_pair_episodes() -> None:
    from gencoord.backends.registry import backend_set  # noqa: PLC0415
    from gencoord.errors import ConfigError  # noqa: PLC0415

    with pytest.raises(ConfigError):
        backend_set(f"checked:{SHIPPED}")
