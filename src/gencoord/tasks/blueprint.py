"""Blueprints: what a construction task must leave standing, cell by cell, and how that is scored.

One validated object whatever the file said. MINDcraft's format is ``materials`` then
``levels``, each ``{level, coordinates: [x, y, z], placement}`` where ``placement[z][x]``
names the block at ``(x0 + x, y0, z0 + z)`` (``construction_tasks.js``, ``checkLevel``).
gencoord's own format writes the layers compactly: a ``key`` of one-character symbols and,
per level from the bottom up, rows of symbols (rows are z, characters are x).

Scoring is the benchmark's: block names compared exactly, block states ignored (a
name's ``[facing=north]`` is dropped when the blueprint is read, and the task's notes
say so), a cell that should be air and is air is skipped, score = matches / (matches +
mismatches), success only at zero mismatches; overall and per level.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from gencoord.dsl.cells import Cell
from gencoord.errors import ConfigError
from gencoord.prior.contract import placeable
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason

AIR = "air"
MAX_BLUEPRINT_CELLS = 32768
"""Cells of one blueprint, air included: vanilla's /fill limit, which MINDcraft's own reset uses."""

WorldCell = tuple[int, int, int]
"""A cell in the blueprint's own (absolute) coordinates."""


class BlueprintLevel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    level: int
    coordinates: tuple[int, int, int]
    placement: Annotated[list[list[str]], Field(min_length=1)]


class Blueprint(BaseModel):
    """Levels in MINDcraft's shape; ``materials`` is what the file declares (checked against the cells)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    materials: dict[str, PositiveInt] = {}
    levels: Annotated[list[BlueprintLevel], Field(min_length=1, max_length=256)]

    def cells(self) -> dict[WorldCell, str]:
        """Every cell the blueprint names (air included), in its own coordinates."""
        found: dict[WorldCell, str] = {}
        for level in self.levels:
            x0, y0, z0 = level.coordinates
            for dz, row in enumerate(level.placement):
                for dx, name in enumerate(row):
                    found[(x0 + dx, y0, z0 + dz)] = name
        return found

    def corner(self) -> WorldCell:
        """The lowest corner of the blueprint's box: its cell (0, 0, 0) in site offsets."""
        cells = self.cells()
        return (min(c[0] for c in cells), min(c[1] for c in cells), min(c[2] for c in cells))

    def size(self) -> tuple[int, int, int]:
        cells, (x0, y0, z0) = self.cells(), self.corner()
        return (
            max(c[0] for c in cells) - x0 + 1,
            max(c[1] for c in cells) - y0 + 1,
            max(c[2] for c in cells) - z0 + 1,
        )

    def relative(self) -> dict[Cell, str]:
        """Every cell as a site offset (x, level, z) from :meth:`corner` (a copy: the caller may change it)."""
        return dict(self._relative)

    def blocks(self) -> dict[Cell, str]:
        """The cells that must hold a block (site offsets; a copy)."""
        return dict(self._blocks)

    @cached_property
    def _relative(self) -> dict[Cell, str]:
        """Worked out once: a planner asks for a thousand-block house's cells in every draft (the model is frozen)."""
        x0, y0, z0 = self.corner()
        return {(x - x0, y - y0, z - z0): name for (x, y, z), name in self.cells().items()}

    @cached_property
    def _blocks(self) -> dict[Cell, str]:
        return {cell: name for cell, name in self._relative.items() if name != AIR}

    def needs(self) -> dict[str, int]:
        """Blocks the blueprint uses, by name."""
        counts: dict[str, int] = {}
        for name in self.blocks().values():
            counts[name] = counts.get(name, 0) + 1
        return counts


@dataclass(frozen=True, slots=True)
class LevelScore:
    level: int  # the level's index from the bottom (0 = lowest)
    matches: int
    mismatches: int

    @property
    def score(self) -> float:
        judged = self.matches + self.mismatches
        return 1.0 if judged == 0 else self.matches / judged


@dataclass(frozen=True, slots=True)
class Mismatch:
    cell: Cell  # site offset
    expected: str
    actual: str


@dataclass(frozen=True, slots=True)
class BuildScore:
    levels: tuple[LevelScore, ...]
    mismatched: tuple[Mismatch, ...]

    @property
    def matches(self) -> int:
        return sum(level.matches for level in self.levels)

    @property
    def mismatches(self) -> int:
        return sum(level.mismatches for level in self.levels)

    @property
    def score(self) -> float:
        judged = self.matches + self.mismatches
        return 1.0 if judged == 0 else self.matches / judged

    @property
    def success(self) -> bool:
        return self.mismatches == 0


