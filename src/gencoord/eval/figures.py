"""Figures for reports, shared by every experiment kind: a figure rendered once, kept as a file and as bytes.

Built with matplotlib's object API (``Figure`` without pyplot): no global state, no
display backend, safe to call from any process.
"""

from __future__ import annotations

import io
from pathlib import Path

from matplotlib.figure import Figure


def save_png(figure: Figure, path: Path) -> bytes:
    """Render to PNG bytes and write them to ``path``."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=130, bbox_inches="tight")
    data = buffer.getvalue()
    path.write_bytes(data)
    return data
