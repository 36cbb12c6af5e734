"""The package's shape: modules of at most 400 lines, functions of at most 60.

A function's length is counted from its first statement after the docstring to its end: a
command-line command's signature is its table of options, and a docstring is documentation,
neither of them logic to split. Every exception is named here, once, with why it stands; the
lists may only shrink (a test fails on an entry that no longer needs to be there).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "gencoord"
MODULE_LINES = 400
FUNCTION_LINES = 60

LONG_MODULES: dict[str, str] = {}
LONG_FUNCTIONS: dict[str, str] = {}


def _modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "node_modules" not in path.parts)


def _logic_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = function.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1:
        body = body[1:]  # the docstring
    return (function.end_lineno or function.lineno) - body[0].lineno + 1


def _long_functions() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _logic_lines(node) > FUNCTION_LINES:
                found[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = _logic_lines(node)
    return found


def test_no_module_runs_past_400_lines_but_the_named_exceptions() -> None:
    lengths = {path.relative_to(PACKAGE).as_posix(): len(path.read_text().splitlines()) for path in _modules()}
    long = {name: count for name, count in lengths.items() if count > MODULE_LINES}
    assert set(long) <= set(LONG_MODULES), f"split these (or name them in LONG_MODULES, with why): {long}"
    stale = sorted(set(LONG_MODULES) - set(long))
    assert not stale, f"no longer over {MODULE_LINES} lines: take them out of LONG_MODULES: {stale}"


def test_no_function_runs_past_60_lines_but_the_named_exceptions() -> None:
    long = _long_functions()
    assert set(long) <= set(LONG_FUNCTIONS), f"split these (or name them in LONG_FUNCTIONS, with why): {long}"
    stale = sorted(set(LONG_FUNCTIONS) - set(long))
    assert not stale, f"no longer over {FUNCTION_LINES} lines: take them out of LONG_FUNCTIONS: {stale}"
