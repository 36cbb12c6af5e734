"""``import gencoord``: every public name resolves on first use to its home module's object."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gencoord


def test_every_public_name_resolves() -> None:
    names = [name for name in gencoord.__all__ if name != "__version__"]
    assert sorted(names) == sorted(gencoord._HOMES)
    for name in names:
        assert getattr(gencoord, name) is getattr(sys.modules[gencoord._HOMES[name]], name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        gencoord.no_such_name  # noqa: B018


def test_importing_the_package_loads_no_layer() -> None:
    probe = "import sys, gencoord; print(sorted(m for m in sys.modules if m.startswith('gencoord.')))"
    loaded = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert loaded.strip() == "[]"
