"""Training-time restructuring: a row's task structure is replaced consistently, from training steps only."""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.errors import ConfigError
from gencoord.models.load import load_model
from gencoord.models.variant import ModelSpec, Target
from gencoord.prior.load import default_prior
from gencoord.prior.views import STEP_SEPARATOR, PriorView
from gencoord.tasks.cluster import Split, draw_pool, forward_space
from gencoord.tasks.suites import default_suites
from gencoord.train.data import SupervisionRow, build_rows
from gencoord.train.renaming import instance_names
from gencoord.train.restructure import StepPool, restructured
from gencoord.train.tiny import TinyPreset, train_tiny

FULL = ModelSpec(view=PriorView.FULL)


@cache
def _training() -> tuple[StepPool, frozenset[str], tuple[SupervisionRow, ...]]:
    prior, suites = default_prior(), default_suites()
    trained = frozenset(template for template, _ in forward_space(Split.TRAINING, suites))
    clusters = draw_pool(Split.TRAINING, 24, seed=3) + draw_pool(Split.GOAL_CAPABILITY, 4, seed=3)
    return StepPool.of(prior, trained), trained, tuple(build_rows(clusters, prior, suites, FULL))


def _view_paths(prompt: str) -> dict[str, tuple[str, str]]:
    lines = (re.match(r"^([A-Za-z_]+): SELF (.+) \| REQ (.+)$", line) for line in prompt.split("\n"))
    return {match.group(1): (match.group(2), match.group(3)) for match in lines if match}


def _filled(path: str, prompt: str, receiver: str) -> str:
    task = next(line for line in prompt.split("\n") if line.startswith("task "))
    values = dict(part.split("=", 1) for part in task.split()[2:])
    return re.sub(r"\{([a-z_]+)\}", lambda m: receiver if m.group(1) == "receiver" else values[m.group(1)], path)


@settings(max_examples=80, deadline=None)
@given(index=st.integers(0, 10_000), seed=st.integers(0, 10_000))
def test_a_restructured_target_is_a_copy_of_what_the_new_prompt_shows(index: int, seed: int) -> None:
    pool, _, rows = _training()
    row = rows[index % len(rows)]
    new = restructured(row, pool, random.Random(seed), siblings=[0.0, 1.0][seed % 2], places=[0.0, 1.0][index % 2])
    if row.stage not in ("sender_initial", "receiver_after_request"):
        assert new == row
        return
    agent_line = next(line for line in new.prompt.split("\n") if line.startswith("agent ")).split()
    me, peer = agent_line[1], agent_line[5]
    paths = _view_paths(new.prompt)
    assert set(paths) == set(_view_paths(row.prompt))  # the same bindings, new paths
    if row.stage == "sender_initial":
        active = next(line for line in new.prompt.split("\n") if line.startswith("private binding=")).split("=")[1]
        sender, receiver = paths[active]
        expected = f"SELF {_filled(sender, new.prompt, peer)}\nREQ {peer} {_filled(receiver, new.prompt, peer)}"
        assert new.target == expected
    else:
        incoming = next(line for line in new.prompt.split("\n") if line.startswith("incoming REQ "))
        assert new.target == "SELF " + incoming.removeprefix(f"incoming REQ {me} ") + "\nREQ -"
    default_prior().parse(new.target)  # still Short DSL the parser reads


@settings(max_examples=40, deadline=None)
@given(index=st.integers(0, 10_000), seed=st.integers(0, 10_000))
def test_restructuring_draws_only_on_the_training_templates_steps(index: int, seed: int) -> None:
    pool, trained, rows = _training()
    prior = default_prior()
    new = restructured(rows[index % len(rows)], pool, random.Random(seed))
    seen = {
        re.sub(r"bind=[A-Za-z_]+,|\{[a-z_]+\}", "", step)
        for template in trained
        for paths in prior.templates[template].bindings.values()
        for step in (*paths.sender.split(STEP_SEPARATOR), *paths.receiver.split(STEP_SEPARATOR))
    }
    for sender, receiver in _view_paths(new.prompt).values():
        for step in (*sender.split(STEP_SEPARATOR), *receiver.split(STEP_SEPARATOR)):
            assert re.sub(r"bind=[A-Za-z_]+,|\{[a-z_]+\}", "", step) in seen


