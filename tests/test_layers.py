"""Packages depend one way: the layer order of ``[tool.gencoord] layers`` in pyproject.toml, checked on every import.

Imports inside functions count too (they are still dependencies, only deferred), so a
lazy import cannot hide a cycle; within a package, no two modules import each other, however
far round (an import for type checking alone, under ``TYPE_CHECKING``, is no dependency at run
time). The package root's ``__init__`` is the public surface, which re-exports from every
layer, and is the one exemption.
"""

from __future__ import annotations

import ast
import tomllib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SOURCE = ROOT / "src" / "gencoord"


def _layers() -> list[list[str]]:
    """The groups of units, lowest first."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        layers: list[list[str]] = tomllib.load(file)["tool"]["gencoord"]["layers"]
    return layers


def _unit(module: Path) -> str:
    """The layer unit a source file belongs to: its top package, or its own name for a top-level module."""
    relative = module.relative_to(SOURCE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imports(module: Path) -> list[tuple[int, str]]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"gencoord.{alias.name}" for alias in node.names] if node.module == "gencoord" else [node.module]
            found += [(node.lineno, name) for name in names if name.startswith("gencoord.")]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("gencoord.")]
    return found


def _target_unit(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) < 2:
        return None
    candidate = SOURCE / parts[1]
    return parts[1] if candidate.is_dir() or candidate.with_suffix(".py").exists() else None


def test_every_unit_is_placed() -> None:
    placed = {name for group in _layers() for name in group}
    units = {_unit(path) for path in SOURCE.rglob("*.py") if "node_modules" not in path.parts} - {"__init__"}
    assert units <= placed, f"not in pyproject.toml's layer order: {sorted(units - placed)}"


def test_imports_go_down_the_layers() -> None:
    rank = {name: index for index, group in enumerate(_layers()) for name in group}
    upward: list[str] = []
    for module in sorted(SOURCE.rglob("*.py")):
        if "node_modules" in module.parts or module == SOURCE / "__init__.py":
            continue
        unit = _unit(module)
        for line, name in _imports(module):
            target = _target_unit(name)
            if target is not None and rank[target] > rank[unit]:
                upward.append(f"{module.relative_to(ROOT)}:{line} ({unit}) imports {name} ({target})")
    assert not upward, "imports against the layer order:\n" + "\n".join(sorted(set(upward)))


@pytest.mark.parametrize("bad", ["gencoord.cli", "gencoord.eval.runner"])
def test_the_check_sees_an_upward_import(bad: str, tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text(f"def f():\n    from {bad} import x\n", encoding="utf-8")
    assert [name for _, name in _imports(module)] == [bad]


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _run_time_imports(module: Path, known: set[str]) -> set[str]:
    """The package's modules ``module`` imports at run time, deferred ones included, ``TYPE_CHECKING`` ones not."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    for_types = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in for_types:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return (found & known) - {"gencoord"}


def test_no_two_modules_import_each_other_however_far_round() -> None:
    modules = {_module_name(path): path for path in SOURCE.rglob("*.py") if "node_modules" not in path.parts}
    known = set(modules)
    graph = {name: _run_time_imports(path, known) - {name} for name, path in modules.items() if name != "gencoord"}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as cycle:
        pytest.fail(f"modules that import each other: {' → '.join(cycle.args[1])}")


def test_the_cycle_check_sees_a_deferred_import_and_not_a_type_only_one(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gencoord.cli import app\n"
        "def f():\n    from gencoord.eval import runner\n",
        encoding="utf-8",
    )
    known = {"gencoord.cli", "gencoord.eval", "gencoord.eval.runner"}
    assert _run_time_imports(module, known) == {"gencoord.eval", "gencoord.eval.runner"}
