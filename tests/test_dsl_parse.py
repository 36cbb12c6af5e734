"""The Short DSL grammar of S4.1: what it accepts, what it rejects, and where it says so."""

from __future__ import annotations

import pytest

from gencoord.dsl import WIRE_CAP_BYTES, Task, parse_json, serialize_json
from gencoord.errors import ParseError
from gencoord.prior import Prior
from tests.conftest import ACTIVE_RECEIVER, ACTIVE_SENDER, STICK_COUNTERED


def test_paper_records_parse_and_reserialize_identically(prior: Prior) -> None:
    for text in (ACTIVE_SENDER, ACTIVE_RECEIVER, STICK_COUNTERED):
        assert prior.serialize(prior.parse(text)) == text


def test_structure_of_the_forward_record(prior: Prior) -> None:
    proposal = prior.parse(ACTIVE_SENDER)
    assert [t.skill for t in proposal.self_plan] == ["resource.obtain", "resource.deliver"]
    assert proposal.request is not None and proposal.request.target == "agent_a"
    craft = proposal.request.plan[0]
    assert craft.get("bind") == "WORK_BRANCH" and craft.get("q") == 1 and craft.get("input") == "oak_planks"


def test_aliases_order_and_whitespace_are_not_semantic(prior: Prior) -> None:
    noisy = (
        "  SELF\tresource.obtain( quantity = 8 , item=oak_planks )"
        ">resource.deliver(to_agent_id=agent_a,count=8,item=oak_planks)\r\n"
        "REQ   agent_a  craft.item(item=crafting_table, input=oak_planks, binding_id=WORK_BRANCH, q=1)  \n"
    )
    assert prior.parse(noisy) == prior.parse(ACTIVE_SENDER)
    assert prior.serialize(prior.parse(noisy)) == ACTIVE_SENDER


def test_value_priority_string_number_literal_atom(prior: Prior) -> None:
    text = 'SELF control.wait(q=20,loc="order_chest")\nREQ agent_b control.wait(q=1e2,loc=true)'
    proposal = prior.parse(text)
    assert proposal.self_plan[0].get("loc") == "order_chest"
    assert proposal.request is not None
    assert proposal.request.plan[0].get("q") == 100.0 and isinstance(proposal.request.plan[0].get("q"), float)
    assert proposal.request.plan[0].get("loc") is True


def test_json_string_is_scanned_atomically(prior: Prior) -> None:
    tricky = r'"a \"quoted\", (paren) > and \\ back\u0041"'
    proposal = prior.parse(f"SELF control.wait(q=1,loc={tricky})\nREQ -")
    assert proposal.self_plan[0].get("loc") == 'a "quoted", (paren) > and \\ backA'
    assert prior.parse(prior.serialize(proposal)) == proposal