@settings(max_examples=40, deadline=None)
@given(index=st.integers(0, 10_000), seed=st.integers(0, 10_000))
def test_sibling_bindings_share_the_sender_path_and_differ_in_one_receiver_step(index: int, seed: int) -> None:
    pool, _, rows = _training()
    row = rows[index % len(rows)]
    new = restructured(row, pool, random.Random(seed), siblings=1.0)
    paths = list(_view_paths(new.prompt).values())
    if new == row or len(paths) < 2:
        return
    unbound = [
        (sender, [re.sub(r"bind=[A-Za-z_]+,", "", step) for step in receiver.split(STEP_SEPARATOR)])
        for sender, receiver in paths
    ]
    first_sender, first_receiver = unbound[0]
    for sender, receiver in unbound[1:]:
        assert sender == first_sender and len(receiver) == len(first_receiver)
        assert sum(a != b for a, b in zip(receiver, first_receiver, strict=True)) <= 1


_PLACE = re.compile(r"\b(dst|site)=([a-z_]+)")


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, 10_000), seed=st.integers(0, 10_000))
def test_place_siblings_differ_from_the_first_binding_in_places_only(index: int, seed: int) -> None:
    pool, _, rows = _training()
    row = rows[index % len(rows)]
    new = restructured(row, pool, random.Random(seed), siblings=1.0, places=1.0)
    paths = list(_view_paths(new.prompt).values())
    if new == row or len(paths) < 2:
        return

    def unplaced(path: str) -> str:
        return _PLACE.sub(r"\1=*", re.sub(r"bind=[A-Za-z_]+,", "", path))

    first_sender, first_receiver = paths[0]
    for sender, receiver in paths[1:]:
        if not _PLACE.search(first_receiver):  # nothing to vary: a sibling one step apart
            continue
        assert unplaced(sender) == unplaced(first_sender) and unplaced(receiver) == unplaced(first_receiver)
        changed = [
            (a.groups(), b.groups())
            for a, b in zip(_PLACE.finditer(receiver), _PLACE.finditer(first_receiver), strict=True)
            if a.groups() != b.groups()
        ]
        assert len(changed) == 1  # one place of the receiver's steps
        (key, new_place), (_, old_place) = changed[0]
        for a, b in zip(_PLACE.finditer(sender), _PLACE.finditer(first_sender), strict=True):
            # the sender's steps keep their places, or swap the one the receiver took for the one it left
            assert a.groups() == b.groups() or (a.groups(), b.groups()) == ((key, old_place), (key, new_place))


