"""The pair-episode report's figures: our bars with CIs, the paper's values as markers.

Built with matplotlib's object API (``Figure`` without pyplot): no global state, no
display backend, safe to call from any process.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from gencoord.eval.figures import save_png
from gencoord.eval.kinds.episodes.rows import Row, row_cell
from gencoord.eval.kinds.episodes.tables import visibility_cells
from gencoord.eval.tables import paper_figures

if TYPE_CHECKING:
    from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig as ExperimentConfig

OURS, PAPER = "#3266a8", "#222222"


def _label(axis: Axes, labels: Sequence[str]) -> None:
    """Tick labels, slanted when they would collide."""
    slanted = sum(len(label) for label in labels) > 40
    axis.set_xticks(range(len(labels)), labels, rotation=25 if slanted else 0, ha="right" if slanted else "center")


def _paper_value(config: ExperimentConfig, table: str, cell: str) -> float | None:
    value = paper_figures().get(config.kind, {}).get(table, {}).get(cell)
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class _Chart:
    values: list[float]
    paper_table: str  # where paper.toml keeps the matching figure
    unit: str
    ylabel: str
    title: str
    errors: list[list[float]] | None = None
    legend: str = "ours"
    ylim: float | None = None


def _bar_chart(rows: Sequence[Row], config: ExperimentConfig, chart: _Chart, path: Path) -> bytes:
    """One bar per row (ours, with error bars if given) and the paper's value as a diamond."""
    figure = Figure(figsize=(max(4.5, 1.5 * len(rows)), 3.4))
    axis = figure.subplots()
    positions = range(len(rows))
    axis.bar(positions, chart.values, yerr=chart.errors, color=OURS, capsize=4, label=chart.legend)
    paper = [(i, _paper_value(config, chart.paper_table, row_cell(row, config))) for i, row in enumerate(rows)]
    marked = [(i, v) for i, v in paper if v is not None]
    if marked:
        axis.scatter([i for i, _ in marked], [v for _, v in marked], marker="D", color=PAPER, zorder=3, label="paper")
    for index, value in enumerate(chart.values):
        label = f"{value:.0f}{chart.unit}"
        axis.annotate(label, (index, value), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8)
    _label(axis, [row.label for row in rows])
    if chart.ylim is not None:
        axis.set_ylim(0, chart.ylim)
    axis.set_ylabel(chart.ylabel)
    axis.set_title(chart.title, fontsize=10)
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axis.spines[["top", "right"]].set_visible(False)
    return save_png(figure, path)


def success_figure(rows: Sequence[Row], config: ExperimentConfig, path: Path, title: str | None = None) -> bytes:
    """Success by row with 95% cluster-bootstrap error bars (the paper's Figure 4 panels)."""
    chart = _Chart(
        values=[100 * row.success.value for row in rows],
        errors=[
            [100 * (row.success.value - row.success.low) for row in rows],
            [100 * (row.success.high - row.success.value) for row in rows],
        ],
        paper_table="success",
        unit="",
        ylabel="original-task success (%)",
        title=title or config.name,
        legend="ours (95% CI)",
        ylim=112,
    )
    return _bar_chart(rows, config, chart, path)


def wire_figure(rows: Sequence[Row], config: ExperimentConfig, path: Path, title: str) -> bytes:
    """Mean peer payload bytes per episode by row (REQ plus any response)."""
    chart = _Chart(
        values=[sum(r["protocol"]["wire_bytes"] for r in row.records) / len(row.records) for row in rows],
        paper_table="wire_bytes",
        unit=" B",
        ylabel="wire bytes per episode",
        title=title,
        legend="ours (mean)",
    )
    return _bar_chart(rows, config, chart, path)


def visibility_figure(rows: Sequence[Row], config: ExperimentConfig, path: Path) -> bytes:
    """The paper's Figure S5 layout: a method per row, motif × view columns, our cell over the paper's."""
    cells = visibility_cells(rows, config)
    methods = list(dict.fromkeys(cell.source for cell in cells))
    motifs = list(dict.fromkeys(cell.motif for cell in cells))
    views = ["full", "skeleton", "node", "own"]
    columns = sorted({(cell.motif, cell.view) for cell in cells}, key=lambda c: (motifs.index(c[0]), views.index(c[1])))
    grid = [[float("nan")] * len(columns) for _ in methods]
    figure = Figure(figsize=(1.1 * len(columns) + 2, 0.9 * len(methods) + 1.6))
    axis = figure.add_subplot()
    for cell in cells:
        y, x = methods.index(cell.source), columns.index((cell.motif, cell.view))
        if cell.success is not None:
            grid[y][x] = 100 * cell.success
        paper = "" if cell.paper is None else f"\n({cell.paper:.1f})"
        ours = "–" if cell.success is None else f"{100 * cell.success:.1f}"
        axis.text(x, y, ours + paper, ha="center", va="center", fontsize=8)
    image = axis.imshow(grid, cmap="Blues", vmin=0, vmax=140, aspect="auto")
    bar = figure.colorbar(image, ax=axis, fraction=0.03, pad=0.02, ticks=[0, 25, 50, 75, 100])
    bar.set_label("our success (%)")
    labels = [f"{textwrap.fill(motif.replace('_', ' '), 12)}\n· {view}" for motif, view in columns]
    axis.set_xticks(range(len(columns)), labels, fontsize=7)
    axis.set_yticks(range(len(methods)), methods)
    axis.set_title("Task-structure visibility: our success %, the paper's Figure S5 cell in brackets", fontsize=10)
    return save_png(figure, path)