def test_true_and_one_are_different_values() -> None:
    assert Task("control.wait", (("q", 1),)) != Task("control.wait", (("q", True),))
    assert Task("control.wait", (("q", 1),)) != Task("control.wait", (("q", 1.0),))


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("SELF -", "MISSING_REQ_LINE", 2),
        ("SELF -\nREQ -\nREQ -", "EXTRA_LINE", 3),
        ("SELF -\nREQ -\n\n", "EXTRA_LINE", 3),
        ("SELF craft.itme(q=1,item=stick)\nREQ -", "UNKNOWN_SKILL", 1),
        ("SELF control.wait(q=1,q=2)\nREQ -", "DUPLICATE_KEY", 1),
        ("SELF control.wait(q=1,count=2)\nREQ -", "DUPLICATE_KEY", 1),
        ("SELF control.wait(q=1,loc=ab#c)\nREQ -", "INVALID_ATOM", 1),
        ("SELF control.wait(q=1) extra\nREQ -", "TRAILING_TEXT", 1),
        ("SELF - x\nREQ -", "TRAILING_TEXT", 1),
        ("SELF -\nREQ agent_b", "EMPTY_REQUEST", 2),
        ("SELF -\nREQ agent_b ", "EMPTY_REQUEST", 2),
        ("SELF -\nREQ - control.wait(q=1)", "TRAILING_TEXT", 2),
        ("SELF " + " > ".join(["control.wait(q=1)"] * 6) + "\nREQ -", "TOO_MANY_TASKS", 1),
        ('SELF control.wait(q=1,loc="open)\nREQ -', "UNTERMINATED_STRING", 1),
        ('SELF control.wait(q=1,loc="bad\\x")\nREQ -', "INVALID_STRING", 1),
        ("SELF control.wait(q=1,loc=)\nREQ -", "MISSING_VALUE", 1),
        ("SELF control.wait(q=1\nREQ -", "UNTERMINATED_TASK", 1),
        ("SELF control.wait(q=1e999)\nREQ -", "NUMBER_OUT_OF_RANGE", 1),
        ("REQ -\nSELF -", "EXPECTED_SELF", 1),
        ("SELF -\nSELF -", "EXPECTED_REQ", 2),
        ("SELF control.wait q=1\nREQ -", "EXPECTED_OPEN_PAREN", 1),
        ("SELF control.wait(q 1)\nREQ -", "EXPECTED_EQUALS", 1),
        ("SELF control.wait(q=1 loc=x)\nREQ -", "EXPECTED_COMMA", 1),
        ("SELF-\nREQ -", "EXPECTED_SPACE", 1),
    ],
)
def test_rejections_carry_stable_reason_and_line(prior: Prior, text: str, reason: str, line: int) -> None:
    with pytest.raises(ParseError) as caught:
        prior.parse(text)
    assert caught.value.reason == reason
    assert caught.value.location.line == line
    assert caught.value.code == "PARSE_FAILURE"


def test_error_points_at_task_and_column(prior: Prior) -> None:
    with pytest.raises(ParseError) as caught:
        prior.parse("SELF -\nREQ agent_b resource.obtain(q=1,item=stick) > craft.itme(q=1)")
    error = caught.value
    assert (error.location.section, error.location.task_index, error.location.column) == ("REQ", 2, 47)
    assert "did you mean 'craft.item'?" in str(error)


def test_wire_cap_is_enforced_before_parsing(prior: Prior) -> None:
    big = "SELF -\nREQ agent_b control.wait(q=1,loc=" + '"' + "x" * WIRE_CAP_BYTES + '")'
    for message in (big, big.encode()):
        with pytest.raises(ParseError) as caught:
            prior.parse(message)
        assert caught.value.reason == "MESSAGE_TOO_LARGE" and caught.value.stage == "wire"


def test_invalid_utf8_is_a_parse_failure(prior: Prior) -> None:
    with pytest.raises(ParseError) as caught:
        prior.parse(b"SELF -\nREQ \xff")
    assert caught.value.reason == "INVALID_UTF8"


def test_json_surface_round_trip_and_full_keys(prior: Prior) -> None:
    proposal = prior.parse(ACTIVE_SENDER)
    text = serialize_json(proposal, prior.vocab)
    assert '"quantity":8' in text and '"target_agent_ref":"agent_a"' in text and '"binding_id":"WORK_BRANCH"' in text
    assert parse_json(text, prior.vocab) == proposal


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{", "INVALID_JSON"),
        ('{"self_plan":[],"peer_requests":[],"self_plan":[]}', "DUPLICATE_KEY"),
        ('{"self_plan":[]}', "INVALID_JSON_SCHEMA"),
        ('{"self_plan":[{"skill":"x.y","args":{}}],"peer_requests":[]}', "UNKNOWN_SKILL"),
        ('{"self_plan":[{"skill":"control.wait","args":{"q":1,"count":2}}],"peer_requests":[]}', "DUPLICATE_KEY"),
        ('{"self_plan":[{"skill":"control.wait","args":{"q":NaN}}],"peer_requests":[]}', "INVALID_JSON"),
        ('{"self_plan":[],"peer_requests":[{"target":"agent_b","requested_plan":[]}]}', "INVALID_JSON_SCHEMA"),
    ],
)
def test_json_surface_rejections(prior: Prior, text: str, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_json(text, prior.vocab)
    assert caught.value.reason == reason
