"""Static figures (PNG files) drawn with matplotlib, made and saved in one place.

:func:`png` opens one figure with one set of axes, lets the caller draw on
them, then labels, grids, adds the legend and writes the file (its folder is
created) and closes the figure, also when drawing fails. The interactive
plots of the HTML report are in :mod:`holdoff.report`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@contextmanager
def png(
    path: Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    size_in: tuple[float, float] = (8.0, 5.0),
    dpi: int = 110,
) -> Iterator[Axes]:
    """Axes to draw on; on leaving the block the figure is finished and saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size_in, dpi=dpi)
    try:
        yield ax
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
