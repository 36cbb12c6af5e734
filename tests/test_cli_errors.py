"""What a new user trips over: every ordinary mistake is one message and a stable exit status, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gencoord.cli.application
import gencoord.cli.demo
import gencoord.extras
from gencoord.cli import app, main
from gencoord.errors import ConfigError
from gencoord.eval.config import load_experiment
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.extras import require_learn

runner = CliRunner()
GENCOORD = [sys.executable, "-m", "gencoord.cli"]


def _run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*GENCOORD, *args], input=stdin, capture_output=True, cwd=cwd, timeout=120, check=False)


def test_version_and_short_help() -> None:
    assert runner.invoke(app, ["--version"]).stdout.strip() == f"gencoord {gencoord.__version__}"
    short = runner.invoke(app, ["-h"])
    assert short.exit_code == 0 and "Usage" in short.stdout
    for command in ("parse", "episode", "run", "report", "train", "demo"):
        helped = runner.invoke(app, [command, "-h"])
        assert helped.exit_code == 0 and "Example" in helped.stdout, command


def test_peer_text_is_data_never_markup() -> None:
    markup = runner.invoke(
        app, ["parse"], input="SELF -\nREQ agent_a resource.deliver(q=1,item=[/red]x,dst=order_chest)\n"
    )
    assert markup.exit_code == 1 and "[/red]x" in markup.stderr
    blink = runner.invoke(
        app, ["parse"], input='SELF -\nREQ agent_a resource.deliver(q=1,item="[blink]stick",dst=order_chest)\n'
    )
    assert blink.exit_code == 1 and "[blink]stick" in blink.stderr and "unknown Minecraft item" in blink.stderr


def test_a_config_name_error_shows_the_pattern_whole(tmp_path: Path) -> None:
    config = tmp_path / "my.toml"
    config.write_text('name = "MyRun"\npool = "timing"\nconditions = ["request"]\n', encoding="utf-8")
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2 and "^[a-z0-9][a-z0-9_-]*$" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_parse_keeps_its_promises(tmp_path: Path) -> None:
    crlf = _run("parse", stdin=b"SELF -\r\nREQ agent_a resource.deliver(q=1,item=stick,dst=order_chest)\r\n")
    assert crlf.returncode == 0, crlf.stderr
    zero = _run("parse", "/dev/zero")  # at most cap + 1 bytes are read: no memory blow-up
    assert zero.returncode == 1 and b"wire cap is 4096 bytes" in zero.stderr
    nul = _run("parse", stdin=b"SELF -\nREQ agent_a\x00 x()\n")
    assert nul.returncode == 1 and b"NUL byte" in nul.stderr and b"line 2, column 12" in nul.stderr
    freeform = runner.invoke(app, ["parse", "--surface", "freeform"], input="hi\n")
    assert freeform.exit_code == 2 and "episode --surface freeform" in freeform.stderr


def test_files_that_are_not_utf8_say_so(tmp_path: Path) -> None:
    broken = tmp_path / "latin1.toml"
    broken.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    config = runner.invoke(app, ["run", str(broken)])
    prior = runner.invoke(app, ["parse", "--prior", str(broken)], input="SELF -\nREQ -\n")
    for result in (config, prior):
        assert result.exit_code == 2 and "not UTF-8" in result.stderr and "save it as UTF-8" in result.stderr


def test_validation_errors_name_the_field_and_the_choices(tmp_path: Path) -> None:
    config = tmp_path / "pool.toml"
    config.write_text('name = "x"\npool = {split = "nope", size = 4}\nconditions = ["request"]\n', encoding="utf-8")
    result = runner.invoke(app, ["run", str(config)])
    assert result.exit_code == 2 and "pool.split:" in result.stderr and "'in_distribution'" in result.stderr
    assert "pool.str" not in result.stderr and "PoolSpec" not in result.stderr


def test_episode_options_must_fit_the_template() -> None:
    forward_mode = runner.invoke(app, ["episode", "--template", "CHEST_A_OR_B", "--mode", "RAW_PROCESSOR"])
    assert forward_mode.exit_code == 2 and "takes --binding, not --mode" in forward_mode.stderr
    capability_binding = runner.invoke(app, ["episode", "--template", "GC_STICK_ORDER", "--binding", "CHEST_A"])
    assert capability_binding.exit_code == 2 and "takes --mode, not --binding" in capability_binding.stderr
    unknown = runner.invoke(app, ["episode", "--template", "CHEST_A_OR_C"])
    assert unknown.exit_code == 2 and "did you mean 'CHEST_A_OR_B'" in unknown.stderr
    wrong_mode = runner.invoke(app, ["episode", "--template", "GC_STICK_ORDER", "--mode", "NOPE"])
    assert wrong_mode.exit_code == 2 and "not a workcell mode" in wrong_mode.stderr


def test_a_missing_learn_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gencoord.extras, "find_spec", lambda name: None)
    result = runner.invoke(app, ["episode", "--template", "CHEST_A_OR_B", "--backend", "model:somewhere"])
    assert result.exit_code == 2 and "pip install 'gencoord[learn]'" in result.stderr
    trained = runner.invoke(app, ["train", "--out", "nowhere"])
    assert trained.exit_code == 2 and "gencoord train needs the 'learn' extra" in trained.stderr
    with pytest.raises(ConfigError) as caught:
        require_learn("an API backend", ("openai",))
    assert caught.value.reason == "MISSING_EXTRA" and "openai" in caught.value.message


def test_a_bug_is_one_line_and_a_crash_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_args: object) -> None:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(gencoord.cli.demo, "run_demo", broken)
    monkeypatch.setattr(sys, "argv", ["gencoord", "demo"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == gencoord.cli.application.INTERNAL
    message = capsys.readouterr().err
    assert "internal error (ZeroDivisionError: simulated bug)" in message and "Traceback" not in message
    crash = Path(message.split("the traceback is in ")[1].split(". Please")[0])
    assert "ZeroDivisionError" in crash.read_text(encoding="utf-8")
    crash.unlink()


def test_piped_output_is_not_wrapped_at_80_columns() -> None:
    piped = _run("episode", "--template", "CHEST_A_OR_B")
    assert piped.returncode == 0
    assert max(len(line) for line in piped.stdout.decode("utf-8").splitlines()) > 100


def test_the_demo_labels_replays_and_counts_no_model_calls() -> None:
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0
    assert "model calls: 0 (every output above is replayed from the paper's recording)" in result.stdout
    assert "paper-recording (replayed)" in result.stdout


def test_shipped_configs_run_by_name_from_anywhere(tmp_path: Path) -> None:
    result = _run("run", "request_intervention", "--clusters", "2", "--workers", "1", "--out", "runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [record_file] = (tmp_path / "runs").glob("request_intervention-*/episodes.jsonl")
    assert len(record_file.read_text(encoding="utf-8").splitlines()) == 2 * 3 * 3 * 2  # clusters×conditions×seeds×roles
    unknown = _run("run", "request_interventoin", cwd=tmp_path)
    assert unknown.returncode == 2 and b"did you mean 'request_intervention'" in unknown.stderr


def test_checkpoint_paths_resolve_against_the_config_file(tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "c.toml").write_text(
        'name = "c"\npool = "timing"\nconditions = ["request"]\nbackends = ["model:ckpt/tiny"]\n', encoding="utf-8"
    )
    config = load_experiment(folder / "c.toml")
    assert isinstance(config, EpisodeExperimentConfig)
    assert Path(config.backends[0].removeprefix("model:")).resolve() == (folder / "ckpt" / "tiny").resolve()
    shipped = load_experiment(Path(__file__).parents[1] / "experiments" / "learned_backends.toml")
    assert isinstance(shipped, EpisodeExperimentConfig)
    for name in shipped.backends[1:]:
        assert (Path(name.removeprefix("model:")) / "gencoord-model.json").is_file()


def test_bad_output_folders_are_usage_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("not a folder", encoding="utf-8")
    for out in (a_file, a_file / "below", Path("/proc/gencoord-cannot-be-made")):
        result = runner.invoke(app, ["run", "request_intervention", "--clusters", "2", "--out", str(out)])
        assert result.exit_code == 2 and "cannot make the run folder" in result.stderr, (out, result.output)


def test_a_failed_start_leaves_no_empty_run_folder(tmp_path: Path) -> None:
    config = tmp_path / "dead.toml"
    config.write_text(
        'name = "dead"\npool = "timing"\nconditions = ["request"]\nbackends = ["model:no-such-checkpoint"]\n',
        encoding="utf-8",
    )
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "runs"), "--workers", "1"])
    assert result.exit_code == 2 and "holds no trained model" in result.stderr
    assert list((tmp_path / "runs").glob("*")) == []


def test_resume_refuses_options_that_change_the_jobs(tmp_path: Path) -> None:
    first = runner.invoke(app, ["run", "request_intervention", "--clusters", "2", "--out", str(tmp_path)])
    assert first.exit_code == 0, first.output
    [run_dir] = tmp_path.glob("request_intervention-*")
    for extra in (["--clusters", "4"], ["--backend", "rule"], ["--world", "sim"]):
        refused = runner.invoke(app, ["run", "--resume", str(run_dir), *extra])
        assert refused.exit_code == 2 and "continues the run exactly as it began" in refused.stderr, extra
    resumed = runner.invoke(app, ["run", "--resume", str(run_dir), "--no-report"])
    assert resumed.exit_code == 0 and "were already done" in resumed.stdout


def test_parse_json_output_is_one_object_per_message() -> None:
    result = runner.invoke(app, ["parse", "--json"], input="SELF -\r\nREQ -\r\n")
    assert result.exit_code == 0 and json.loads(result.stdout) == {"ok": True, "canonical": "SELF -\nREQ -"}


def test_an_unknown_config_key_is_answered_with_the_nearest_known_one(tmp_path: Path) -> None:
    config = tmp_path / "typo.toml"
    config.write_text('name = "typo"\nkind = "team"\ntasks = ["t.json"]\nworkerz = 2\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(config)])
    assert result.exit_code == 2 and "workerz" in result.stderr and "did you mean 'workers'?" in result.stderr


def test_every_typed_error_is_a_protocol_failure_or_an_operational_error() -> None:
    """Two bases to catch: what a model or peer causes (an outcome) and what the tooling fails at (never one)."""
    from gencoord import errors  # noqa: PLC0415
    from gencoord.protocol.delivery import DeliveryRejectedError  # noqa: PLC0415
    from gencoord.run.lifecycle import PROTOCOL_ERRORS  # noqa: PLC0415

    typed = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.GencoordError) and value is not errors.GencoordError
    ]
    bases = (errors.ProtocolFailureError, errors.OperationalError)
    assert all(issubclass(error, bases) or error in bases for error in typed), typed
    assert all(issubclass(error, errors.ProtocolFailureError) for error in PROTOCOL_ERRORS)
    assert issubclass(DeliveryRejectedError, errors.ProtocolFailureError)
    protocol = [error for error in typed if issubclass(error, errors.ProtocolFailureError) and error not in bases]
    assert all(error.code in set(errors.FailureCode) for error in protocol)
    operational = [e for e in typed if issubclass(e, errors.OperationalError) and e not in bases and e.stage != "world"]
    assert all(error.code in set(errors.OperationalCode) for error in operational)
