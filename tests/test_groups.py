"""The group scheduler changes no result: a property test.

A run goes by connected groups (each group of linked hosts from its own
event queue for stretches of simulated time; ``scenario::world::groups``)
unless ``HOLDOFF_GROUP_SCHEDULER=off`` asks for the single queue. This test
runs random scenarios of 2 to 4 groups (the groups of
``tests/test_independence.py``: floods, replayed captures, TCP and UDP
applications, forwarding; every driver architecture and built-in moderation
kind) both ways and compares the whole report JSON, byte for byte, and the
event count. To reach the scheduler's ordering rule (a group event at the
instant of a global event runs before it exactly when it was scheduled
before it), the scenarios also draw:

- a sampling interval from 100 us to 2 ms, so that samples are frequent;
- a "ticker" group: a generator sending a 64-byte frame every 100 us over a
  link whose propagation puts the frame's DMA completion into the ring
  (which the sample reads: received bytes, ring fill) on the sampling
  instants, or 1 ns either side: the emission at ``k x 100 us``, 672 ns on
  the 1 Gb/s wire, ``100 us - 672 ns - 1500 ns`` of propagation, then the
  82546's 1500 ns DMA (its chip profile, ``nic::chip``). The completion is
  scheduled 1.5 us before the instant, the sample at least 100 us before,
  so the single queue runs the sample first;
- ``[[at]]`` changes (a generator switched off and on, a new offered load),
  which are global events of their own, at whole milliseconds (where
  samples fall too).

Each example also checks that the run with the scheduler on went by groups
(``perf["scheduled_groups"]`` is the number of groups), so the comparison
cannot pass by both runs taking the single queue. NetPIPE groups are left
out: a NetPIPE run ends when its last client finishes, so such runs take the
single queue (the module doc lists why).

Mutation tried once, by hand: running each group through every event at the
global event's instant before the global event (markers ignored) fails the
property test and the fixed ticker test below (with the DMA completions 1
ns off the sampling instants, the ticker alone no longer sees it).

``HOLDOFF_GROUPS_EXAMPLES`` sets the number of random scenarios (default 500; about 10 s
on the 2-core development machine at load 2).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holdoff.api import run_text
from test_independence import EXAMPLES_DIR, group

N_EXAMPLES = int(os.environ.get("HOLDOFF_GROUPS_EXAMPLES", "500"))
ENV = "HOLDOFF_GROUP_SCHEDULER"
#: 64 bytes + preamble and inter-frame gap at 1 Gb/s [ns] (IEEE 802.3 clause 4.4.2).
MIN_FRAME_NS = 672
#: The 82546's receive DMA of a frame [ns] (its chip profile, `nic::chip`).
DMA_82546_NS = 1500


#: The settings of the engine property tests (this file's and
#: ``tests/test_trains.py``): reproducible examples, no deadline (a run's
#: time varies with the machine's load).
ENGINE_PROPERTY_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
    derandomize=True,
)


@contextmanager
def environ(name: str, value: str) -> Iterator[None]:
    """Environment variable ``name`` set to ``value`` for the runs inside (the
    core reads it when it builds a world)."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def scheduler(mode: str) -> AbstractContextManager[None]:
    """The group scheduler ``on`` or ``off`` for the runs inside."""
    return environ(ENV, mode)


def ticker_group(i: int, skew: int, driver: str) -> dict[str, list[dict[str, Any]]]:
    """A host fed one 64-byte frame every 100 us, each DMA completion on a
    sampling instant shifted by ``skew`` ns."""
    p = f"g{i}"
    return {
        "hosts": [
            {
                "name": f"{p}h",
                "profile": "xeon-modern",
                "driver": driver,
                "nics": [
                    {
                        "name": "eth0",
                        "chip": "82546",
                        "moderation": {"kind": "static", "itr_per_s": 0},
                    }
                ],
            }
        ],
        "generators": [{"name": f"{p}gen", "rate_pps": 10_000, "frame_bytes": 64}],
        "links": [
            {
                "a": f"{p}gen",
                "b": f"{p}h.eth0",
                "rate": "1G",
                "propagation_ns": 100_000 - MIN_FRAME_NS - DMA_82546_NS + skew,
            }
        ],
        "apps": [{"kind": "udp_sink", "name": f"{p}sink", "host": f"{p}h"}],
    }


