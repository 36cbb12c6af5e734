"""The tiny codec's name slots and character fallback, and the training-time renaming of names (property-tested)."""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

import torch
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from gencoord.models.codec import PAPER_SLOTS, SLOT_TOKENS, TextCodec
from gencoord.models.generate import generate
from gencoord.prior import Prior
from gencoord.train.renaming import fresh_name, instance_names, renamed
from gencoord.train.tiny import TinyPreset, build_model, build_tokenizer

CODEC = TextCodec(build_tokenizer(["SELF resource.obtain(q=4,item=oak_planks) > build.component(site=wall_site)"]))
ALPHABET = string.ascii_letters + string.digits + string.punctuation + " \n"
names = st.text(alphabet=string.ascii_lowercase + "_", min_size=2, max_size=12)
NAMES = frozenset({"SITE_A", "site_a", "ROOF", "roof_site", "order_chest"})


@given(text=st.text(alphabet=ALPHABET, max_size=120))
def test_any_text_round_trips_and_nothing_is_unknown(text: str) -> None:
    ids = CODEC.encode(text)
    assert CODEC.decode(ids) == text
    assert CODEC.unk not in ids


@given(name=names)
def test_a_name_outside_the_vocabulary_is_spelled_a_character_per_token(name: str) -> None:
    text = f"site={name}"
    ids = CODEC.encode(text)
    if CODEC.tokenizer.token_to_id(name) is None:
        assert ids[-len(name) :] == [CODEC.tokenizer.token_to_id(character) for character in name]
    else:
        assert ids[-1] == CODEC.tokenizer.token_to_id(name)
    assert CODEC.decode(ids) == text


def test_a_character_the_vocabulary_lacks_is_unknown_not_dropped() -> None:
    assert CODEC.encode("site=é")[-1] == CODEC.unk


@given(seed=st.integers(0, 10_000), like=st.sampled_from(sorted(NAMES)))
def test_a_fresh_name_keeps_the_case_and_avoids_the_taken(seed: int, like: str) -> None:
    fresh = fresh_name(like, random.Random(seed), taken=NAMES)
    assert fresh not in NAMES and re.fullmatch(r"[A-Za-z]+(_[A-Za-z]+)?", fresh)
    assert fresh.isupper() == like.isupper()


@given(seed=st.integers(0, 10_000))
def test_renaming_swaps_each_copyable_name_for_one_fresh_name_in_both_texts(seed: int) -> None:
    prompt = "private binding=ROOF\nROOF: REQ build.component(bind=ROOF,site=roof_site)\nSITE_A: site=site_a\n"
    target = "REQ agent_b build.component(bind=ROOF,q=4,site=roof_site) > resource.deliver(dst=order_chest)"
    new_prompt, new_target = renamed(prompt, target, NAMES, 1.0, random.Random(seed))
    assert "order_chest" in new_target  # the prompt never shows it: renamed, nothing could recover it
    assert "SITE_A" in new_prompt and "site_a" in new_prompt  # the target never writes them
    assert not {"ROOF", "roof_site"} & set(re.findall(r"[A-Za-z_]+", new_prompt + new_target))
    roof = re.search(r"binding=([A-Za-z_]+)", new_prompt)
    assert roof is not None and f"bind={roof.group(1)}," in new_target  # one fresh name, both texts
    assert renamed(prompt, target, NAMES, 0.0, random.Random(seed)) == (prompt, target)


def test_instance_names_are_the_priors_codes_and_places(prior: Prior) -> None:
    found = instance_names(prior)
    assert {"ROOF", "MARKER_TERMINAL", "roof_site", "order_chest", "oak_planks", "oak_slab"} <= found
    assert not {"agent_a", "SELF", "resource", "q"} & found


name_lists = st.lists(
    st.text(alphabet=string.ascii_letters + "_", min_size=3, max_size=10), min_size=1, max_size=30, unique=True
)


@given(names=name_lists, data=st.data())
def test_each_name_of_a_prompt_outside_the_vocabulary_is_one_slot_token_wherever_it_occurs(
    names: list[str], data: st.DataObject
) -> None:
    prompt = " ".join(f"site={name}" for name in names) + "\n"
    written = data.draw(st.lists(st.sampled_from(names), max_size=6))
    target = "SELF " + " > ".join(f"build.component(site={name})" for name in written)
    bound = CODEC.for_prompt(prompt)
    assert bound.decode(bound.encode(prompt)) == prompt and bound.decode(bound.encode(target)) == target
    unknown = [name for name in names if CODEC.tokenizer.token_to_id(name) is None]
    slotted = unknown[: len(SLOT_TOKENS)]
    assert list(bound.names) == slotted and list(bound.names.values()) == list(bound.slots[: len(slotted)])
    assert set(bound.unwritable()) == set(CODEC.slots) - set(bound.names.values())  # exactly the nameless slots
    for name in slotted:
        assert bound.encode(f"site={name}") == [*bound.encode("site="), bound.names[name]]  # one token, every text
    dealt = CODEC.for_prompt(prompt, random.Random(len(names)))  # training deals the slots at random
    assert set(dealt.names) == set(slotted) and len(set(dealt.names.values())) == len(slotted)
    assert set(dealt.names.values()) <= set(CODEC.slots) and dealt.decode(dealt.encode(target)) == target
    for name in unknown[len(SLOT_TOKENS) :]:  # slots run out: spelled, still exact
        assert len(bound.encode(name)) == len(name)


