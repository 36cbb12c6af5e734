"""Codec invariants (S3) and robustness, property-tested with hypothesis."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gencoord.dsl import PeerRequest, Proposal, Task, normalize, parse, parse_json, serialize, serialize_json
from gencoord.dsl.parse import parse_scanned, split_lines
from gencoord.dsl.serialize import format_value
from gencoord.dsl.vocabulary import default_vocabulary
from gencoord.errors import ContractError, ParseError
from gencoord.prior import check_proposal, default_prior
from tests.conftest import ACTIVE_SENDER, STICK_COUNTERED, STICK_INITIAL
from tests.strategies import any_value, legal_proposal

PRIOR = default_prior()
EPISODE = PRIOR.default_episode
REVERSE_ALIASES = {
    key: [s for s, k in PRIOR.vocab.aliases.items() if k == key] for key in set(PRIOR.vocab.aliases.values())
}


@settings(max_examples=300, deadline=None)
@given(legal_proposal(PRIOR))
def test_generated_objects_are_legal(proposal: Proposal) -> None:
    check_proposal(proposal, "agent_a", PRIOR, EPISODE)


@settings(max_examples=400, deadline=None)
@given(legal_proposal(PRIOR))
def test_decode_encode_is_normalize_for_legal_objects(proposal: Proposal) -> None:
    text = PRIOR.serialize(proposal)
    decoded = PRIOR.parse(text)
    check_proposal(decoded, "agent_a", PRIOR, EPISODE)
    assert decoded == normalize(proposal, PRIOR.vocab)
    assert text == text.strip() and text.count("\n") == 1 and text.isascii()


def _respell(task: Task, rng: random.Random) -> str:
    args = [(rng.choice(REVERSE_ALIASES[k]), v) for k, v in task.args]
    rng.shuffle(args)
    pad = rng.choice(["", " ", "\t", "  "])
    inner = f"{pad},{pad}".join(f"{k}{pad}={pad}{format_value(v)}" for k, v in args)
    return f"{task.skill}{pad}({pad}{inner}{pad})"


@settings(max_examples=300, deadline=None)
@given(legal_proposal(PRIOR), st.randoms(use_true_random=False))
def test_semantic_equality_ignores_order_aliases_and_spacing(proposal: Proposal, rng: random.Random) -> None:
    def path(tasks: tuple[Task, ...]) -> str:
        return rng.choice([" > ", ">", "  >\t"]).join(_respell(t, rng) for t in tasks)

    head = f"SELF {path(proposal.self_plan)}" if proposal.self_plan else "SELF -"
    tail = f"REQ {proposal.request.target} {path(proposal.request.plan)}" if proposal.request else "REQ -"
    assert PRIOR.parse(f"{head}\n{tail}") == normalize(proposal, PRIOR.vocab)


@settings(max_examples=300, deadline=None)
@given(legal_proposal(PRIOR))
def test_json_surface_carries_the_same_object(proposal: Proposal) -> None:
    assert parse_json(serialize_json(proposal, PRIOR.vocab), PRIOR.vocab) == normalize(proposal, PRIOR.vocab)


keys = st.sampled_from(sorted(PRIOR.vocab.aliases.values()))
raw_task = st.builds(
    lambda skill, args: Task(skill, PRIOR.vocab.canonical_args(skill, args)),
    st.sampled_from(sorted(PRIOR.skills)),
    st.dictionaries(keys, any_value, max_size=4),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(raw_task, max_size=5), st.lists(raw_task, min_size=1, max_size=5), st.booleans())
def test_syntax_round_trip_for_any_primitive_values(mine: list[Task], theirs: list[Task], with_request: bool) -> None:
    proposal = Proposal(tuple(mine), (PeerRequest("agent_b", tuple(theirs)),) if with_request else ())
    assert PRIOR.parse(PRIOR.serialize(proposal)) == proposal


peers = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=2, max_size=6, unique=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(raw_task, max_size=5), peers, st.data())
def test_n_party_round_trip_one_sorted_req_line_per_peer(
    mine: list[Task], targets: list[str], data: st.DataObject
) -> None:
    """gencoord's n-party extension: decode(encode(q)) == q, with REQ lines sorted by agent whatever the order sent."""
    requests = tuple(PeerRequest(t, tuple(data.draw(st.lists(raw_task, min_size=1, max_size=5)))) for t in targets)
    proposal = Proposal(tuple(mine), requests)
    text = PRIOR.serialize(proposal)
    lines = text.split("\n")
    assert len(lines) == 1 + len(targets) and [line.split(" ")[1] for line in lines[1:]] == sorted(targets)
    decoded = PRIOR.parse(text)
    assert decoded == Proposal(tuple(mine), tuple(sorted(requests, key=lambda r: r.target)))
    shuffled = "\n".join([lines[0], *data.draw(st.permutations(lines[1:]))])
    assert PRIOR.parse(shuffled) == decoded  # the order sent does not matter