@pytest.mark.parametrize(
    ("spec", "preset"),
    [
        (FULL, TinyPreset(restructuring=0.5, siblings=0.5, place_siblings=1.5)),
        (FULL, TinyPreset(restructuring=0.5, place_siblings=0.5)),  # place siblings are siblings
        (FULL, TinyPreset(restructuring=1.5)),
        (FULL, TinyPreset(restructuring=0.5, siblings=-0.1)),
        (FULL, TinyPreset(siblings=0.5)),  # siblings shape restructured views only
        (ModelSpec(view=PriorView.NONE), TinyPreset(restructuring=0.5)),
        (ModelSpec(view=PriorView.FULL, target=Target.FACTOR), TinyPreset(restructuring=0.5)),
    ],
)
def test_restructuring_refuses_a_rate_or_model_it_cannot_serve(
    spec: ModelSpec, preset: TinyPreset, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as caught:
        train_tiny(spec, tmp_path / "model", 1, preset=preset)
    assert caught.value.reason == "BAD_RESTRUCTURING"


def test_a_restructured_model_trains_and_its_manifest_records_the_recipe(tmp_path: Path) -> None:
    preset = TinyPreset(
        renaming=0.8, restructuring=0.8, siblings=0.5, place_siblings=0.5, batch=4, slot_names=True, threads=1
    )
    train_tiny(FULL, tmp_path / "model", 3, seed=0, evaluate=1, preset=preset)
    loaded = load_model(tmp_path / "model")
    settings = loaded.manifest.settings
    assert settings is not None and settings["renaming"] == 0.8 and settings["restructuring"] == 0.8
    assert settings["siblings"] == 0.5 and settings["place_siblings"] == 0.5 and settings["slot_names"] is True
    assert settings["batch"] == 4
    vocabulary = loaded.codec.tokenizer.get_vocab()  # type: ignore[attr-defined]
    assert not instance_names(default_prior()) & set(vocabulary)  # every instance name is read through a slot
    assert "resource.deliver(" in vocabulary and ",item=" in vocabulary


def test_the_train_command_sets_the_tiny_width_and_rate_and_refuses_what_it_cannot_train(tmp_path: Path) -> None:
    runner = CliRunner()
    odd = runner.invoke(app, ["train", "--out", str(tmp_path / "odd"), "--hidden", "40", "--steps", "1"])
    assert odd.exit_code == 2 and "CONFIG_INVALID" in odd.stderr and "multiple of 16" in odd.stderr
    assert not (tmp_path / "odd").exists()
    args = ["--view", "full", "--restructuring", "0.5", "--hidden", "32", "--layers", "1", "--threads", "1"]
    args += ["--siblings", "0.5", "--place-siblings", "0.5", "--batch", "3"]
    args += ["--lr", "0.0025", "--warmup", "500", "--evaluate", "0"]  # an untrained model decodes to the limit
    trained = runner.invoke(app, ["train", "--out", str(tmp_path / "m"), "--steps", "2", *args])
    assert trained.exit_code == 0, trained.stderr
    assert "exact match – on 0 rows" in trained.stdout and "– on 0 rows of held-out templates" in trained.stdout
    config = load_model(str(tmp_path / "m")).model.config  # a path given as text loads too
    assert (config.hidden_size, config.head_dim, config.intermediate_size, config.num_hidden_layers) == (32, 8, 128, 1)
    settings = load_model(tmp_path / "m").manifest.settings
    assert settings is not None and (settings["lr"], settings["warmup"]) == (0.0025, 500)
    assert (settings["place_siblings"], settings["batch"]) == (0.5, 3)
    defaults = runner.invoke(
        app, ["train", "--out", str(tmp_path / "d"), "--steps", "1", "--layers", "1", "--evaluate", "2"]
    )
    assert defaults.exit_code == 0, defaults.stderr
    settings = load_model(tmp_path / "d").manifest.settings
    assert settings is not None and (settings["lr"], settings["warmup"]) == (TinyPreset.lr, TinyPreset.warmup)
    zero = runner.invoke(app, ["train", "--out", str(tmp_path / "z"), "--lr", "0", "--steps", "1"])
    assert zero.exit_code == 2 and not (tmp_path / "z").exists()
    negative = runner.invoke(app, ["train", "--out", str(tmp_path / "n"), "--evaluate", "-1", "--steps", "1"])
    assert negative.exit_code == 2 and not (tmp_path / "n").exists()
    empty = runner.invoke(app, ["train", "--out", str(tmp_path / "e"), "--batch", "0", "--steps", "1"])
    assert empty.exit_code == 2 and not (tmp_path / "e").exists()


@pytest.mark.parametrize("preset", [TinyPreset(lr=0.0), TinyPreset(lr=1.5), TinyPreset(warmup=-1)])
def test_a_learning_rate_or_warm_up_it_cannot_train_with_is_refused(preset: TinyPreset, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        train_tiny(FULL, tmp_path / "model", 1, preset=preset)
    assert caught.value.reason == "BAD_LR" and not (tmp_path / "model").exists()
