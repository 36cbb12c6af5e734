"""Write docs/errors.md: every error code and reason gencoord can report, from their declarations.

    .venv/bin/python scripts/errors_catalogue.py [--check]

A reason is the stable, machine-readable sub-code a caller branches on (``UNKNOWN_ITEM``,
``PATH_TOO_LONG``); its code is the class's protocol failure code (the paper's Table S3) or
an operational one (``CONFIG_INVALID``, ``CALL_ORDER``). The reasons are the members of
``gencoord.reasons.Reason``; the classes are ``gencoord.errors``'. Each reason's rows say where
it is raised and with what message, read from every use of ``Reason.<NAME>`` in ``src/gencoord``
(Python, with its syntax tree) and every ``SkillFailure``/``BridgeError`` and failure answer of the Minecraft bridge
(JavaScript, by pattern). ``--check`` (run by the tests) fails when the file is stale, when a
reason is raised as a string instead of a member, when the bridge raises an undeclared one, and
when a declared reason is never used.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "gencoord"
OUT = ROOT / "docs" / "errors.md"
REASON = re.compile(r"^[A-Z][A-Z0-9_]+$")
JS_FAILURE = re.compile(r"new (SkillFailure|BridgeError)\(\s*'([A-Z][A-Z0-9_]+)'\s*,\s*(`[^`]*`|'[^']*')?")
JS_ANSWER = re.compile(
    r"code: (?:state\.dead\[[^\]]*\] \? '[A-Z_]+' : )?'([A-Z][A-Z0-9_]+)', message: (`[^`]*`|'[^']*')"
)
ACTION_FAILURES = {"ActionFailure", "RefusedError", "SkillFailure", "BridgeError"}


@dataclass(frozen=True)
class Found:
    kind: str  # the error class, or the kind of action failure
    reason: str
    where: str  # the file, relative to the repository (no line: the catalogue changes only with the codes)
    message: str  # the message as written, with its placeholders


def _error_classes() -> dict[str, tuple[str, str]]:
    """Each typed error class of ``gencoord.errors``: (code, stage)."""
    sys.path.insert(0, str(ROOT / "src"))
    from gencoord import errors  # noqa: PLC0415 - the script reads the package it documents

    classes = {}
    for name in dir(errors):
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, errors.GencoordError) and value is not errors.GencoordError:
            classes[name] = (str(value.code), value.stage)
    return classes


def _text(node: ast.expr | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"  # type: ignore[attr-defined]
            for part in node.values
        )
    return "" if node is None else "(" + ast.unparse(node) + ")"


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _member(node: ast.expr) -> str | None:
    """``X`` for ``Reason.X``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Reason":
        return node.attr
    return None


def _module_uses(text: str, where: str, classes: dict[str, tuple[str, str]]) -> tuple[list[Found], list[str]]:
    """One module's uses of declared reasons (a member given to a call: the call's name and its message), and
    every string it gives where a typed error's reason goes (each a defect: ``--check`` names them)."""
    found: list[Found] = []
    literals: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        first = node.args[0] if node.args else None
        typed = name in classes or name in ACTION_FAILURES
        if typed and isinstance(first, ast.Constant) and isinstance(first.value, str) and REASON.match(first.value):
            literals.append(f"{where}: {name}({first.value!r}, ...)")
        for position, argument in enumerate([*node.args, *(keyword.value for keyword in node.keywords)]):
            reason = _member(argument)
            if reason is not None:
                named = next((keyword.value for keyword in node.keywords if keyword.arg == "message"), None)
                message = node.args[position + 1] if position + 1 < len(node.args) else named
                found.append(Found(name, reason, where, _text(message)))
    return found, literals


def _python(classes: dict[str, tuple[str, str]]) -> tuple[list[Found], list[str]]:
    found: list[Found] = []
    literals: list[str] = []
    for module in sorted(SOURCE.rglob("*.py")):
        if "node_modules" in module.parts or module.name == "reasons.py":
            continue
        uses, strings = _module_uses(module.read_text(encoding="utf-8"), str(module.relative_to(ROOT / "src")), classes)
        found += uses
        literals += strings
    return found, literals


def _declared() -> set[str]:
    from gencoord.reasons import Reason  # noqa: PLC0415 - the script reads the package it documents

    return {member.value for member in Reason}


def _referenced() -> set[str]:
    """Every ``Reason.X`` anywhere in the package (a set or a comparison counts as a use)."""
    names: set[str] = set()
    for module in SOURCE.rglob("*.py"):
        if module.name != "reasons.py":
            tree = ast.parse(module.read_text(encoding="utf-8"))
            names |= {name for node in ast.walk(tree) if isinstance(node, ast.expr) and (name := _member(node))}
    return names


