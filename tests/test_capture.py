"""holdoff.capture: a capture's span, frames and bytes read from the file.

Expected values come from what each test writes (the writer's own
arithmetic) and, for the shipped captures, from the core's own reader (two
independent readers of one file must agree).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import holdoff
from holdoff import capture
from scenarios import load_script

ROOT = Path(__file__).resolve().parent.parent
MC = load_script("make_capture")
FRAME = MC._ipv4_frame(bytes([10, 0, 0, 1]), MC.SERVER_IP, 17, 4000, 5000, 300)
T0 = 1_700_000_000_000_000_000


def _times(nanos: bool = False) -> list[int]:
    # Three frames: 0, 1.5 ms and 2.000250 s after T0 (whole microseconds),
    # the last 7 ns later in a nanosecond file.
    return [T0, T0 + 1_500_000, T0 + 2_000_250_000 + (7 if nanos else 0)]


@pytest.mark.parametrize("nanos", [False, True])
@pytest.mark.parametrize("big_endian", [False, True])
def test_pcap_both_byte_orders_and_resolutions(
    tmp_path: Path, nanos: bool, big_endian: bool
) -> None:
    path = tmp_path / "c.pcap"
    data = MC.pcap_header(nanos=nanos, big_endian=big_endian)
    for t in _times(nanos):
        data += MC.pcap_record(t, FRAME, nanos=nanos, big_endian=big_endian)
    path.write_bytes(data)
    info = capture.scan(path)
    assert info.format == "pcap"
    assert info.frames == 3
    assert info.span_ns == _times(nanos)[-1] - T0
    assert info.orig_bytes == 3 * 300
    assert info.captured_bytes == 3 * MC.SNAPLEN
    # 300 bytes plus the 4-byte FCS on the wire.
    assert info.wire_bytes == 3 * 304
    assert info.mean_rate_bps == pytest.approx(3 * 304 * 8 / (info.span_ns / 1e9))


def _block(btype: int, body: bytes, e: str = "<") -> bytes:
    body = body + bytes(-len(body) % 4)
    n = len(body) + 12
    return struct.pack(e + "II", btype, n) + body + struct.pack(e + "I", n)


def _idb(tsresol: int, offset_s: int = 0, e: str = "<") -> bytes:
    opts = struct.pack(e + "HHB", 9, 1, tsresol) + bytes(3)
    if offset_s:
        opts += struct.pack(e + "HHq", 14, 8, offset_s)
    opts += struct.pack(e + "HH", 0, 0)
    return _block(1, struct.pack(e + "HHI", 1, 0, 96) + opts, e)


def _epb(iface: int, ts: int, frame: bytes, e: str = "<") -> bytes:
    cap = frame[:96]
    body = struct.pack(e + "IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(cap), len(frame))
    return _block(6, body + cap, e)


@pytest.mark.parametrize("e", ["<", ">"])
def test_pcapng_tsresol_offset_and_simple_blocks(tmp_path: Path, e: str) -> None:
    shb = _block(0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1), e)
    # Interface 0 counts 2^-10 s (1024 units/s) from an offset of 100 s;
    # interface 1 counts microseconds (the default, tsresol 6).
    data = shb + _idb(0x80 | 10, offset_s=100, e=e) + _idb(6, e=e)
    data += _epb(0, 1024, FRAME, e)  # 1 s + 100 s
    data += _block(3, struct.pack(e + "I", len(FRAME)) + FRAME[:96], e)  # SPB: no time
    data += _epb(1, 103_000_000, FRAME, e)  # 103 s
    data += _epb(0, 3 * 1024 + 512, FRAME, e)  # 103.5 s
    path = tmp_path / "c.pcapng"
    path.write_bytes(data)
    info = capture.scan(path)
    assert info.format == "pcapng"
    assert info.frames == 4
    assert info.first_ts_ns == 101 * 10**9
    assert info.span_ns == 2_500_000_000
    assert info.orig_bytes == 4 * 300


def test_shipped_captures_agree_with_the_core() -> None:
    for name in ("office.pcap", "office.pcapng"):
        path = ROOT / "examples" / "captures" / name
        info = capture.scan(path)
        report = holdoff.run(
            {
                "name": "scan",
                "duration_ms": 200,
                "hosts": [
                    {
                        "name": "h",
                        "profile": "xeon-modern",
                        "nics": [{"name": "eth0", "chip": "i210"}],
                    },
                ],
                "generators": [{"name": "cap", "pattern": "replay", "capture": str(path)}],
                "links": [{"a": "cap", "b": "h.eth0", "rate": "1G"}],
            }
        ).report
        core = report["summary"]["generators"][0]["capture"]
        assert core["complete"]
        assert (info.frames, info.wire_bytes, info.span_ns) == (
            core["frames"],
            core["bytes"],
            core["duration_ns"],
        )
        # The two 9014-byte TCP frames are cut into 7 segments each (MSS 1460).
        assert info.over_mtu_frames == core["over_mtu"] == 0
        assert (
            (info.cut_records, info.cut_segments)
            == (
                core["cut_records"],
                core["cut_segments"],
            )
            == (2, 14)
        )


def test_only_to_counts_frames_to_one_address() -> None:
    path = ROOT / "examples" / "captures" / "office.pcapng"
    frames = MC.office_frames()
    # Frames to the server's IPv4 address, from the writer's list.
    want = sum(
        1
        for _, f, _ in frames
        if len(f) >= 34 and f[12:14] == b"\x08\x00" and f[30:34] == MC.SERVER_IP
    )
    info = capture.scan(path, only_to="10.0.0.2")
    # Both 9014-byte TCP records go to the server: 7 wire segments each.
    assert (info.cut_records, info.cut_segments) == (2, 14)
    assert info.frames == want - 2 + 14
    assert info.skipped == len(frames) - want


def _damaged(tmp_path: Path) -> dict[str, tuple[bytes, int, str]]:
    head = MC.pcap_header()
    rec = MC.pcap_record(T0, FRAME)
    return {
        "garbage": (b"GIF89a" + bytes(100), 0, "unknown magic number"),
        "short-header": (head[:10], 0, "truncated file header"),
        "cut-record-header": (head + rec + rec[:7], 24 + len(rec), "truncated record header"),
        "cut-payload": (head + rec + rec[:40], 24 + len(rec), "runs past the end"),
        "backwards": (
            head + MC.pcap_record(T0 + 20_000_000, FRAME) + rec,
            24 + len(rec),
            "20000000 ns earlier",
        ),
        "not-ethernet": (MC.pcap_header(linktype=101) + rec, 20, "unsupported link type"),
        "ng-bad-length": (
            _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
            + struct.pack("<II", 6, 13)
            + bytes(16),
            28,
            "not a multiple of 4",
        ),
    }


def test_damaged_files_name_the_file_and_offset(tmp_path: Path) -> None:
    for name, (data, offset, what) in _damaged(tmp_path).items():
        path = tmp_path / f"{name}.pcap"
        path.write_bytes(data)
        with pytest.raises(capture.CaptureFileError) as err:
            capture.scan(path)
        assert err.value.offset == offset, name
        assert what in err.value.what, name
        assert str(path) in str(err.value)


def test_special_files_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    fifo = tmp_path / "fifo.pcap"
    os.mkfifo(fifo)
    cases = {
        tmp_path: "is a directory",
        empty: "empty file",
        fifo: "is a FIFO",
        tmp_path / "missing.pcap": "cannot open",
    }
    for path, what in cases.items():
        with pytest.raises(capture.CaptureFileError, match=what):
            capture.scan(path)


def test_a_large_capture_is_scanned_in_bounded_memory(tmp_path: Path) -> None:
    # 150 MB of full-size frames: the scan's peak memory must stay far below
    # the file's size (it reads 16-byte headers and seeks past payloads).
    path = tmp_path / "big.pcap"
    MC.write_big(path, 0.15)
    code = (
        "import resource, sys; from holdoff import capture; "
        "i = capture.scan(sys.argv[1]); "
        "print(i.frames, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    frames, rss_kib = map(int, out.stdout.split())
    assert frames == (path.stat().st_size - 24) // (16 + 1514)
    base = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource; from holdoff import capture; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert rss_kib - int(base.stdout) < 20_000  # under 20 MB above the import alone


# ----------------------------------------------------------------- directions

_A, _B = bytes.fromhex("001b21aabb01"), bytes.fromhex("001b21aabb02")
_C = bytes.fromhex("001b21aabb03")


@pytest.mark.parametrize(
    ("received", "sent", "two_way", "first"),
    [
        # One way: A only sends, B only receives -> no host does both.
        ({_B: 1000}, {_A: 1000}, False, None),
        # A conversation: both do both; the busier is listed first, ties by address.
        ({_A: 400, _B: 600}, {_A: 600, _B: 400}, True, "00:1b:21:aa:bb:01"),
        # B also sends 50 to a third address: B takes part in more frames.
        ({_A: 500, _B: 900, _C: 50}, {_A: 900, _B: 550}, True, "00:1b:21:aa:bb:02"),
        # B received 995 and answered 5 (0.5 % < TWO_WAY_MIN_SHARE): one way.
        ({_B: 995, _A: 5}, {_A: 995, _B: 5}, False, "00:1b:21:aa:bb:01"),
        # 10 of 1000 is exactly the 1 % share: two way.
        ({_B: 990, _A: 10}, {_A: 990, _B: 10}, True, "00:1b:21:aa:bb:01"),
    ],
)
def test_directions_of_table(
    received: dict[bytes, int], sent: dict[bytes, int], two_way: bool, first: str | None
) -> None:
    d = capture.directions_of(received, sent, {}, sum(received.values()))
    assert d.two_way is two_way
    assert (d.hosts[0].mac if d.hosts else None) == first


def test_a_capture_taken_on_the_server_is_two_way(tmp_path: Path) -> None:
    from capture_gen import server_both_ways

    path = tmp_path / "both.pcap"
    w = server_both_ways(path, 0.2)  # 1000 requests in, 1000 replies out
    d = capture.scan(path).directions
    assert d is not None and d.two_way
    by_ip = {h.ip: (h.received, h.sent) for h in d.hosts}
    assert by_ip == {"10.0.0.1": (1000, 1000), "10.0.0.2": (1000, 1000)}
    assert d.unicast_frames == w.frames
    # Only the frames to the server: the requests.
    info = capture.scan(path, only_to="10.0.0.2")
    assert (info.frames, info.skipped, info.orig_bytes) == (1000, 1000, 1000 * 200)


@pytest.mark.parametrize("name", ["office.pcap", "office.pcapng", "many-flows.pcap"])
def test_the_shipped_captures_are_one_way(name: str) -> None:
    # Written as what a host receives: every frame comes from the switch side.
    d = capture.scan(ROOT / "examples" / "captures" / name).directions
    assert d is not None and not d.two_way and d.hosts == ()


def test_direction_counts_are_bounded(tmp_path: Path) -> None:
    # More distinct destinations than MAX_MACS: the later ones are not
    # counted and the result says so; the tallies never grow past the bound.
    n = capture.MAX_MACS + 50
    data = MC.pcap_header()
    for i in range(n):
        frame = bytearray(FRAME)
        frame[0:6] = b"\x02" + i.to_bytes(5, "big")  # locally administered, unicast
        data += MC.pcap_record(T0 + i * 1000, bytes(frame))
    path = tmp_path / "many.pcap"
    path.write_bytes(data)
    d = capture.scan(path).directions
    assert d is not None and d.macs_over_limit and d.unicast_frames == n


@pytest.mark.parametrize("linktype", [113, 276])
def test_a_cooked_capture_says_how_to_capture_instead(tmp_path: Path, linktype: int) -> None:
    path = tmp_path / "any.pcap"
    path.write_bytes(MC.pcap_header(linktype=linktype) + MC.pcap_record(T0, FRAME))
    with pytest.raises(capture.CaptureFileError, match="tcpdump -i any") as err:
        capture.scan(path)
    assert "tcpdump -i eth0 -w FILE" in err.value.what


def test_a_two_way_replay_without_only_to_warns(tmp_path: Path) -> None:
    from capture_gen import server_both_ways

    server_both_ways(tmp_path / "both.pcap", 0.1)
    gen = {"name": "cap", "pattern": "replay", "capture": "both.pcap"}
    scen = {"duration_ms": 200, "generators": [gen]}
    (warning,) = capture.replay_warnings(scen, tmp_path)
    assert "both ways" in warning and 'only_to = "10.0.0.2"' in warning
    gen["only_to"] = "10.0.0.2"
    assert capture.replay_warnings(scen, tmp_path) == []


@pytest.mark.parametrize(
    ("length", "headers", "want"),
    [
        # Within the MTU: not an aggregate.
        (1514, 54, None),
        # 8960 payload bytes at MSS 1460: 6 full segments and 200 bytes.
        (9014, 54, [1514] * 6 + [254]),
        # TCP timestamps (66 bytes of headers): MSS 1448, an exact multiple.
        (66 + 3 * 1448, 66, [1514] * 3),
        # Headers unknown (not TCP, or cut by the snaplen): dropped, not cut.
        (9014, None, None),
    ],
)
def test_offload_cut_table(length: int, headers: int | None, want: list[int] | None) -> None:
    assert capture.offload_cut(length, headers, 1518) == want


@pytest.mark.parametrize(
    ("text", "bps"),
    [("1G", 1e9), ("2.5G", 2.5e9), ("100M", 1e8), ("10k", 1e4), ("1000000", 1e6), ("fast", None)],
)
def test_parse_rate_as_the_core(text: str, bps: float | None) -> None:
    assert capture.parse_rate(text) == bps


def test_a_replay_faster_than_its_link_warns(tmp_path: Path) -> None:
    # 2000 frames of 1514 bytes 6 us apart (2.02 Gb/s) on a 1 Gb/s link:
    # 1999 x (12.304 - 6) us = 12.602 ms behind by the last frame.
    f = MC._ipv4_frame(bytes([10, 0, 0, 1]), MC.SERVER_IP, 17, 4000, 5000, 1514)
    data = MC.pcap_header(nanos=True)
    for i in range(2000):
        data += MC.pcap_record(T0 + i * 6000, f, nanos=True)
    (tmp_path / "fast.pcap").write_bytes(data)
    gen = {"name": "cap", "pattern": "replay", "capture": "fast.pcap"}
    scen = {
        "duration_ms": 30,
        "generators": [gen],
        "links": [{"a": "cap", "b": "h.eth0", "rate": "1G"}],
    }
    (warning,) = capture.replay_warnings(scen, tmp_path)
    assert "12.602 ms behind" in warning
    scen["links"][0]["rate"] = "10G"
    assert capture.replay_warnings(scen, tmp_path) == []


def test_slightly_reordered_records_are_read_at_the_previous_time(tmp_path: Path) -> None:
    # A multi-queue capture: the third record 3 us before the second. Read
    # at the second's time, as the core's replay reads it; counted.
    data = MC.pcap_header()
    for t in (0, 10_000, 7_000, 20_000):
        data += MC.pcap_record(T0 + t, FRAME)
    path = tmp_path / "reorder.pcap"
    path.write_bytes(data)
    info = capture.scan(path)
    assert (info.frames, info.reordered, info.max_step_back_ns) == (4, 1, 3_000)
    assert info.span_ns == 20_000


def test_the_suggested_only_to_is_the_host_the_capture_was_taken_on() -> None:
    """A server's capture with three clients: the server took part in every
    frame (600), each client in 200; `only_to` should keep the server's
    received frames. Two hosts tied (one client, one server) keep the
    earlier choice, the second in address order."""
    server, clients = (
        b"\x00\x1b\x21\xaa\xbb\x02",
        [bytes([0, 0x1B, 0x21, 0, 0, c]) for c in (1, 3, 4)],
    )
    received = {server: 300, **{c: 100 for c in clients}}
    sent = {server: 300, **{c: 100 for c in clients}}
    ip_to = {server: bytes([10, 0, 0, 2]), **{c: bytes([10, 0, 0, c[-1]]) for c in clients}}
    dirs = capture.directions_of(received, sent, ip_to, 600)
    assert dirs.two_way and dirs.capture_host is not None
    assert dirs.capture_host.ip == "10.0.0.2"
    tied = capture.directions_of({server: 5, clients[0]: 5}, {server: 5, clients[0]: 5}, ip_to, 10)
    assert tied.capture_host is not None and tied.capture_host.ip == "10.0.0.2"
