"""Backend names parse once into typed specs: every name the grammar allows round-trips, anything else is refused."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from gencoord.backends.families import FAMILIES, RECEIVERS, BackendSpec, parse_backend
from gencoord.errors import ConfigError
from gencoord.prior.views import PriorView

_SAFE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./", min_size=1, max_size=20).filter(
    lambda text: "{seed}" not in text
)


@st.composite
def names(draw: st.DrawFn) -> tuple[str, str, str | None, str | None, PriorView | None]:
    """(written name, family, target, receiver, view) for any name the grammar allows."""
    family = draw(st.sampled_from(FAMILIES.names()))
    written = FAMILIES.get(family).target
    target = None
    if written is not None:
        target = draw(_SAFE) + draw(st.sampled_from(["", "-s{seed}"]))
        if written == "<url>#<model>":
            target = f"http://{draw(_SAFE)}:8000/v1#{draw(_SAFE)}"
    receiver = draw(st.sampled_from([None, *RECEIVERS]))
    view = draw(st.sampled_from([None, *PriorView]))
    name = family + (f":{target}" if target is not None else "")
    name += f"+{receiver}" if receiver else ""
    name += f"@{view.value}" if view else ""
    return name, family, target, receiver, view


@given(names())
def test_every_name_the_grammar_allows_parses_into_its_parts_and_back(
    drawn: tuple[str, str, str | None, str | None, PriorView | None],
) -> None:
    name, family, target, receiver, view = drawn
    spec = parse_backend(name)
    assert spec == name and isinstance(spec, BackendSpec)
    assert (spec.family.name, spec.target, spec.receiver, spec.view) == (family, target, receiver, view)
    assert spec.base + (f"+{receiver}" if receiver else "") + (f"@{view.value}" if view else "") == name
    assert parse_backend(spec) is spec  # parsed once
    copy = pickle.loads(pickle.dumps(spec))  # a job carries its spec to a worker
    assert copy == spec and copy.family is spec.family and copy.view is spec.view
    seeded = spec.for_seed(7)
    assert seeded == name.replace("{seed}", "7") and "{seed}" not in seeded


@given(st.text(max_size=40))
def test_any_text_is_a_spec_or_a_typed_refusal(text: str) -> None:
    try:
        spec = parse_backend(text)
    except ConfigError as error:
        assert error.reason in {"UNKNOWN_BACKEND"}, error
    else:
        assert spec == text


def test_a_refusal_names_the_near_miss_and_every_family() -> None:
    try:
        parse_backend("modle:checkpoints/tiny")
    except ConfigError as error:
        assert "unknown backend 'modle:checkpoints/tiny'; did you mean 'model'?" in error.message
        assert all(FAMILIES.get(name).written() in error.message for name in FAMILIES.names())
    else:
        raise AssertionError("a misspelt family parsed")
    for bad, said in (("rule:extra", "takes no target"), ("model", "is written model:<checkpoint>"), ("api:x", "api:")):
        try:
            parse_backend(bad)
        except ConfigError as error:
            assert said in error.message, error.message
        else:
            raise AssertionError(f"{bad} parsed")