def test_a_slot_without_a_name_decodes_to_its_token_and_slot_text_in_a_prompt_is_no_slot() -> None:
    bound = CODEC.for_prompt("site=roof_site")
    assert bound.decode([bound.slots[0], bound.slots[5]]) == "roof_site[NAME5]"
    hostile = "site=[NAME5]"  # the text of a slot token is read as text, never as that slot
    reader = CODEC.for_prompt(hostile)
    assert bound.slots[5] not in reader.encode(hostile) and reader.decode(reader.encode(hostile)) == hostile


def test_a_tokenizer_without_slots_spells_every_unknown_name(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(["site=wall_site"])
    data = json.loads(tokenizer.to_str())
    for token in SLOT_TOKENS[:PAPER_SLOTS]:  # a paper-task tokenizer holds the first 24
        del data["model"]["vocab"][token]
    data["model"]["vocab"] = {token: index for index, token in enumerate(data["model"]["vocab"])}
    old = TextCodec(Tokenizer.from_str(json.dumps(data)))
    assert not old.slots and old.for_prompt("site=roof_site") is old
    assert len(old.encode("roof_site")) == len("roof_site")


@given(seed=st.integers(0, 10_000))
def test_a_forward_templates_name_is_renamed_where_the_prompt_shows_it(seed: int) -> None:
    prompt = "task DEPOT_OR_ORDER q=6\nprivate binding=STONE_TO_DEPOT\n"
    target = "REQ agent_a resource.deliver(bind=STONE_TO_DEPOT,q=6)"
    templates = frozenset({"DEPOT_OR_ORDER"})
    new_prompt, new_target = renamed(prompt, target, frozenset({"STONE_TO_DEPOT"}), 1.0, random.Random(seed), templates)
    assert "DEPOT_OR_ORDER" not in new_prompt and re.match(r"task [A-Z_]+ q=6\n", new_prompt)
    assert "STONE_TO_DEPOT" not in new_prompt + new_target
    kept = renamed("private goal=GC_TABLE_ORDER\n", "SELF x", frozenset(), 1.0, random.Random(seed), templates)
    assert kept == ("private goal=GC_TABLE_ORDER\n", "SELF x")  # not a forward template: its name is the task


@given(seed=st.integers(0, 10_000), picked=st.sets(st.sampled_from(sorted(NAMES)), min_size=1))
def test_a_withheld_name_is_read_and_written_through_a_slot_like_a_held_out_one(seed: int, picked: set[str]) -> None:
    shown = " ".join(sorted(NAMES))
    codec = TextCodec(build_tokenizer([shown], withheld=frozenset(picked)))
    assert all(codec.tokenizer.token_to_id(name) is None for name in picked)
    assert all(codec.tokenizer.token_to_id(name) is not None for name in NAMES - picked)
    bound = codec.for_prompt(shown, shuffle=random.Random(seed))
    assert set(bound.names) == picked
    target = " > ".join(sorted(picked))
    assert [i for i in bound.encode(target) if i in codec.slots] == [bound.names[name] for name in sorted(picked)]
    assert bound.decode(bound.encode(target)) == target


def test_greedy_decoding_never_writes_a_slot_the_prompt_gave_no_name() -> None:
    prompt = "site=zz_place\n"
    bound = CODEC.for_prompt(prompt)
    named, free = bound.names["zz_place"], bound.unwritable()[0]
    model = build_model(CODEC.tokenizer.get_vocab_size(), TinyPreset(layers=1, hidden=16, head_dim=4, ffn=32), 0)
    scores = torch.zeros(CODEC.tokenizer.get_vocab_size())
    scores[[free, named, CODEC.eos]] = torch.tensor([3.0, 2.0, 1.0])  # the free slot would win, then the name
    model.lm_head = torch.nn.Linear(16, len(scores))
    with torch.no_grad():
        model.lm_head.weight.zero_()
        model.lm_head.bias.copy_(scores)
    text, _, written = generate(model, CODEC, prompt, max_new=2)
    assert (text, written) == ("zz_placezz_place", 2)


def test_decoding_stops_at_the_models_context() -> None:
    prompt = "SELF resource.obtain(q=4,item=oak_planks)\n"
    prompt_tokens = len(CODEC.for_prompt(prompt).encode(prompt))
    model = build_model(CODEC.tokenizer.get_vocab_size(), TinyPreset(layers=1, hidden=16, head_dim=4, ffn=32), 0)
    scores = torch.zeros(CODEC.tokenizer.get_vocab_size())
    scores[CODEC.tokenizer.token_to_id("S")] = 5.0  # never the end of a record: it would write to the budget
    model.lm_head = torch.nn.Linear(16, len(scores))
    with torch.no_grad():
        model.lm_head.weight.zero_()
        model.lm_head.bias.copy_(scores)
    model.config.max_position_embeddings = prompt_tokens + 3
    _, read, written = generate(model, CODEC, prompt, max_new=50)
    assert (read, written) == (prompt_tokens, 3)
    model.config.max_position_embeddings = prompt_tokens
    assert generate(model, CODEC, prompt, max_new=50) == ("", prompt_tokens, 0)
