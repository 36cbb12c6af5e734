"""Compare the records of two sets of run folders, job by job, apart from what a clock measured.

Used to show that a refactor changed no record: run the same experiments before and after
into two parent folders, then

    python scripts/compare_records.py runs-before runs-after

Run folders are matched by experiment name (``<name>-<timestamp>``), records by job key.
Measured durations (wall and CPU time, model latency) are dropped before comparing; the
simulator's own clock (action start and end) is part of a record and must match. Exit 0
when every record matches, 1 otherwise, naming the first differing field of each record.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

MEASURED = {"seconds", "latency_s", "cpu_us", "wall_s", "elapsed_s", "protocol_s"}
"""Fields a clock measured: they differ between any two runs, refactor or not."""


def _without_measured(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_measured(item) for key, item in value.items() if key not in MEASURED}
    if isinstance(value, list):
        return [_without_measured(item) for item in value]
    return value


def _first_difference(left: Any, right: Any, path: str = "") -> str | None:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            if key not in left or key not in right:
                return f"{path}.{key} (only in {'after' if key not in left else 'before'})"
            found = _first_difference(left[key], right[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return f"{path} (length {len(left)} against {len(right)})"
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            found = _first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if left == right else f"{path}: {left!r} against {right!r}"


def _runs(root: Path) -> dict[str, Path]:
    return {
        re.sub(r"-\d{8}-\d{6}(-\d+)?$", "", folder.name): folder
        for folder in sorted(root.iterdir())
        if (folder / "episodes.jsonl").exists()
    }


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["job"]: _without_measured(record) for record in map(json.loads, filter(None, lines))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    before, after = _runs(args.before), _runs(args.after)
    differing = 0
    for name in sorted(set(before) | set(after)):
        if name not in before or name not in after:
            print(f"{name}: only {'after' if name not in before else 'before'}")
            differing += 1
            continue
        old, new = _records(before[name]), _records(after[name])
        problems = [f"job {key}: missing after" for key in old.keys() - new.keys()]
        problems += [f"job {key}: new after" for key in new.keys() - old.keys()]
        for key in sorted(old.keys() & new.keys()):
            found = _first_difference(old[key], new[key])
            if found:
                problems.append(f"job {key}: {found}")
        status = "same" if not problems else f"{len(problems)} differ"
        print(f"{name}: {len(old)} records before, {len(new)} after, {status}")
        for problem in problems[:5]:
            print(f"  {problem}")
        differing += bool(problems)
    print(f"{len(set(before) | set(after)) - differing} experiments identical, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
