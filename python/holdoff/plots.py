"""Static figures (PNG files) drawn with matplotlib, made and saved in one place.

:func:`png` opens one figure with one set of axes, lets the caller draw on
them, then labels, grids, adds the legend and writes the file (its folder is
created) and closes the figure, also when drawing fails. :func:`netpipe_png`
draws NetPIPE curves with their published points (one colour per run, no
per-point labels, so points that sit close stay legible). The interactive
plots of the HTML report are in :mod:`holdoff.report`.

Units: message sizes [bytes] (ticks in B, KiB, MiB); NetPIPE throughput in
NetPIPE Mbps (2^20 bit/s), as NetPIPE prints it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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
    legend_loc: Literal["best", "upper left", "upper right", "lower left", "lower right"] = "best",
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
        ax.legend(loc=legend_loc, fontsize=9)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)


#: Line colours, markers and dashes given out in order, so coinciding curves stay visible.
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
MARKERS = ("o", "s", "D", "^", "v", "P")
LINESTYLES = ("-", "--", "-.", ":")


def bytes_label(n: int) -> str:
    """``1 B``, ``4 KiB``, ``16 MiB``: a power-of-two size as a person reads it."""
    for factor, suffix in ((2**20, " MiB"), (2**10, " KiB")):
        if n >= factor:
            return f"{n // factor}{suffix}"
    return f"{n} B"


def netpipe_png(
    path: Path,
    *,
    title: str,
    curves: Mapping[str, Sequence[tuple[int, float]]],
    published: Mapping[str, Sequence[tuple[int, float]]],
) -> Path:
    """NetPIPE throughput against message size: per run label its simulated
    curve (line) and its published points (large crosses in the same colour),
    one legend entry each; no text beside the points."""
    labels = list(dict.fromkeys([*curves, *published]))
    style = {label: i for i, label in enumerate(labels)}
    with png(
        path,
        title=title,
        xlabel="message size (log scale)",
        ylabel="throughput [NetPIPE Mbps = 2^20 bit/s]",
        size_in=(9.0, 5.5),
        legend_loc="upper left",
    ) as ax:

        def draw(label: str, rows: Sequence[tuple[int, float]], kind: str, **look: Any) -> None:
            i = style[label]
            xs, ys = [b for b, _ in rows], [v for _, v in rows]
            colour = COLOURS[i % len(COLOURS)]
            ax.plot(xs, ys, color=colour, label=f"{kind}: {label}", **look)

        for label, rows in curves.items():
            i = style[label]
            draw(
                label,
                rows,
                "simulated",
                marker=MARKERS[i % len(MARKERS)],
                markersize=3,
                linestyle=LINESTYLES[i % len(LINESTYLES)],
                linewidth=1.2,
            )
        for label, points in published.items():
            draw(
                label,
                points,
                "published",
                marker="X",
                markersize=10,
                markeredgecolor="black",
                markeredgewidth=0.8,
                linestyle="none",
            )
        sizes = [b for rows in [*curves.values(), *published.values()] for b, _ in rows]
        ax.set_xscale("log", base=2)
        if sizes:
            top = max(sizes).bit_length()
            ticks = [2**k for k in range(0, top + 1, 2)]
            ax.set_xticks(ticks, [bytes_label(t) for t in ticks])
        ax.set_ylim(bottom=0)
    return path