def _javascript() -> list[Found]:
    found: list[Found] = []
    for module in sorted((SOURCE / "worlds" / "mineflayer" / "js").glob("*.js")):
        text = module.read_text(encoding="utf-8")
        for match in JS_FAILURE.finditer(text):
            message = (match.group(3) or "").strip("`'").replace("${", "{")
            found.append(Found(match.group(1), match.group(2), str(module.relative_to(ROOT / "src")), message))
        for match in JS_ANSWER.finditer(text):  # a failure the bridge answers with, not thrown by a skill
            message = match.group(2).strip("`'").replace("${", "{")
            found.append(Found("bridge answer", match.group(1), str(module.relative_to(ROOT / "src")), message))
    return found


def _wheres(items: list[Found]) -> str:
    return ", ".join(f"`{where}`" for where in sorted({item.where for item in items}))


def _cell(text: str) -> str:
    """A message template as table text: pipes escaped, and brackets too (``{names[0]}`` is no link)."""
    return text.replace("|", "\\|").replace("\n", " ").replace("[", "\\[").replace("]", "\\]")


def catalogue() -> tuple[str, list[str]]:
    """The catalogue's text, and what is wrong with the reasons (nothing, when all are declared and used)."""
    classes = _error_classes()
    python, literals = _python(classes)
    bridge = _javascript()
    found = python + bridge
    declared = _declared()
    problems = [f"a reason written as a string, not a Reason member: {literal}" for literal in literals]
    problems += sorted(
        {f"the bridge raises {item.reason}, which Reason does not declare" for item in bridge}
        - {f"the bridge raises {name}, which Reason does not declare" for name in declared}
    )
    unused = declared - _referenced() - {item.reason for item in bridge}
    problems += [f"Reason.{name} is declared and never used" for name in sorted(unused)]
    lines = [
        "# Error codes",
        "",
        "Generated by `scripts/errors_catalogue.py` from the code; `make test` fails when it is stale.",
        "",
        "Every error gencoord reports carries a **code** and a stable **reason**: branch on these,",
        "never on the message. On the command line an error is one line on stderr and a fixed exit",
        "status (see [the command line](cli.md)). A message shows here as written in the code, with",
        "its placeholders in braces.",
        "",
        "## Typed errors",
        "",
        "Raised by a pipeline stage. The protocol's codes are the paper's seven failure codes",
        "(Table S3); the others are operational: a broken file or config, a backend or world that",
        "cannot run, a call out of order.",
        "",
    ]
    by_class: dict[str, list[Found]] = defaultdict(list)
    actions: dict[str, list[Found]] = defaultdict(list)
    passed: dict[str, list[Found]] = defaultdict(list)
    for item in found:
        if item.kind in classes:
            by_class[item.kind].append(item)
        elif item.kind in ACTION_FAILURES or item.kind == "bridge answer":
            actions[item.reason].append(item)
        else:
            passed[item.reason].append(item)
    for name in sorted(by_class, key=lambda n: (classes[n][0], n)):
        code, stage = classes[name]
        lines += [f"### `{code}` · {name} (stage `{stage}`)", "", "| reason | message | where |", "|---|---|---|"]
        reasons: dict[str, list[Found]] = defaultdict(list)
        for item in by_class[name]:
            reasons[item.reason].append(item)
        for reason, items in sorted(reasons.items()):
            lines.append(f"| `{reason}` | {_cell(items[0].message)} | {_wheres(items)} |")
        lines.append("")
    lines += [
        "## Action failures",
        "",
        "What a world reports for one action that did not happen (`EXECUTION_FAILURE` in the",
        "record). The simulator and the Minecraft bridge use the same codes for the same",
        "situations; the conformance checks hold both to that.",
        "",
        "| reason | raised by | message | where |",
        "|---|---|---|---|",
    ]
    for reason, items in sorted(actions.items()):
        kinds = ", ".join(sorted({item.kind for item in items}))
        lines.append(f"| `{reason}` | {kinds} | {_cell(items[0].message)} | {_wheres(items)} |")
    listed = {item.reason for items in by_class.values() for item in items} | set(actions)
    lines += [
        "",
        "## Reasons given through a helper",
        "",
        "Raised by a function that builds the typed error (a parser's `fail`, a file loader's",
        "`validated`), or the reason of an outcome that is no error (a team that never agreed, a",
        "refused task): the call that gives it, and its message where the call carries one.",
        "",
        "| reason | given to | message | where |",
        "|---|---|---|---|",
    ]
    for reason, items in sorted(passed.items()):
        if reason not in listed:
            with_message = next((item for item in items if item.message), items[0])
            calls = ", ".join(f"`{kind}`" for kind in sorted({item.kind for item in items}))
            lines.append(f"| `{reason}` | {calls} | {_cell(with_message.message)} | {_wheres(items)} |")
    return "\n".join(lines) + "\n", problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when docs/errors.md is not current")
    args = parser.parse_args()
    text, problems = catalogue()
    if problems:
        sys.exit("\n".join(["the reasons of src/gencoord/reasons.py and their uses disagree:", *problems]))
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            sys.exit("docs/errors.md is stale: run .venv/bin/python scripts/errors_catalogue.py")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"→ {OUT}")


if __name__ == "__main__":
    main()
