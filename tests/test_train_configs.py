"""Typed trainer configs: each trainer reads its own options, and an option it does not read is refused by name."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.errors import ConfigError
from gencoord.models.variant import Records, TeamRoles
from gencoord.train.configs import TRAINERS, LoraTraining, TeamTraining, load_training, training_config

SAMPLE = {  # a valid value of every key some trainer reads
    "seed": 3,
    "steps": 5,
    "layers": 1,
    "hidden": 32,
    "batch": 2,
    "threads": 1,
    "lr": 0.01,
    "warmup": 0,
    "evaluate": 0,
    "target": "factor",
    "surface": "dsl",
    "horizon": "single",
    "records": "all",
    "view": "full",
    "templates": "representation",
    "renaming": 0.5,
    "restructuring": 0.5,
    "siblings": 0.5,
    "place_siblings": 0.5,
    "slot_names": True,
    "roles": "every",
    "team_sizes": [2, 3, 5, 8],
    "minutes": 1.0,
    "model": "some/checkpoint",
    "epochs": 1,
    "micro_batch": 2,
    "base": "smollm2-135m-instruct",
    "rank": 4,
}


def test_every_key_a_trainer_reads_has_a_sample() -> None:
    keys = {key for model in TRAINERS.values() for key in model.model_fields} - {"trainer", "out"}
    assert keys == set(SAMPLE)


@pytest.mark.parametrize(("trainer", "key"), list(itertools.product(TRAINERS, SAMPLE)))
def test_a_trainer_takes_each_key_it_reads_and_refuses_each_other_by_name(trainer: str, key: str) -> None:
    data = {"trainer": trainer, "out": "somewhere", key: SAMPLE[key]}
    if trainer == "checkpoint" and key != "model":
        data["model"] = "some/checkpoint"
    if trainer == "lora" and key in ("target", "horizon", "view", "templates"):
        data["records"] = "all"  # these shape the paper's rows, which a LoRA adapter trains on only when asked
    if key in TRAINERS[trainer].model_fields:
        config = training_config(data)
        assert getattr(config, key) == type(getattr(config, key))(SAMPLE[key])
        return
    with pytest.raises(ConfigError) as refused:
        training_config(data)
    assert refused.value.reason == "OPTION_NOT_READ"
    assert f"--{key.replace('_', '-')} is not read by the {trainer} trainer" in refused.value.message
    readers = [name for name, model in TRAINERS.items() if key in model.model_fields]
    assert all(reader in refused.value.message for reader in readers)


def test_the_train_commands_options_are_what_its_trainers_read() -> None:
    """No option of ``gencoord train`` or ``finetune`` that no trainer reads (it would be ignored)."""
    command = get_command(app)
    for name, trainers in (("train", ("tiny", "team", "checkpoint")), ("finetune", ("lora",))):
        options = {param.name for param in command.commands[name].params} - {"config", "preset"}  # type: ignore[attr-defined]
        read = {key for trainer in trainers for key in TRAINERS[trainer].model_fields}
        assert options <= read, options - read


def test_a_toml_file_gives_a_trainer_its_options_and_the_command_line_overrides_them(tmp_path: Path) -> None:
    path = tmp_path / "team.toml"
    path.write_text('trainer = "team"\nout = "models/team"\nlayers = 2\nhidden = 64\nroles = "lead"\n')
    config = load_training(path, {"hidden": 96})
    assert isinstance(config, TeamTraining)
    assert (config.layers, config.hidden, config.roles, config.out) == (2, 96, TeamRoles.LEAD, Path("models/team"))
    path.write_text('trainer = "lora"\nout = "adapter"\nrnak = 8\n')
    with pytest.raises(ConfigError) as refused:
        load_training(path)
    assert refused.value.reason == "OPTION_NOT_READ" and "did you mean 'rank'?" in refused.value.message
    path.write_text('trainer = "lora"\nout = "adapter"\nrank = 0\n')
    with pytest.raises(ConfigError) as invalid:
        load_training(path)
    assert invalid.value.reason == "CONFIG_INVALID" and "rank" in invalid.value.message
    path.write_text('trainer = "gpt"\nout = "x"\n')
    with pytest.raises(ConfigError) as unknown:
        load_training(path)
    assert unknown.value.reason == "UNKNOWN_TRAINER" and "tiny, team, checkpoint, lora" in unknown.value.message


def test_team_records_and_roles_belong_to_team_trainers() -> None:
    with pytest.raises(ConfigError) as tiny:
        training_config({"out": "x", "records": Records.TEAM})
    assert "team trainer" in tiny.value.message
    with pytest.raises(ConfigError) as checkpoint:
        training_config({"trainer": "checkpoint", "out": "x", "model": "m", "roles": "lead"})
    assert "give records = 'team'" in checkpoint.value.message
    assert training_config({"trainer": "lora", "out": "x"}) == LoraTraining(out=Path("x"))


def test_an_option_the_chosen_trainer_ignores_is_refused_on_the_command_line_before_anything_is_written(
    tmp_path: Path,
) -> None:
    out = tmp_path / "team"
    result = CliRunner().invoke(app, ["train", "--out", str(out), "--records", "team", "--renaming", "0.3"])
    assert result.exit_code == 2 and "OPTION_NOT_READ" in result.stderr
    assert "--renaming is not read by the team trainer (--records team)" in result.stderr
    assert not out.exists()
    result = CliRunner().invoke(app, ["train", "--out", str(out), "--model", "m", "--steps", "3"])
    assert result.exit_code == 2 and "--steps is not read by the checkpoint trainer (--model)" in result.stderr
