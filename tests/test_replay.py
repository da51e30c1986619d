"""Capture replay from Python: the shipped fixture, path resolution, memory
that does not grow with the capture, and fuzzed captures.

Expected values come from the script that writes the fixture
(``scripts/make_capture.py``): its frame list is the capture's content,
independent of the simulator that replays it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import holdoff
from holdoff import _core
from scenarios import load_script

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "examples" / "captures"
EXAMPLE = ROOT / "examples" / "replay-office.toml"


MC = load_script("make_capture")

# RFC 2819 etherStats buckets, frame size with padding and FCS.
BUCKETS = [
    (64, "64"),
    (127, "65-127"),
    (255, "128-255"),
    (511, "256-511"),
    (1023, "512-1023"),
    (1518, "1024-1518"),
]


def _bucket(frame_len: int) -> str:
    wire = max(frame_len, 60) + 4
    for hi, name in BUCKETS:
        if wire <= hi:
            return name
    return "1519+"


def _wire_frames(frame: bytes) -> list[int]:
    """The lengths the replay sends for one captured frame: itself, or, for a
    TCP frame longer than the 1500-byte MTU (an offload aggregate), its
    segments: the headers (here Ethernet 14 + IPv4 20 + TCP 20 = 54 bytes,
    the writer's) plus at most MSS = 1500 + 14 - 54 = 1460 payload bytes."""
    if len(frame) <= 1514 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return [len(frame)]
    assert frame[46] >> 4 == 5  # a 20-byte TCP header, as the writer makes it
    full, rest = divmod(len(frame) - 54, 1460)
    return [1514] * full + ([54 + rest] if rest else [])


OFFICE_WIRE = [n for _, f, _ in MC.office_frames() for n in _wire_frames(f)]


def _scenario(capture: str, **gen: Any) -> dict[str, Any]:
    return {
        "name": "replay-test",
        "duration_ms": 120,
        "hosts": [
            {
                "name": "server",
                "profile": "xeon-modern",
                "driver": "napi",
                "cores": 4,
                "nics": [
                    {
                        "name": "eth0",
                        "chip": "i350",
                        "queues": 4,
                        "moderation": {"kind": "static", "eitr_us": 50},
                    }
                ],
            }
        ],
        "generators": [{"name": "trace", "pattern": "replay", "capture": capture, **gen}],
        "links": [{"a": "trace", "b": "server.eth0", "rate": "1G"}],
        "apps": [{"kind": "udp_sink", "name": "sink", "host": "server"}],
    }


def test_fixtures_are_what_the_script_writes(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_capture.py"), "--out", str(tmp_path)],
        check=True,
    )
    for name in ["office.pcapng", "office.pcap"]:
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name


def test_shipped_capture_replays_exactly_its_frames() -> None:
    frames = MC.office_frames()
    report = holdoff.run(EXAMPLE).report
    s = report["summary"]
    cap = s["generators"][0]["capture"]
    # Every frame of the file is injected once (speed 1, one loop), the two
    # 9014-byte TCP aggregates as 7 segments each (8960 = 6 x 1460 + 200).
    assert s["ledger"]["injected"] == len(OFFICE_WIRE) == cap["frames"] == 1000 - 2 + 14
    assert (cap["cut_records"], cap["cut_segments"], cap["over_mtu"]) == (2, 14, 0)
    # With the capture's size histogram.
    want = Counter(_bucket(n) for n in OFFICE_WIRE)
    assert {k: v for k, v in cap["size_histogram"].items() if v} == dict(want)
    # TCP share: IPv4 frames with protocol 6, the segments counted.
    tcp = sum(len(_wire_frames(f)) for _, f, _ in frames if f[12:14] == b"\x08\x00" and f[23] == 6)
    assert cap["tcp_share"] == pytest.approx(tcp / len(OFFICE_WIRE))
    # Duration: first to last timestamp (interface 0 in microseconds, the
    # script's times are whole microseconds; the last frame is an EPB).
    assert cap["duration_ns"] == frames[-1][0] - frames[0][0]
    # The two 9014-byte frames were cut, so none is over the 1500-byte MTU.
    assert s["drops"]["frame_over_mtu"] == 0
    assert any(
        w["field"] == "generators[0].mtu_bytes" and "14 in all" in w["message"]
        for w in s["warnings"]
    )
    assert any(
        w["field"] == "generators[0].capture" and "open loop" in w["message"] for w in s["warnings"]
    )


def test_only_to_keeps_frames_to_one_address() -> None:
    frames = MC.office_frames()
    to_server = [f for _, f, _ in frames if f[12:14] == b"\x08\x00" and f[30:34] == MC.SERVER_IP]
    r = holdoff.run(_scenario(str(FIXTURES / "office.pcap"), only_to="10.0.0.2")).report
    # Each kept record, an offload aggregate as its wire segments.
    assert r["summary"]["ledger"]["injected"] == sum(len(_wire_frames(f)) for f in to_server)
    assert r["summary"]["generators"][0]["capture"]["skipped"] == len(frames) - len(to_server)


def test_relative_capture_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A scenario file: relative to its directory, wherever it is run from.
    monkeypatch.chdir(tmp_path)
    assert holdoff.run(EXAMPLE).report["summary"]["ledger"]["injected"] == len(OFFICE_WIRE)
    # A dict or TOML text: relative to the working directory.
    monkeypatch.chdir(FIXTURES)
    injected = holdoff.run(_scenario("office.pcap")).report["summary"]["ledger"]["injected"]
    assert injected == len(OFFICE_WIRE)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        _core.ScenarioError, match=r"generators\[0\]\.capture.*office\.pcap.*cannot open"
    ):
        holdoff.run(_scenario("office.pcap"))


