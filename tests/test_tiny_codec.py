"""The tiny codec's character fallback and the training-time renaming of names (property-tested)."""

from __future__ import annotations

import random
import re
import string

from hypothesis import given
from hypothesis import strategies as st

from gencoord.models.codec import TextCodec
from gencoord.prior import Prior
from gencoord.train.renaming import fresh_name, instance_names, renamed
from gencoord.train.tiny import build_tokenizer

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
    assert {"ROOF", "MARKER_TERMINAL", "roof_site", "order_chest"} <= found
    assert not {"oak_planks", "agent_a", "SELF"} & found
