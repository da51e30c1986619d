"""Frame trains change no result: a property test.

A generator's emission runs as a *frame train* (``scenario::world::trains``):
the emissions, the arrivals at the port and the DMA completions of its
frames run outside the event queue while nothing else is due, and go back
into the queue, in the order the per-frame engine would have queued them,
whenever anything else is scheduled. ``HOLDOFF_TRAINS=off`` runs the
per-frame engine alone. This test runs random scenarios both ways and
compares the whole report JSON, byte for byte, and the event count.

The scenarios are the groups of ``tests/test_independence.py`` (generator
floods with constant, Poisson, on-off and replayed-capture traffic; TCP and
UDP applications; IP forwarding; every driver architecture, every built-in
moderation kind on the chips that take it), the ticker of
``tests/test_groups.py`` (DMA completions on the sampling instants, or 1 ns
either side) and ``[[at]]`` changes that switch generators off and on or
change their load, plus a train group drawn here to reach the run's edges:

- link propagation from 0 to 100 us, so that up to 150 frames are on the
  wire (arrivals queued before a run, taken over by it when they reach the
  head of the queue);
- receive rings of 64 descriptors and full-size frames at line rate, so
  that rings fill and the receive buffer overruns (drops inside a run);
- static throttle rates from none to 100 000/s and the adaptive kinds, so
  that interrupt assertions and throttle timers interrupt runs at every
  phase.

Each example runs with the group scheduler on or off (drawn). Half of them
add the 1 GbE bench's flood, whose frame events run mostly in trains, and
check that the run with trains on used them when the group scheduler gave
the flood its own queue, so the comparison cannot pass by both runs taking
the per-frame engine. (Where every frame interrupts,
a run ends at each frame's interrupt and trains hold almost nothing: the
test does not ask for train events there.)

Mutation tried once, by hand: letting a held event win a tie with a queued
one fails this test. A reordering that changes no result passes it (two
frame events of one instant put back into the queue in the wrong order):
``crates/holdoff-core/tests/trains.rs`` compares the log of every event
handled, which catches that one.

``HOLDOFF_TRAINS_EXAMPLES`` sets the number of random scenarios (default
500).
"""

from __future__ import annotations

import os
import tomllib
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from holdoff.api import run_text
from test_groups import ENGINE_PROPERTY_SETTINGS, changes, environ, scenario, scheduler, ticker
from test_independence import EXAMPLES_DIR, group, host

N_EXAMPLES = int(os.environ.get("HOLDOFF_TRAINS_EXAMPLES", "500"))
ENV = "HOLDOFF_TRAINS"


def trains(mode: str) -> AbstractContextManager[None]:
    """Frame trains ``on`` or ``off`` for the runs inside."""
    return environ(ENV, mode)


@st.composite
def train_group(draw: st.DrawFn, i: int) -> dict[str, list[dict[str, Any]]]:
    """A generator into a host, drawn to reach a run's edges (module doc)."""
    p = f"g{i}"
    h = draw(host(f"{p}h", ["eth0"]))
    if h["nics"][0]["chip"] != "ena":  # ENA rings start at 256
        h["nics"][0]["rx_ring"] = draw(st.sampled_from([64, 256]))
    gen: dict[str, Any] = {
        "name": f"{p}gen",
        "pattern": draw(st.sampled_from(["constant", "poisson", "on-off"])),
        "load": draw(st.sampled_from([0.5, 1.0])),
        "frame_bytes": draw(st.sampled_from([64, 1518])),
    }
    if gen["pattern"] == "on-off":
        gen["on_us"], gen["off_us"] = 200, 300
    return {
        "hosts": [h],
        "generators": [gen],
        "links": [
            {
                "a": f"{p}gen",
                "b": f"{p}h.eth0",
                "propagation_ns": draw(st.sampled_from([0, 1, 700, 10_000, 100_000])),
            }
        ],
        "apps": [{"kind": "udp_sink", "name": f"{p}sink", "host": f"{p}h"}],
    }


