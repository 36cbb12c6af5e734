"""Every public name says why to use it: its own docstring, not the one a dataclass writes for it."""

from __future__ import annotations

import inspect

import gencoord


def test_every_public_class_and_function_has_a_docstring_of_its_own() -> None:
    bare = []
    for name in gencoord.__all__:
        value = getattr(gencoord, name)
        if not (inspect.isclass(value) or inspect.isfunction(inspect.unwrap(value))):
            continue  # type aliases (Action, HandoffHook) are documented where the manual lists them
        doc = (getattr(value, "__doc__", None) or "").strip()
        if not doc or doc.startswith(f"{name}("):  # a dataclass's generated signature says nothing of why
            bare.append(name)
    assert not bare, f"public names without a docstring of their own: {bare}"
