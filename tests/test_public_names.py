"""``import gencoord``: every public name resolves on first use to its home module's object."""

from __future__ import annotations

import ast
import inspect
import itertools
import subprocess
import sys
from pathlib import Path

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


def _alias_documented(module: str, name: str) -> bool:
    """A type alias is documented by the string right after its assignment (what the API docs show)."""
    body = ast.parse(Path(sys.modules[module].__file__ or "").read_text(encoding="utf-8")).body
    for statement, following in itertools.pairwise(body):
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
    return False


def test_every_public_name_says_what_it_is_for() -> None:
    undocumented = []
    for name in (name for name in gencoord.__all__ if name != "__version__"):
        value = getattr(gencoord, name)
        if inspect.isclass(value):
            documented = bool(value.__dict__.get("__doc__"))
        elif (callable(value) and hasattr(value, "__wrapped__")) or inspect.isfunction(value):
            documented = bool(value.__doc__)
        else:
            documented = _alias_documented(gencoord._HOMES[name], name)
        if not documented:
            undocumented.append(name)
    assert not undocumented, f"public names without a docstring: {undocumented}"
