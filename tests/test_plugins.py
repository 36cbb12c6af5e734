"""Experiment kinds from outside gencoord: a toy package, installed beside it, is run and reported.

The toy package is installed the way pip leaves any package: its module and a
``.dist-info`` folder whose ``entry_points.txt`` declares the kind, on the interpreter's
path. gencoord is not touched; the command line finds the kind by the config's ``kind``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
from pydantic import ValidationError

import gencoord
from gencoord.errors import ConfigError
from gencoord.eval.config import parse_experiment
from gencoord.eval.experiment import experiment_kind, experiment_kind_names, register_experiment_kind
from gencoord.worlds.choice import WorldChoice, make_executor

TOY_MODULE = dedent(
    '''
    """A coin-flip experiment: the smallest experiment kind there is."""

    from __future__ import annotations

    import random
    from dataclasses import dataclass
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field

    from gencoord.errors import ConfigError
    from gencoord.eval.config import ExecutionSpec
    from gencoord.eval.experiment import ExperimentKind, ReportParts
    from gencoord.eval.tables import Table


    class CoinConfig(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        name: str
        kind: Literal["coin"] = "coin"
        description: str = ""
        flips: Annotated[int, Field(ge=1)]
        bias: Annotated[float, Field(ge=0, le=1)] = 0.5
        output: str = "runs"
        workers: int = 0
        execution: ExecutionSpec = ExecutionSpec()

        def summary(self) -> str:
            return f"{self.flips} flips of a coin with bias {self.bias}"


    @dataclass(frozen=True)
    class Flip:
        key: str
        index: int


    class CoinKind(ExperimentKind[CoinConfig, int, Flip]):
        name = "coin"
        config = CoinConfig

        def check(self, config: CoinConfig, origin: str) -> None:
            if config.flips > 1000:
                raise ConfigError("TOO_MANY_FLIPS", f"{origin}: at most 1000 flips")

        def prepare(self, config: CoinConfig) -> int:
            return config.flips

        def expand(self, config: CoinConfig, prepared: int) -> list[Flip]:
            return [Flip(f"flip-{index:03d}", index) for index in range(prepared)]

        def run_job(self, config: CoinConfig, prepared: int, job: Flip) -> dict[str, object]:
            heads = random.Random(job.index).random() < config.bias
            return {"flip": job.index, "heads": heads, "outcome": {"G": heads}}

        def report(self, config, records, out, facts):
            heads = sum(1 for record in records if record["heads"])
            table = Table("coin", "Coin flips", ["flips", "heads"], [[str(len(records)), str(heads)]])
            return ReportParts([table])


    COIN = CoinKind()
    '''
)


TOY_BACKENDS = dedent(
    '''
    """A backend family from outside gencoord: the rule team in episodes, the planner as a team's lead."""

    from gencoord.backends.registry import rule_set
    from gencoord.backends.families import BackendFamily


    class Understudy(BackendFamily):
        name = "understudy"
        target = "<role>"
        plays_pairs = True
        leads_teams = True

        def check_target(self, target):
            from gencoord.errors import ConfigError

            if target not in ("lead", "any"):
                raise ConfigError("UNKNOWN_BACKEND", f"an understudy plays lead or any, not {target}")

        def pair_set(self, target):
            return rule_set

        def team_lead(self, target, prior):
            from gencoord.backends.planner import PlannerBackend

            return PlannerBackend(prior)


    UNDERSTUDY = Understudy()
    '''
)


TOY_FORMAT = dedent(
    '''
    """A task format from outside gencoord: one task a line, `id: goal_count goal_item | agent item=n ... | ...`."""

    from pathlib import Path

    from gencoord.errors import ConfigError
    from gencoord.tasks.team import TeamTask
    from gencoord.tasks.task_format import TaskFileFormat


    class Lines(TaskFileFormat):
        name = "lines"
        description = "one task a line"

        def read(self, path):
            return Path(path).read_text(encoding="utf-8").splitlines()

        def entries(self, document, origin):
            return [tuple(part.strip() for part in line.split(":", 1)) for line in document if line.strip()]

        def task(self, task_id, raw, origin):
            goal, *agents = (part.split() for part in raw.split("|"))
            if len(goal) != 2 or not goal[0].isdigit():
                raise ConfigError("BAD_TASK", f"{origin}: task {task_id}: the goal is a count and an item")
            bags = [
                {"name": name, "inventory": {item: int(n) for item, n in (pair.split("=") for pair in pairs)}}
                for name, *pairs in agents
            ]
            return TeamTask.model_validate(
                {"id": task_id, "goal": {"item": goal[1], "count": int(goal[0])}, "agents": bags,
                 "world": {"crafting_table": True, "resources": []}}
            )


    LINES = Lines()
    '''
)


TOY_WORLD = dedent(
    '''
    """A world from outside gencoord: the simulator under another name, counting the executors it makes."""

    from gencoord.worlds.registry import NoSettings, World
    from gencoord.worlds.sim import SimExecutor


    class TwinSettings(NoSettings):
        mirrored: bool = False


    class Twin(World):
        name = "twin"
        settings = TwinSettings

        def make(self, choice):
            choice.settings_as(TwinSettings)  # read as the world's own model
            return SimExecutor()


    TWIN = Twin()
    '''
)


def _install_toy(site: Path) -> None:
    """What ``pip install`` of a package of two modules with entry points leaves on the path."""
    (site / "toy_coin.py").write_text(TOY_MODULE, encoding="utf-8")
    (site / "toy_backends.py").write_text(TOY_BACKENDS, encoding="utf-8")
    (site / "toy_lines.py").write_text(TOY_FORMAT, encoding="utf-8")
    (site / "toy_world.py").write_text(TOY_WORLD, encoding="utf-8")
    info = site / "toy_coin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-coin\nVersion: 0.1\n", encoding="utf-8")
    declared = (
        "[gencoord.experiment_kinds]\ncoin = toy_coin:COIN\n\n"
        "[gencoord.backends]\nunderstudy = toy_backends:UNDERSTUDY\n\n"
        "[gencoord.task_formats]\nlines = toy_lines:LINES\n\n"
        "[gencoord.worlds]\ntwin = toy_world:TWIN\n"
    )
    (info / "entry_points.txt").write_text(declared, encoding="utf-8")


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    _install_toy(site)
    return site


def _episodes(site: Path, tmp_path: Path, settings: str) -> list[dict[str, Any]]:
    """The records of a small request-intervention run with ``settings`` added to its config."""
    config = tmp_path / "episodes.toml"
    common = 'name = "small"\npool = "request_intervention"\nclusters = 2\nconditions = ["request"]\n'
    config.write_text(common + settings, encoding="utf-8")
    ran = _gencoord(site, "run", str(config), "--out", str(tmp_path / "runs"), "--no-report", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    return [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]


def _gencoord(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "gencoord.cli", *args]
    return subprocess.run(command, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_plugin_kind_runs_reports_and_resumes_through_the_command_line(tmp_path: Path) -> None:
    site = _site(tmp_path)
    config = tmp_path / "coin.toml"
    config.write_text('name = "coins"\nkind = "coin"\nflips = 40\nbias = 0.7\n', encoding="utf-8")
    ran = _gencoord(site, "run", str(config), "--out", str(tmp_path / "runs"), "--workers", "2", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    records = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert sorted(record["job"] for record in records) == [f"flip-{index:03d}" for index in range(40)]
    assert {record["experiment"] for record in records} == {"coins"}
    heads = sum(record["heads"] for record in records)
    assert 0 < heads < 40
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert (manifest["kind"], manifest["episodes"]) == ("coin", 40)
    report = (run_dir / "report.md").read_text()
    assert "Coin flips" in report and f"| 40 | {heads} |" in report
    again = _gencoord(site, "run", "--resume", str(run_dir), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len((run_dir / "episodes.jsonl").read_text().splitlines()) == 40  # nothing ran twice


def test_a_plugin_kind_gets_its_own_checks_and_refuses_options_it_has_no_field_for(tmp_path: Path) -> None:
    site = _site(tmp_path)
    config = tmp_path / "coin.toml"
    config.write_text('name = "coins"\nkind = "coin"\nflips = 5000\n', encoding="utf-8")
    refused = _gencoord(site, "run", str(config), cwd=tmp_path)
    assert refused.returncode == 2 and "at most 1000 flips" in refused.stderr and "Traceback" not in refused.stderr
    config.write_text('name = "coins"\nkind = "coin"\nflips = 5\n', encoding="utf-8")
    refused = _gencoord(site, "run", str(config), "--world", "minecraft", cwd=tmp_path)
    assert refused.returncode == 2 and "coin experiments take no --world" in refused.stderr
    typo = tmp_path / "typo.toml"
    typo.write_text('name = "coins"\nkind = "con"\nflips = 5\n', encoding="utf-8")
    refused = _gencoord(site, "run", str(typo), cwd=tmp_path)
    assert refused.returncode == 2 and "unknown experiment kind 'con'" in refused.stderr and "'coin'" in refused.stderr


def test_every_shipped_kind_is_known_and_an_unknown_one_is_named_with_its_near_miss() -> None:
    names = experiment_kind_names()
    assert {"gate", "team", "composition", "custom", "horizon", "visibility"} <= set(names)
    assert all(experiment_kind(name).name == name for name in names)
    with pytest.raises(ConfigError) as caught:
        parse_experiment('name = "x"\nkind = "horizn"\npool = "timing"\nconditions = ["request"]\n', "x.toml")
    assert caught.value.reason == "UNKNOWN_NAME" and "did you mean 'horizon'" in caught.value.message


def test_a_field_error_names_the_field_without_the_union_tag() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_experiment('name = "x"\nkind = "gate"\ninstances = "many"\nconditions = ["full"]\n', "x.toml")
    assert caught.value.reason == "INVALID_CONFIG" and caught.value.message.startswith("x.toml: instances:")


def test_a_kind_is_registered_once() -> None:
    gate = experiment_kind("gate")
    assert register_experiment_kind(gate) is gate  # the same object again is fine
    with pytest.raises(ConfigError) as caught:
        register_experiment_kind(type(gate)())
    assert caught.value.reason == "DUPLICATE_PLUGIN"


def test_a_plugin_backend_plays_episodes_and_leads_team_tasks(tmp_path: Path) -> None:
    site = _site(tmp_path)
    records = _episodes(site, tmp_path, 'backends = ["understudy:any", "rule"]\n')
    by_backend = {
        name: [r["outcome"]["G"] for r in records if r["backend_set"] == name] for name in ("understudy:any", "rule")
    }
    assert by_backend["understudy:any"] and by_backend["understudy:any"] == by_backend["rule"]  # the rule team, renamed
    tasks = Path(__file__).parent / "fixtures" / "team" / "own_format.toml"
    out = tmp_path / "team"
    led = _gencoord(
        site, "tasks", "run", str(tasks), "--backend", "understudy:lead", "--out", str(out), "--jsonl", cwd=tmp_path
    )
    assert led.returncode == 0, led.stderr
    assert {json.loads(line)["task"] for line in led.stdout.splitlines()}
    refused = _gencoord(site, "tasks", "run", str(tasks), "--backend", "understudy:nobody", cwd=tmp_path)
    assert refused.returncode == 2 and "an understudy plays lead or any, not nobody" in refused.stderr


def test_a_plugin_task_format_is_read_run_and_its_bad_task_refused_alone(tmp_path: Path) -> None:
    site = _site(tmp_path)
    tasks = tmp_path / "tasks.txt"
    tasks.write_text(
        "planks: 4 oak_planks | ann oak_log=1 | ben\n"
        "sticks: 4 stick | ann oak_planks=2 | ben oak_planks=1\n"
        "broken: many stick | ann\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    ran = _gencoord(site, "tasks", "run", str(tasks), "--format", "lines", "--out", str(out), "--jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    lines = {row["task"]: row for row in map(json.loads, ran.stdout.splitlines())}
    assert lines["planks"]["success"] and lines["sticks"]["success"]
    assert lines["broken"]["code"] == "BAD_TASK" and not lines["broken"]["success"]
    typo = _gencoord(site, "tasks", "check", str(tasks), "--format", "line", cwd=tmp_path)
    assert typo.returncode == 2 and "did you mean 'lines'" in typo.stderr


def test_a_plugin_world_runs_episodes_and_team_tasks_and_refuses_minecraft_settings(tmp_path: Path) -> None:
    site = _site(tmp_path)
    records = _episodes(site, tmp_path, '[world]\nkind = "twin"\n')
    assert records and {record["world"] for record in records} == {"twin"}
    assert all(record["outcome"]["G"] for record in records)  # the simulator under another name
    tasks = Path(__file__).parent / "fixtures" / "team" / "own_format.toml"
    led = _gencoord(site, "tasks", "run", str(tasks), "--world", "twin", "--out", str(tmp_path / "team"), cwd=tmp_path)
    assert led.returncode == 0, led.stderr
    hosted = _gencoord(site, "tasks", "run", str(tasks), "--world", "twin", "--host", "example", cwd=tmp_path)
    assert hosted.returncode == 2 and "the twin world takes no host" in hosted.stderr
    typo = _gencoord(site, "tasks", "run", str(tasks), "--world", "twn", cwd=tmp_path)
    assert typo.returncode == 2 and "did you mean 'twin'" in typo.stderr


def test_a_plugin_world_owns_its_settings_and_refuses_another_worlds(tmp_path: Path) -> None:
    site = _site(tmp_path)
    records = _episodes(site, tmp_path, '[world]\nkind = "twin"\nmirrored = true\n')
    assert records and all(record["outcome"]["G"] for record in records)
    (run_dir,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["world"] == {"kind": "twin", "mirrored": True}
    for world, why in (
        ('kind = "twin"\nmirrored = "sideways"', "mirrored"),
        ('kind = "sim"\nmirrored = true', "the sim world takes no mirrored"),
        ('kind = "twin"\nport = 25570', "the twin world takes no port (its settings: mirrored)"),
    ):
        config = tmp_path / "bad.toml"
        config.write_text(
            f'name = "small"\npool = "request_intervention"\nconditions = ["request"]\n[world]\n{world}\n',
            encoding="utf-8",
        )
        refused = _gencoord(site, "run", str(config), "--out", str(tmp_path / "refused"), cwd=tmp_path)
        assert refused.returncode == 2 and why in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr


def test_worlds_and_task_formats_register_in_process_too(tmp_path: Path) -> None:
    """Without a package: registered in this process, they are known to configs, --world and read_task_file."""

    class Echo(gencoord.World):
        name = "echo-sim"

        def make(self, choice: WorldChoice) -> gencoord.Executor:
            return gencoord.SimExecutor()

    class Listed(gencoord.TaskFileFormat):
        name = "listed"
        description = "a JSON list of gencoord tasks"

        def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
            return [(raw["id"], raw) for raw in document]

        def task(self, task_id: str, raw: Any, origin: str) -> Any:
            return gencoord.TeamTask.model_validate(raw)

    gencoord.register_world(Echo())
    gencoord.register_task_format(Listed())
    assert make_executor(WorldChoice(kind="echo-sim")).name == "sim"
    with pytest.raises(ValidationError, match="did you mean 'echo-sim'"):
        WorldChoice.model_validate({"kind": "echo-sm"})
    task = {
        "id": "sticks",
        "goal": {"item": "stick", "count": 4},
        "agents": [{"name": "a", "inventory": {"oak_planks": 2}}],
    }
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task, {**task, "id": "bad", "goal": {"item": "stick", "count": -1}}]), encoding="utf-8")
    loaded = gencoord.read_task_file(path, "listed")
    assert [t.id for t in loaded.tasks] == ["sticks"] and [r.task for r in loaded.refused] == ["bad"]
