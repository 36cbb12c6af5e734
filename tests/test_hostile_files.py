"""Hostile config, prior and manifest files: any content fails with the typed error, never another exception."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gencoord.errors import ConfigError, GencoordError, PriorError
from gencoord.eval.config import load_experiment
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.eval.kinds.gate.config import GateExperimentConfig
from gencoord.models.manifest import MANIFEST, CheckpointManifest
from gencoord.prior.load import load_prior
from gencoord.tasks.team_files import load_team_tasks

FIELDS = sorted({*EpisodeExperimentConfig.model_fields, *GateExperimentConfig.model_fields, "extends", "nonsense"})

scalar = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.text(max_size=12).map(json.dumps),  # a TOML basic string is a JSON string here
    st.sampled_from(['"request"', '"timing"', '"rule"', '"gate"', '"model:x"', '"eval"', '"clean"']),
)
value = st.one_of(scalar, st.lists(scalar, max_size=4).map(lambda items: "[" + ", ".join(map(str, items)) + "]"))


def _toml(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


documents = st.dictionaries(st.sampled_from(FIELDS), value, max_size=8).map(
    lambda table: "".join(f"{key} = {_toml(item)}\n" for key, item in table.items())
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(documents, st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
def test_any_experiment_file_loads_or_fails_with_a_config_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hostile.toml"
    path.write_bytes(text.encode("utf-8", "surrogatepass") if text.isascii() else text.encode("latin-1"))
    try:
        load_experiment(path)
    except ConfigError as error:
        assert error.reason and str(path) in error.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_any_prior_file_loads_or_fails_with_a_prior_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "prior.toml"
    path.write_bytes(b'extends = "default"\n' + data)
    try:
        load_prior(path)
    except PriorError as error:
        assert error.reason


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.binary(max_size=200),
        st.dictionaries(st.sampled_from(["kind", "target", "seed"]), scalar).map(lambda d: json.dumps(d).encode()),
    )
)
def test_any_checkpoint_manifest_reads_or_fails_with_a_config_error(tmp_path: Path, data: bytes) -> None:
    (tmp_path / MANIFEST).write_bytes(data)
    try:
        CheckpointManifest.read(tmp_path)
    except GencoordError as error:
        assert error.reason in {"BAD_MANIFEST", "NOT_A_MODEL"} and MANIFEST in error.message


MINDCRAFT_KEYS = ["agent_count", "initial_inventory", "target", "number_of_target", "blocked_actions", "timeout", "x"]
json_value = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 40),
        st.sampled_from(["stick", "!collectBlocks", "oak_planks", "0", "1", ""]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["0", "1", "2", "stick", "oak_log", *MINDCRAFT_KEYS]), inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["t1", "t2"]), st.dictionaries(st.sampled_from(MINDCRAFT_KEYS), json_value)))
def test_any_task_file_loads_or_fails_with_a_config_error(tmp_path: Path, document: dict[str, object]) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    try:
        tasks = load_team_tasks(path)
    except ConfigError as error:
        assert error.reason and str(path) in error.message
    else:
        assert all(task.agents for task in tasks)
