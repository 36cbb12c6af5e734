"""The manual: the error catalogue is current, and every reason the code raises is in it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _catalogue_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("errors_catalogue", ROOT / "scripts" / "errors_catalogue.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["errors_catalogue"] = module
    spec.loader.exec_module(module)
    return module


def test_the_error_catalogue_is_current() -> None:
    catalogue = _catalogue_module()
    written = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert written == catalogue.catalogue(), "docs/errors.md is stale: run .venv/bin/python scripts/errors_catalogue.py"


def test_the_catalogue_finds_reasons_in_python_and_in_the_bridge() -> None:
    """Raised in a multi-line call, returned as an action failure, thrown by the bridge's skills."""
    text = _catalogue_module().catalogue()
    for reason in (
        "UNKNOWN_COMMAND",
        "PATH_TOO_LONG",
        "NOT_RESET",
        "HANDOFF_NOT_RECEIVED",
        "CRAFT_FAILED",
        "WORKCELL_CANNOT",
    ):
        assert f"| `{reason}` |" in text
