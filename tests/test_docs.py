"""The manual: the error catalogue and the reproduced results are current, and every reason raised is listed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def _script(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _catalogue_module():  # type: ignore[no-untyped-def]
    return _script("errors_catalogue")


def test_the_error_catalogue_is_current() -> None:
    catalogue = _catalogue_module()
    written = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    text, problems = catalogue.catalogue()
    assert problems == []
    assert written == text, "docs/errors.md is stale: run .venv/bin/python scripts/errors_catalogue.py"


def test_a_reason_written_as_a_string_is_caught_and_a_member_is_catalogued() -> None:
    """A typed error given a string reason is a defect the check names; a member is found with its message."""
    catalogue = _catalogue_module()
    classes = catalogue._error_classes()
    source = 'raise ConfigError("SHINY_NEW", "oops")\nraise ParseError(Reason.NUL_BYTE, "a NUL byte")\n'
    found, literals = catalogue._module_uses(source, "example.py", classes)
    assert literals == ["example.py: ConfigError('SHINY_NEW', ...)"]
    assert [(item.kind, item.reason, item.message) for item in found] == [("ParseError", "NUL_BYTE", "a NUL byte")]


def test_the_catalogue_finds_reasons_in_python_and_in_the_bridge() -> None:
    """Raised in a multi-line call, returned as an action failure, thrown by the bridge's skills."""
    text, _ = _catalogue_module().catalogue()
    for reason in (
        "UNKNOWN_COMMAND",
        "PATH_TOO_LONG",
        "NOT_RESET",
        "HANDOFF_NOT_RECEIVED",
        "CRAFT_FAILED",
        "WORKCELL_CANNOT",
    ):
        assert f"| `{reason}` |" in text


@pytest.mark.slow
def test_the_reproduced_results_page_is_what_the_kept_records_give() -> None:
    """docs/reproduced.md is computed again from results/ (every experiment's kept records) and must match."""
    results = _script("results_page")
    written = (ROOT / "docs" / "reproduced.md").read_text(encoding="utf-8")
    assert written == results.page(), "docs/reproduced.md is stale: run .venv/bin/python scripts/results_page.py"
    kept = sorted(path.name for path in (ROOT / "results").iterdir())
    assert kept and all(f"## {name}\n" in written for name in kept)


@pytest.mark.skipif(
    not (ROOT.parent / "shared" / "data" / "mindcraft").exists(),
    reason="MINDcraft's files lie in ../shared/data (not in a wheel)",
)
def test_the_python_example_runs_a_mindcraft_file_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    exec(compile(example, "docs/api.md", "exec"), {})  # the manual's own example, run as a reader would
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3, lines
    assert all(line.endswith("succeeded") for line in lines), lines
