"""Writes captures for the tests with the struct module: the content is known
from the writer's own arithmetic, independent of the readers under test.

``thirty_seconds``: 200-byte UDP requests to 10.0.0.2:5000 at 5000/s for
30 s, plus every 100 ms a burst of 40 back-to-back 1514-byte frames to
10.0.0.2:9000 (12 us apart, 1 Gb/s wire time of a full frame), 162 000
frames. Formats: draft-ietf-opsawg-pcap (classic, microsecond, little
endian; snaplen 96 so the file stays small, original lengths kept).

``server_both_ways``: what `tcpdump -i eth0` on the server of such requests
records: each 200-byte request to 10.0.0.2 (MAC 00:1b:21:aa:bb:02) from
10.0.0.1 (00:1b:21:aa:bb:01), and 40 us later the server's 1514-byte reply
the other way.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

SERVER_IP = bytes([10, 0, 0, 2])
CLIENT_IP = bytes([10, 0, 0, 1])
SERVER_MAC = bytes.fromhex("001b21aabb02")
CLIENT_MAC = bytes.fromhex("001b21aabb01")
SNAPLEN = 96
EPOCH_S = 1_700_000_000


def udp_frame(length: int, dport: int, dscp: int = 0, *, reply: bool = False) -> bytes:
    """An Ethernet/IPv4/UDP frame of ``length`` bytes (without FCS), client to
    server (``reply``: server to client)."""
    macs = (CLIENT_MAC, SERVER_MAC) if reply else (SERVER_MAC, CLIENT_MAC)
    eth = macs[0] + macs[1] + b"\x08\x00"
    ip_len = length - 14
    src, dst = (SERVER_IP, CLIENT_IP) if reply else (CLIENT_IP, SERVER_IP)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, dscp << 2, ip_len, 0, 0, 64, 17, 0, src, dst)
    udp = struct.pack(">HHHH", 40000, dport, ip_len - 20, 0)
    body = eth + ip + udp
    return body + bytes(length - len(body))


@dataclass(frozen=True)
class Written:
    frames: int
    orig_bytes: int
    wire_bytes: int
    first_ns: int
    last_ns: int


def write_pcap(path: Path, records: list[tuple[int, bytes, int]], nanos: bool = False) -> None:
    """(timestamp [ns], captured bytes, original length) per record."""
    with open(path, "wb") as f:
        magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
        f.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, SNAPLEN, 1))
        for ts, data, orig in records:
            sec, ns = divmod(ts, 1_000_000_000)
            frac = ns if nanos else ns // 1000
            f.write(struct.pack("<IIII", sec, frac, len(data), orig) + data)


def thirty_seconds(path: Path, seconds: int = 30) -> Written:
    """Write the capture described in the module doc; return what it holds."""
    req = udp_frame(200, 5000, dscp=46)[:SNAPLEN]
    bulk = udp_frame(1514, 9000)[:SNAPLEN]
    base = EPOCH_S * 1_000_000_000
    events: list[tuple[int, bytes, int]] = []
    for i in range(5000 * seconds):
        events.append((base + i * 200_000, req, 200))
    for b in range(10 * seconds):
        t0 = base + b * 100_000_000 + 50_000
        for k in range(40):
            events.append((t0 + k * 12_000, bulk, 1514))
    events.sort(key=lambda e: e[0])
    write_pcap(path, events)
    wire = sum(max(o, 60) + 4 for _, _, o in events)
    return Written(len(events), sum(o for _, _, o in events), wire, events[0][0], events[-1][0])


def server_both_ways(path: Path, seconds: float = 1.0) -> Written:
    """Write the server-side capture of the module doc (requests and replies)."""
    req = udp_frame(200, 5000)[:SNAPLEN]
    rep = udp_frame(1514, 40000, reply=True)[:SNAPLEN]
    base = EPOCH_S * 1_000_000_000
    events: list[tuple[int, bytes, int]] = []
    for i in range(int(5000 * seconds)):
        events.append((base + i * 200_000, req, 200))
        events.append((base + i * 200_000 + 40_000, rep, 1514))
    write_pcap(path, events)
    wire = sum(max(o, 60) + 4 for _, _, o in events)
    return Written(len(events), sum(o for _, _, o in events), wire, events[0][0], events[-1][0])