MEMORY_PROBE = textwrap.dedent(
    """
    import resource, sys, holdoff
    path, frames = sys.argv[1], int(sys.argv[2])
    s = {
        "name": "replay-memory", "duration_ms": 3_600_000,
        "hosts": [{"name": "h", "profile": "xeon-modern", "driver": "napi",
                   "nics": [{"name": "eth0", "chip": "i350"}]}],
        "generators": [{"name": "g", "pattern": "replay", "capture": path, "speed": 1000.0}],
        "links": [{"a": "g", "b": "h.eth0", "rate": "100G"}],
        "apps": [{"kind": "udp_sink", "name": "sink", "host": "h"}],
        "sample_interval_us": 3_600_000_000,
    }
    r = holdoff.run(s).report["summary"]
    assert r["ledger"]["injected"] == frames, (r["ledger"], frames)
    # Peak RSS of this process image [KiB]: VmHWM belongs to the address
    # space, so unlike ru_maxrss it does not carry over the RSS of the
    # parent that forked it.
    try:
        with open("/proc/self/status") as f:
            print(next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")))
    except OSError:
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


def _replay_rss_kib(path: Path, frames: int) -> int:
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(path), str(frames)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.split()[-1])


def _big_capture(path: Path, gigabytes: float) -> int:
    MC.write_big(path, gigabytes)
    return sum(1 for _ in MC.big_records(gigabytes))


def test_replay_memory_does_not_grow_with_the_capture(tmp_path: Path) -> None:
    # A 1 GB capture (653 595 full-size frames) replays with a peak RSS under
    # 200 MB, and a capture ten times smaller peaks within a few MB of it:
    # replay streams the file (one 64 KiB read buffer and one frame read
    # ahead), so memory does not grow with the capture. About 12 s here,
    # most of it writing the file; HOLDOFF_REPLAY_GB sets another size
    # (`make replay-1g` runs it alone).
    gb = float(os.environ.get("HOLDOFF_REPLAY_GB", "1"))
    small = tmp_path / "small.pcap"
    big = tmp_path / "big.pcap"
    rss_small = _replay_rss_kib(small, _big_capture(small, gb / 10))
    small.unlink()
    n_big = _big_capture(big, gb)
    rss_big = _replay_rss_kib(big, n_big)
    size_kib = big.stat().st_size // 1024
    assert rss_big < 200 * 1024, f"peak RSS {rss_big} KiB replaying {size_kib} KiB"
    assert rss_big - rss_small < max(size_kib // 20, 8 * 1024), (rss_small, rss_big, size_kib)


def _mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:  # flip bytes
        for _ in range(rng.randrange(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 1:  # truncate
        del b[rng.randrange(len(b)) :]
    elif kind == 2:  # overwrite a 32-bit field with an extreme value
        at = rng.randrange(len(b) - 4)
        b[at : at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x00\x00\x01\x00"])
    else:  # duplicate a slice (records out of order)
        at = rng.randrange(len(b))
        b[at:at] = b[rng.randrange(len(b)) :][: rng.randrange(1, 400)]
    return bytes(b)


@pytest.mark.parametrize("name", ["office.pcapng", "office.pcap"])
def test_fuzzed_captures_fail_cleanly_or_balance(name: str, tmp_path: Path) -> None:
    rng = random.Random(16)
    data = (FIXTURES / name).read_bytes()
    path = tmp_path / name
    for _ in range(60):
        path.write_bytes(_mutate(data, rng))
        try:
            r = holdoff.run(_scenario(str(path))).report["summary"]
        except (_core.ScenarioError, _core.SimulationError) as e:
            msg = str(e)
            assert "capture" in msg and str(path) in msg and "at byte" in msg, msg
            continue
        assert r["ledger"]["balanced"]


def test_examples_copy_brings_the_capture_along(tmp_path: Path) -> None:
    # The copied scenario names its capture by a relative path; the copy
    # writes the capture at that path, so the copy runs as the original does.
    from holdoff.cli import main

    assert main(["examples", "copy", "replay-office", "--to", str(tmp_path)]) == 0
    assert (tmp_path / "captures" / "office.pcapng").read_bytes() == (
        FIXTURES / "office.pcapng"
    ).read_bytes()
    report = holdoff.run(tmp_path / "replay-office.toml").report
    assert report["summary"]["ledger"]["injected"] == len(OFFICE_WIRE)
