"""`holdoff livelock`: the receive-livelock curves and their plot."""

from __future__ import annotations

from pathlib import Path

import pytest

from holdoff import livelock


@pytest.fixture(scope="module")
def data() -> dict[str, list[tuple[float, float]]]:
    return livelock.curves(loads_kpps=[100, 300, 600, 1000, 1488], duration_ms=50)


def test_light_load_is_forwarded_by_every_design(data: dict) -> None:
    # 100 kpps is far below what one core can forward: nothing is lost.
    for design, rows in data.items():
        offered, delivered = rows[0]
        assert delivered == pytest.approx(offered, rel=0.02), design


def test_interrupt_per_packet_collapses_and_polling_holds_flat(data: dict) -> None:
    # Mechanism (holdoff.livelock docstring): with no throttle, interrupt work
    # grows with the offered load and preempts the softirq that forwards.
    collapse = [d for _, d in data["interrupt per packet"]]
    assert collapse[-1] < 0.1 * max(collapse)
    # Polling does a bounded amount of work per tick whatever the load.
    flat = [d for _, d in data["polling with a quota"]]
    saturated = flat[2:]
    assert min(saturated) >= 0.95 * max(saturated)
    # The taskqueue design re-enables interrupts at most at the ITR rate and
    # processes in bounded batches: no collapse either.
    tq = [d for _, d in data["fast interrupt + taskqueue"]]
    assert tq[-1] >= 0.95 * max(tq)


def test_plot_is_saved(data: dict, tmp_path: Path) -> None:
    png = livelock.plot(data, tmp_path / "l.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
