"""The picture of a construction task's check: every level as a grid of cells, coloured by verdict.

Read at a glance: green where the blueprint's block stands, red where a block is wrong or
missing, orange where a block stands in a cell that must stay air, pale where air is as it
should be. Built from the record's grids alone (``run/team_record.py`` ``build_record``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from gencoord.eval.figures import save_png

_CODES = {".": 0, "#": 1, "x": 2, "!": 3}
_COLOURS = ("#eeeeee", "#2e8b57", "#c0392b", "#e67e22")
_LABELS = ("air, as it should be", "block as the blueprint says", "wrong or missing block", "block where air must be")


def build_figure(record: Mapping[str, Any], path: Path) -> Path:
    """One panel per level, bottom level first; the title gives the score."""
    build = record["build"]
    grids = build["grids"]
    columns = min(len(grids), 5)
    rows = -(-len(grids) // columns)
    figure = Figure(figsize=(2.6 * columns, 2.6 * rows + 0.8))
    colours = ListedColormap(_COLOURS)
    for index, grid in enumerate(grids):
        axis = figure.add_subplot(rows, columns, index + 1)
        cells = np.array([[_CODES[mark] for mark in row] for row in grid], dtype=float)
        axis.imshow(cells, cmap=colours, vmin=0, vmax=len(_COLOURS) - 1, origin="upper")
        level = build["levels"][index] if index < len(build["levels"]) else None
        score = f" · {level['matches']}/{level['matches'] + level['mismatches']}" if level else ""
        axis.set_title(f"level {index}{score}", fontsize=9)
        axis.set_xticks([])
        axis.set_yticks([])
    figure.suptitle(
        f"{record['task']}: score {build['score']:.3f} ({build['matches']} match, {build['mismatches']} mismatch)"
        f" · {record['world']}",
        fontsize=10,
    )
    figure.legend(
        handles=[Patch(color=c, label=label) for c, label in zip(_COLOURS, _LABELS, strict=True)],
        loc="lower center",
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    save_png(figure, path)
    return path