def test_n_party_form_keeps_req_dash_alone_and_one_line_per_peer() -> None:
    wait = "control.wait(q=1)"
    for text, reason in (
        (f"SELF -\nREQ agent_b {wait}\nREQ -", "REQ_DASH_NOT_ALONE"),
        (f"SELF -\nREQ agent_b {wait}\nREQ agent_b {wait}", "DUPLICATE_PEER"),
        (f"SELF -\nREQ -\nREQ agent_b {wait}", "EXTRA_LINE"),
    ):
        with pytest.raises(ParseError) as caught:
            PRIOR.parse(text)
        assert caught.value.reason == reason and caught.value.location.line == 3
    with pytest.raises(ValueError, match="one REQ line per peer"):
        PRIOR.serialize(Proposal((), (PeerRequest("x", (Task("control.wait", (("q", 1),)),)),) * 2))


def _decode_or_reject(message: str | bytes) -> None:
    with contextlib.suppress(ParseError, ContractError):
        check_proposal(PRIOR.parse(message), "agent_a", PRIOR, EPISODE)


SEEDS = [ACTIVE_SENDER, STICK_INITIAL, STICK_COUNTERED, "SELF -\nREQ -"]
ALPHABET = st.sampled_from([*'SELFREQ -_>()=,."\\\n\r\t0123456789aqzé\x00', "\u2028", "\ud800"])


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = list(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(0, len(text)))
        operation = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        if operation == "insert":
            text.insert(position, draw(ALPHABET))
        elif text and position < len(text):
            if operation == "delete":
                del text[position]
            elif operation == "replace":
                text[position] = draw(ALPHABET)
            else:
                text[position:position] = text[position : position + draw(st.integers(1, 20))]
    return "".join(text)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(mutated(), st.text(max_size=300), st.binary(max_size=300)))
def test_any_input_fails_cleanly(message: str | bytes) -> None:
    _decode_or_reject(message)


@pytest.mark.slow
@settings(max_examples=6000, deadline=None)  # deeper campaigns: make fuzz (coverage-guided, atheris)
@given(st.one_of(mutated(), st.text(max_size=600), st.binary(max_size=600)))
def test_any_input_fails_cleanly_long(message: str | bytes) -> None:
    _decode_or_reject(message)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.integers(0, 400).map(lambda n: serialize_json(PRIOR.parse(ACTIVE_SENDER), PRIOR.vocab)[:n]),
    )
)
def test_any_json_input_fails_cleanly(message: str) -> None:
    with contextlib.suppress(ParseError, ContractError):
        check_proposal(parse_json(message, PRIOR.vocab), "agent_a", PRIOR, EPISODE)


def test_the_codec_default_vocabulary_is_the_packaged_priors() -> None:
    assert default_vocabulary() == PRIOR.vocab


@settings(max_examples=300, deadline=None)
@given(legal_proposal(PRIOR).map(PRIOR.serialize), st.booleans())
def test_parse_needs_no_prior_and_tolerates_crlf(text: str, trailing: bool) -> None:
    """``gencoord.dsl.parse(text)`` decides like the prior's parser, with LF or CRLF line ends."""
    crlf = text.replace("\n", "\r\n") + ("\r\n" if trailing else "")
    assert parse(text) == parse(crlf) == PRIOR.parse(text)
    assert serialize(parse(crlf)) == text


@settings(max_examples=300, deadline=None)
@given(legal_proposal(PRIOR).map(PRIOR.serialize), st.data())
def test_a_nul_byte_anywhere_is_named(text: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(text)))
    with pytest.raises(ParseError) as caught:
        parse(text[:at] + "\x00" + text[at:])
    assert caught.value.reason == "NUL_BYTE" and "NUL" in caught.value.message


def _outcome(parser: Callable[[], Proposal]) -> Proposal | str:
    try:
        return parser()
    except ParseError as error:
        return error.reason


@settings(max_examples=1500, deadline=None)
@given(
    st.one_of(
        legal_proposal(PRIOR).map(PRIOR.serialize),
        st.builds(lambda tasks: PRIOR.serialize(Proposal(tuple(tasks))), st.lists(raw_task, max_size=5)),
        mutated(),
    )
)
def test_fast_path_and_scanner_agree(text: str) -> None:
    """parse() takes a regex fast path for canonical lines; it must decide exactly like the scanner."""
    fast = _outcome(lambda: PRIOR.parse(text))
    scanned = _outcome(lambda: parse_scanned(split_lines(text), PRIOR.vocab))
    assert fast == scanned
