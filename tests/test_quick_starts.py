"""The README's quick starts, run as a reader runs them, so that no passage goes stale.

Each ``gencoord`` line of the quick-start blocks runs in a shell from the repository's root,
on the simulator, cut to a handful of tasks: a ``tasks run`` keeps its file's first three
tasks (``--task``), a ``gencoord run`` its first two clusters, and every run folder goes to a
temporary folder. Excluded, each covered elsewhere: ``--world minecraft`` lines (the
Minecraft tests), ``make`` targets (CI runs ``make test``; ``make run`` and ``make
reproduce`` take minutes to hours), and placeholders such as ``runs/<name>-<timestamp>``,
which are run against the folder the line before made.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SHARED = ROOT.parent / "shared" / "data" / "mindcraft"


def _quick_start_lines() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Three quick starts", 1)[1].split("\n## ", 1)[0]
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if "gencoord" in command:
                lines.append(command)
    return lines


def _task_ids(path: Path) -> list[str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return list(document)[:3] if isinstance(document, dict) else []


def _handful(command: str, out: Path) -> str | None:
    """The line as it runs here, cut to a handful of tasks; None when the line is excluded."""
    words = shlex.split(command)
    if "--world" in words and words[words.index("--world") + 1] == "minecraft":
        return None
    if words[:3] == ["gencoord", "tasks", "run"]:
        picks = [arg for task in _task_ids(ROOT / words[3]) for arg in ("--task", task)]
        words[words.index("--out") + 1] = str(out / Path(words[words.index("--out") + 1]).name)
        words += picks
    elif words[:2] == ["gencoord", "run"]:
        if "--clusters" not in words:
            words += ["--clusters", "2"]
        words += ["--out", str(out)]
    elif words[:2] == ["gencoord", "report"]:
        made = sorted(out.glob(f"{Path(words[2]).name.split('-<')[0]}-*"))
        words[2] = str(made[-1])
    return shlex.join(words) if "|" not in command else command


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.exists(), reason="the quick starts read MINDcraft's files from ../shared/data")
def test_every_quick_start_line_runs_as_written(tmp_path: Path) -> None:
    lines = _quick_start_lines()
    assert len(lines) >= 8, lines
    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    ran = 0
    for line in lines:
        command = _handful(line, tmp_path)
        if command is None:
            continue
        done = subprocess.run(
            ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])
        ran += 1
    assert ran >= 8