def witness_group(i: int) -> dict[str, list[dict[str, Any]]]:
    """The 1 GbE bench's flood (64-byte frames at line rate into a NAPI host
    throttled at 8000/s): most of its frame events run in trains, so a run
    with it cannot pass by taking the per-frame engine throughout."""
    p = f"g{i}"
    return {
        "hosts": [
            {
                "name": f"{p}h",
                "profile": "xeon-modern",
                "driver": "napi",
                "nics": [
                    {
                        "name": "eth0",
                        "chip": "82546",
                        "rx_ring": 1024,
                        "moderation": {"kind": "static", "itr_per_s": 8000},
                    }
                ],
            }
        ],
        "generators": [{"name": f"{p}gen", "load": 1.0, "frame_bytes": 64}],
        "links": [{"a": f"{p}gen", "b": f"{p}h.eth0"}],
        "apps": [{"kind": "udp_sink", "name": f"{p}sink", "host": f"{p}h"}],
    }


def both_ways(text: str, base_dir: Path = EXAMPLES_DIR) -> tuple[Any, Any]:
    with trains("off"):
        frames = run_text(text, base_dir=base_dir)
    with trains("on"):
        train = run_text(text, base_dir=base_dir)
    return frames, train


@settings(ENGINE_PROPERTY_SETTINGS, max_examples=N_EXAMPLES)
@given(
    data=st.data(),
    n=st.integers(min_value=1, max_value=3),
    seed=st.integers(min_value=0, max_value=2**32),
    duration_ms=st.sampled_from([3, 7]),
    interval_us=st.sampled_from([100, 500, 2000]),
    with_ticker=st.booleans(),
    with_witness=st.booleans(),
    by_groups=st.booleans(),
)
def test_trains_give_the_per_frame_report(
    data: st.DataObject,
    n: int,
    seed: int,
    duration_ms: int,
    interval_us: int,
    with_ticker: bool,
    with_witness: bool,
    by_groups: bool,
) -> None:
    groups = []
    for i in range(n):
        if data.draw(st.booleans()):
            groups.append(data.draw(train_group(i)))
        else:
            groups.append(data.draw(group(i)))
    if with_ticker:
        groups.append(data.draw(ticker(len(groups))))
    if with_witness:
        groups.append(witness_group(len(groups)))
    gens = [x for g in groups for x in g["generators"]]
    at = data.draw(changes(gens, duration_ms))
    text = scenario(groups, seed, duration_ms, interval_us, at)
    with scheduler("on" if by_groups else "off"):
        frames, train = both_ways(text)
    assert frames.perf["train_events"] == 0
    if with_witness and train.perf["scheduled_groups"] > 0:
        # In its own queue the flood runs as trains. (In the single queue,
        # another generator of the same rate and start ties with it at every
        # emission, a queued event wins each tie, and its runs hold nothing:
        # exact, not faster.)
        assert train.perf["train_events"] > 0
    assert train.perf["events_processed"] == frames.perf["events_processed"]
    assert train.to_json() == frames.to_json()


def shortened(path: Path, max_ms: int) -> str:
    """A bundled example with its run cut to ``max_ms``, or to 10 ms past its
    last ``[[at]]`` change (a long bench run adds nothing a short one does
    not show)."""
    doc = tomllib.loads(path.read_text())
    last_change = max((c["t_ms"] for c in doc.get("at", [])), default=0)
    doc["duration_ms"] = min(doc.get("duration_ms", max_ms), max(max_ms, last_change + 10))
    return tomli_w.dumps(doc)


EXAMPLE_FILES = sorted(
    p for p in EXAMPLES_DIR.glob("*.toml") if "netpipe" not in p.name and "sweep" not in p.name
)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_gives_the_per_frame_report(path: Path) -> None:
    # The bundled examples reach what the random groups do not: a busy
    # poller (rpc-busy-poll-irq-suspend), completion-queue chips at 25 and
    # 100 Gb/s (bench-1500b-25g, bench-64b-100g), RSS over 8 queues
    # (bench-64b-10g-8q-napi), replayed captures and changes.
    frames, train = both_ways(shortened(path, 30), base_dir=path.parent)
    assert frames.perf["train_events"] == 0
    assert train.perf["events_processed"] == frames.perf["events_processed"]
    assert train.to_json() == frames.to_json()


def test_a_saturated_flood_runs_as_trains() -> None:
    # The 1 GbE bench: 64-byte frames at line rate into one port. Every
    # frame's three events (emission, arrival, DMA completion) run in
    # trains except where an interrupt, a poll or a sample is due first.
    frames, train = both_ways(shortened(EXAMPLES_DIR / "bench-64b-1g-itr8000-napi.toml", 20))
    frame_events = 3 * train.perf["sim_packets"]
    assert train.perf["train_events"] > 0.9 * frame_events
    assert train.to_json() == frames.to_json()