@st.composite
def ticker(draw: st.DrawFn, i: int) -> dict[str, list[dict[str, Any]]]:
    """A ticker group, on the sampling instants or 1 ns either side."""
    skew = draw(st.sampled_from([-1, 0, 1]))
    return ticker_group(i, skew, draw(st.sampled_from(["napi", "linux-isr"])))


def no_netpipe(g: dict[str, list[dict[str, Any]]]) -> bool:
    return all(a["kind"] != "netpipe" for a in g["apps"])


@st.composite
def changes(draw: st.DrawFn, gens: list[dict[str, Any]], duration_ms: int) -> list[dict[str, Any]]:
    """``[[at]]`` tables on the generators that have an offered load."""
    out: list[dict[str, Any]] = []
    for gi, g in enumerate(gens):
        if "load" not in g or not draw(st.booleans()):
            continue
        t = draw(st.integers(min_value=0, max_value=duration_ms - 2))
        if draw(st.booleans()):
            out.append({"t_ms": t, "set": {f"generators[{gi}].enabled": False}})
            out.append({"t_ms": t + 1, "set": {f"generators[{gi}].enabled": True}})
        else:
            load = draw(st.sampled_from([0.1, 0.5, 1.0]))
            out.append({"t_ms": t, "set": {f"generators[{gi}].load": load}})
    return sorted(out, key=lambda c: c["t_ms"])


def scenario(
    groups: list[dict[str, list[dict[str, Any]]]],
    seed: int,
    duration_ms: int,
    interval_us: int,
    at: list[dict[str, Any]],
) -> str:
    doc: dict[str, Any] = {
        "name": "groups",
        "seed": seed,
        "duration_ms": duration_ms,
        "sample_interval_us": interval_us,
    }
    for key in ("hosts", "generators", "links", "apps"):
        doc[key] = [x for g in groups for x in g[key]]
    if not doc["apps"]:
        del doc["apps"]
    if at:
        doc["at"] = at
    return tomli_w.dumps(doc)


@settings(ENGINE_PROPERTY_SETTINGS, max_examples=N_EXAMPLES)
@given(
    data=st.data(),
    n=st.integers(min_value=2, max_value=4),
    seed=st.integers(min_value=0, max_value=2**32),
    duration_ms=st.sampled_from([3, 7]),
    interval_us=st.sampled_from([100, 200, 500, 1000, 2000]),
    with_ticker=st.booleans(),
)
def test_group_scheduler_gives_the_single_queue_report(
    data: st.DataObject,
    n: int,
    seed: int,
    duration_ms: int,
    interval_us: int,
    with_ticker: bool,
) -> None:
    groups = [data.draw(group(i).filter(no_netpipe)) for i in range(n - with_ticker)]
    if with_ticker:
        groups.append(data.draw(ticker(n - 1)))
    gens = [x for g in groups for x in g["generators"]]
    at = data.draw(changes(gens, duration_ms))
    text = scenario(groups, seed, duration_ms, interval_us, at)
    with scheduler("off"):
        single = run_text(text, base_dir=EXAMPLES_DIR)
    with scheduler("on"):
        grouped = run_text(text, base_dir=EXAMPLES_DIR)
    assert single.perf["scheduled_groups"] == 0
    assert grouped.perf["scheduled_groups"] == n
    assert grouped.perf["events_processed"] == single.perf["events_processed"]
    assert grouped.to_json() == single.to_json()


@pytest.mark.parametrize("interval_us", [100, 1000])
def test_a_sample_and_a_dma_completion_at_one_instant_keep_their_order(interval_us: int) -> None:
    # The completions land on the sampling instants (skew 0); the sample was
    # scheduled first, so it reads the ring before each completion.
    groups = [ticker_group(i, 0, "napi") for i in range(2)]
    text = scenario(groups, seed=1, duration_ms=3, interval_us=interval_us, at=[])
    with scheduler("off"):
        single = run_text(text)
    with scheduler("on"):
        grouped = run_text(text)
    assert grouped.perf["scheduled_groups"] == 2
    assert grouped.to_json() == single.to_json()


def test_one_group_takes_the_single_queue() -> None:
    one = scenario([ticker_group(0, 0, "napi")], seed=1, duration_ms=2, interval_us=100, at=[])
    two = scenario(
        [ticker_group(0, 0, "napi"), ticker_group(1, 0, "napi")],
        seed=1,
        duration_ms=2,
        interval_us=100,
        at=[],
    )
    with scheduler("on"):
        assert run_text(one).perf["scheduled_groups"] == 0
        assert run_text(two).perf["scheduled_groups"] == 2