def score_build(expected: Mapping[Cell, str], observed: Mapping[Cell, str]) -> BuildScore:
    """The benchmark's check of ``observed`` (site offset → block name; absent = air) against ``expected``."""
    per_level: dict[int, list[int]] = {}
    mismatched: list[Mismatch] = []
    for cell, want in sorted(expected.items(), key=lambda item: (item[0][1], item[0][2], item[0][0])):
        got = observed.get(cell, AIR)
        tally = per_level.setdefault(cell[1], [0, 0])
        if want == AIR and got == AIR:
            continue
        if got == want:
            tally[0] += 1
        else:
            tally[1] += 1
            mismatched.append(Mismatch(cell, want, got))
    levels = tuple(LevelScore(level, *per_level[level]) for level in sorted(per_level))
    return BuildScore(levels, tuple(mismatched))


# ------------------------------------------------------------------ reading and checking


def without_states(name: str) -> str:
    """``ladder[facing=north]`` → ``ladder``: the check ignores block states, so the plan does too."""
    return name.split("[", 1)[0].strip()


def from_layers(origin: tuple[int, int, int], key: Mapping[str, str], layers: list[list[str]], where: str) -> Blueprint:
    """gencoord's compact form: per level, rows of one-character symbols looked up in ``key``."""
    symbols = {**key, ".": key.get(".", AIR), " ": key.get(" ", AIR)}
    bad = next((symbol for symbol in key if len(symbol) != 1), None)
    if bad is not None:
        raise ConfigError(Reason.INVALID_BLUEPRINT, f"{where}: key symbol {bad!r} must be one character")
    levels = []
    for index, rows in enumerate(layers):
        placement = []
        for row in rows:
            unknown = next((symbol for symbol in row if symbol not in symbols), None)
            if unknown is not None:
                raise ConfigError(
                    Reason.INVALID_BLUEPRINT, f"{where}: layer {index} uses {unknown!r}, which the key does not name"
                )
            placement.append([symbols[symbol] for symbol in row])
        if not placement or not any(placement):
            raise ConfigError(Reason.INVALID_BLUEPRINT, f"{where}: layer {index} has no rows")
        x, y, z = origin
        levels.append(BlueprintLevel(level=index, coordinates=(x, y + index, z), placement=placement))
    if not levels:
        raise ConfigError(Reason.INVALID_BLUEPRINT, f"{where}: the blueprint has no layers")
    return Blueprint(levels=levels)


def check_blueprint(blueprint: Blueprint, prior: Prior, where: str) -> tuple[Blueprint, list[str]]:
    """The blueprint with state-free names, and notes on what was read differently; refuses what no team can build.

    Refused, each with its own code: two different blocks in one cell, a name the game does
    not know, a block no item places (water, wall_torch), a blueprint too big to clear.
    """
    notes: list[str] = []
    seen: dict[WorldCell, str] = {}
    levels = []
    total = 0
    for level in blueprint.levels:
        rows = []
        for dz, row in enumerate(level.placement):
            names = []
            for dx, raw in enumerate(row):
                name = without_states(raw)
                if name != raw:
                    notes.append(f"block state dropped: {raw!r} read as {name!r} (the check ignores states)")
                cell = (level.coordinates[0] + dx, level.coordinates[1], level.coordinates[2] + dz)
                other = seen.get(cell)
                if other is not None and other != name:
                    raise ConfigError(
                        Reason.CELL_CONFLICT,
                        f"{where}: cell {cell[0]},{cell[1]},{cell[2]} is {other} in one level and {name} in another",
                    )
                seen[cell] = name
                names.append(name)
            rows.append(names)
            total += len(row)
        levels.append(level.model_copy(update={"placement": rows}))
    if total > MAX_BLUEPRINT_CELLS:
        raise ConfigError(
            Reason.BLUEPRINT_TOO_BIG,
            f"{where}: {total} cells; a site is cleared with /fill, at most {MAX_BLUEPRINT_CELLS}",
        )
    for name in sorted({name for name in seen.values() if name != AIR}):
        _check_block(name, prior, where)
    checked = blueprint.model_copy(update={"levels": levels})
    declared = {without_states(k): v for k, v in blueprint.materials.items()}
    if declared and declared != checked.needs():
        notes.append("the file's materials list differs from its cells; the cells are what is built and checked")
    return checked, list(dict.fromkeys(notes))


def _check_block(name: str, prior: Prior, where: str) -> None:
    if placeable(name, prior):
        return
    if name in prior.game.blocks:
        hint = (
            " (a torch placed against a wall becomes one; plan a torch on the block below)" if "wall_" in name else ""
        )
        raise ConfigError(Reason.UNPLACEABLE_BLOCK, f"{where}: no item places {name!r}{hint}")
    close = difflib.get_close_matches(name[:80], list(prior.game.blocks), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(Reason.UNKNOWN_BLOCK, f"{where}: unknown block {name[:80]!r}{hint}")
