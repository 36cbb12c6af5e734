"""The tiny codec's character fallback and the training-time spelling of names (property-tested)."""

from __future__ import annotations

import random
import string

from hypothesis import given
from hypothesis import strategies as st

from gencoord.models.codec import TextCodec
from gencoord.train.data import SupervisionRow
from gencoord.train.tiny import NAME, build_tokenizer, pieces, spelled_names

CODEC = TextCodec(build_tokenizer(["SELF resource.obtain(q=4,item=oak_planks) > build.component(site=wall_site)"]))
ALPHABET = string.ascii_letters + string.digits + string.punctuation + " \n"
names = st.text(alphabet=string.ascii_lowercase + "_", min_size=2, max_size=12)


@given(text=st.text(alphabet=ALPHABET, max_size=120), spell=st.frozensets(names, max_size=4))
def test_any_text_round_trips_and_nothing_is_unknown(text: str, spell: frozenset[str]) -> None:
    ids = CODEC.encode(text, spell)
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


def test_a_known_name_is_one_token_unless_training_asks_for_its_spelling() -> None:
    text = "build.component(site=wall_site)"
    whole, spelled = CODEC.encode(text), CODEC.encode(text, frozenset({"wall_site"}))
    assert CODEC.tokenizer.token_to_id("wall_site") in whole
    assert CODEC.tokenizer.token_to_id("wall_site") not in spelled
    assert len(spelled) == len(whole) + len("wall_site") - 1
    assert CODEC.decode(spelled) == CODEC.decode(whole) == text


def test_a_character_the_vocabulary_lacks_is_unknown_not_dropped() -> None:
    ids = CODEC.encode("site=é")
    assert ids[-1] == CODEC.unk


@given(seed=st.integers(0, 10_000), rate=st.floats(0.0, 1.0))
def test_training_spells_only_names_of_the_row_at_the_given_rate(seed: int, rate: float) -> None:
    row = SupervisionRow(
        "sender_initial",
        "task DUAL_BUILD_ALLOCATION q=3\nprivate binding=ROOF\n>>>\n",
        "REQ agent_b build.component(bind=ROOF,q=3,item=oak_planks,site=roof_site)",
        "c",
        "DUAL_BUILD_ALLOCATION",
        "ROOF",
        0,
        "held_out_template",
    )
    row_names = {piece for text in (row.prompt, row.target) for piece in pieces(text) if NAME.fullmatch(piece)}
    chosen = spelled_names(row, rate, random.Random(seed))
    assert chosen <= row_names
    if rate == 0.0:
        assert not chosen
    if rate == 1.0:
        assert chosen == row_names
