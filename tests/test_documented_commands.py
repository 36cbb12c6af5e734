"""Every command and Python example the README and the manual show, run as a reader runs them.

Each ``gencoord`` line of a shell block (README.md and docs/*.md) runs in a shell from the
repository's root, on the simulator, cut to a handful of tasks: a ``tasks run`` keeps its
file's first three tasks (``--task``), a ``gencoord run`` its first two clusters, and every run
folder goes to a temporary folder. A line naming a run folder (``runs/<name>-<timestamp>``, or
a timestamp of the manual's own) runs against the folder an earlier line made.

Excluded, each with the rule that excludes it (:func:`_exclusion`), and each covered elsewhere:

- synopses, which show a command's shape, not a command (``[--out DIR]``, ``sim|minecraft``,
  ``FILE...``, a word in capitals without an underscore such as ``ADAPTER``; a template's name,
  ``CHEST_A_OR_B``, has one): the CLI tests run each command;
- ``--world minecraft`` lines: the Minecraft tests;
- ``--scheduler ray`` lines: the Ray tests start clusters of their own;
- ``make`` targets: CI runs ``make test``; ``make run`` and ``make reproduce`` take minutes to hours;
- a run folder no earlier line made (``runs/<name>-<timestamp>`` on its own).

Python blocks run as written, except ``docs/api.md``'s, which ``test_docs.py`` runs against
MINDcraft's file; the extending page's blocks define a plugin each, so running them checks
that every name they import is still where they import it from.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SHARED = ROOT.parent / "shared" / "data" / "mindcraft"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN_FOLDER = re.compile(r"runs/(?P<name>[\w.]+|<name>)-(?:<timestamp>|\d{8}-\d{6})")


@dataclass(frozen=True)
class Line:
    page: str
    command: str


def _blocks(text: str, languages: tuple[str, ...]) -> list[str]:
    return [body for language, body in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S) if language in languages]


def documented_lines() -> list[Line]:
    """Every ``gencoord`` command of a shell block, one per ``&&`` part, comments cut."""
    lines: list[Line] = []
    for page in PAGES:
        for block in _blocks(page.read_text(encoding="utf-8"), ("sh", "bash", "console")):
            for line in block.replace("\\\n", " ").splitlines():
                for part in line.split("  #", 1)[0].split(" # ", 1)[0].split("&&"):
                    command = part.strip().removeprefix("$ ")
                    if command.startswith("gencoord ") or command.startswith("make "):
                        lines.append(Line(page.name, command))
    return lines


def _exclusion(command: str) -> str | None:
    """Why a documented line is not run here, or None when it runs."""
    words = command.split()
    if command.startswith("make "):
        return "a make target"
    placeholder = any(re.fullmatch(r"[A-Z]+(\.\w+)?", word) for word in words)  # FILE, DIR, CONFIG.toml
    if placeholder or "[" in command or "..." in command or any("|" in word and word != "|" for word in words):
        return "a synopsis"
    if "--world minecraft" in command:
        return "real Minecraft"
    if "--scheduler ray" in command:
        return "Ray"
    return None


def _task_ids(path: Path) -> list[str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return list(document)[:3] if isinstance(document, dict) else []


def _handful(command: str, out: Path) -> str | None:
    """The line as it runs here, cut to a handful of tasks; None when it names a folder no line made."""
    folder = RUN_FOLDER.search(command)
    if folder is not None:
        name = folder["name"]
        made = sorted(out.glob(f"{name}-*")) if name != "<name>" else []
        if not made:
            return None
        command = command.replace(folder[0], str(made[-1]))
    if "|" in command:
        return command
    words = shlex.split(command)
    if words[:3] == ["gencoord", "tasks", "run"]:
        picks = [arg for task in _task_ids(ROOT / words[3]) for arg in ("--task", task)]
        words[words.index("--out") + 1] = str(out / Path(words[words.index("--out") + 1]).name)
        words += picks
    elif words[:2] == ["gencoord", "run"] and "--resume" not in words:
        if "--clusters" not in words:
            words += ["--clusters", "2"]
        words += ["--out", str(out)]
    return shlex.join(words)


def test_every_documented_line_is_run_or_excluded_by_a_stated_rule() -> None:
    lines = documented_lines()
    assert {line.page for line in lines} >= {"README.md", "cli.md", "experiments.md", "gate.md", "install.md"}
    runnable = [line for line in lines if _exclusion(line.command) is None]
    assert len(runnable) >= 20, runnable
    assert {line.page for line in runnable} == set(RUN_PAGES)  # a page with new lines to run is run too
    assert _exclusion("gencoord run CONFIG.toml|NAME... [--workers N]") == "a synopsis"
    assert _exclusion("gencoord export --checkpoint ADAPTER --out DIR") == "a synopsis"
    assert _exclusion("gencoord episode --template CHEST_A_OR_B --json | jq .outcome") is None


RUN_PAGES = ("README.md", "cli.md", "experiments.md", "gate.md", "install.md")
"""The pages with lines to run; each page's lines run in order (a later line may use an earlier one's folder)."""


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.exists(), reason="the quick starts read MINDcraft's files from ../shared/data")
@pytest.mark.parametrize("page", RUN_PAGES)
def test_every_documented_command_runs_as_written(page: str, tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    ran: dict[str, int] = {}
    for line in documented_lines():
        if line.page != page or _exclusion(line.command) is not None:
            continue
        command = _handful(line.command, tmp_path)
        if command is None:
            continue
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        # `episode` exits 1 when the task did not succeed, as the manual's fault and counterfactual lines show
        allowed = {0, 1} if command.startswith("gencoord episode") else {0}
        assert done.returncode in allowed, (line, command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (line, done.stderr[-2000:])
        ran[line.page] = ran.get(line.page, 0) + 1
    assert ran.get(page, 0) >= (8 if page == "README.md" else 1), ran


def _python_blocks() -> list[tuple[str, str]]:
    return [
        (page.name, block)
        for page in PAGES
        if page.name != "api.md"
        for block in _blocks(page.read_text(encoding="utf-8"), ("python",))
    ]


@pytest.mark.parametrize(("page", "block"), _python_blocks(), ids=lambda value: str(value)[:24])
def test_every_python_example_of_the_manual_runs_as_written(
    page: str, block: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # an example that writes, writes here
    module = types.ModuleType(f"docs_{Path(page).stem}")  # a module, as a plugin's file is: dataclasses look it up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(block, page, "exec"), module.__dict__)
