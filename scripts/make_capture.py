"""Write the capture fixtures that capture replay is tested and demonstrated with.

``python scripts/make_capture.py`` writes ``examples/captures/office.pcapng`` and
``examples/captures/office.pcap``: the same 1000 frames of a small office's
traffic seen at a server port (10.0.0.2), made from a fixed seed:

- TCP downloads from the server and uploads to it: full-size 1514-byte
  segments, the 54-byte ACKs going the other way (padded to 60 on the wire);
- DNS over UDP (small queries and answers), a UDP video stream of
  1000 to 1300-byte datagrams, ARP requests (42 bytes);
- two 9014-byte frames (a jumbo capture taken above segmentation offload),
  longer than a 1500-byte MTU.

The pcapng file has two interfaces (microsecond and nanosecond
``if_tsresol``), Enhanced Packet Blocks on both and a few Simple Packet
Blocks; the pcap file is the classic little-endian microsecond format.
Both are captured with a 96-byte snaplen, so the files are small while the
original lengths are kept. Formats: draft-ietf-opsawg-pcap and
draft-ietf-opsawg-pcapng.

``python scripts/make_capture.py --big PATH --gigabytes 1`` streams a large
pcap of full-size UDP frames to PATH without holding it in memory (for the
memory test of replay, ``make replay-1g``).
"""

from __future__ import annotations

import argparse
import random
import struct
from collections.abc import Iterator
from pathlib import Path

SERVER_IP = bytes([10, 0, 0, 2])
SERVER_MAC = bytes.fromhex("001b21aabb02")
SNAPLEN = 96
FRAMES = 1000


def _ipv4_frame(src: bytes, dst: bytes, proto: int, sport: int, dport: int, length: int) -> bytes:
    """An Ethernet + IPv4 + TCP/UDP header for a frame of ``length`` bytes (no FCS)."""
    eth = SERVER_MAC if dst == SERVER_IP else bytes.fromhex("001b21aabb99")
    eth += bytes.fromhex("001b21cc0001") + b"\x08\x00"
    ip_len = length - 14
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0x4000, 64, proto, 0, src, dst)
    if proto == 6:
        l4 = struct.pack("!HHIIBBHHH", sport, dport, 1, 1, 0x50, 0x10, 65535, 0, 0)
    else:
        l4 = struct.pack("!HHHH", sport, dport, ip_len - 20, 0)
    head = eth + ip + l4
    return head + bytes(max(0, length - len(head)))


def _arp_frame() -> bytes:
    eth = b"\xff" * 6 + bytes.fromhex("001b21cc0001") + b"\x08\x06"
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, bytes(6), bytes(4), bytes(6), SERVER_IP)
    return eth + arp


def office_frames(seed: int = 16, n: int = FRAMES) -> list[tuple[int, bytes, int]]:
    """(timestamp [ns], frame without FCS, interface) for the office capture."""
    rng = random.Random(seed)
    t = 1_700_000_000_000_000_000  # capture clock [ns]
    out: list[tuple[int, bytes, int]] = []
    clients = [bytes([10, 0, 1, i]) for i in range(1, 21)]
    jumbo_at = {n // 3, 2 * n // 3}
    for i in range(n):
        t += 1000 * max(1, round(rng.expovariate(1 / 100)))  # ~100 us apart, whole us
        c = rng.choice(clients)
        r = rng.random()
        iface = i % 2
        if i in jumbo_at:
            f = _ipv4_frame(c, SERVER_IP, 6, 40000 + i, 445, 9014)
        elif r < 0.40:
            f = _ipv4_frame(c, SERVER_IP, 6, 50000 + clients.index(c), 443, 1514)
        elif r < 0.62:
            f = _ipv4_frame(c, SERVER_IP, 6, 50000 + clients.index(c), 80, 54)
        elif r < 0.72:
            f = _ipv4_frame(
                c, SERVER_IP, 17, 53000 + rng.randrange(1000), 53, rng.randrange(70, 130)
            )
        elif r < 0.94:
            f = _ipv4_frame(
                bytes([10, 0, 1, 99]), SERVER_IP, 17, 5004, 5004, rng.randrange(1000, 1301)
            )
        elif r < 0.97:
            f = _arp_frame()
        else:
            # Traffic between clients that the server port also sees (only_to drops it).
            f = _ipv4_frame(c, bytes([10, 0, 1, 200]), 17, 6000, 6000, 200)
        out.append((t, f, iface))
    return out


def _pad4(b: bytes) -> bytes:
    return b + bytes(-len(b) % 4)


def _block(btype: int, body: bytes) -> bytes:
    body = _pad4(body)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def _idb(tsresol: int) -> bytes:
    opt = struct.pack("<HHB", 9, 1, tsresol) + bytes(3) + struct.pack("<HH", 0, 0)
    return _block(1, struct.pack("<HHI", 1, 0, SNAPLEN) + opt)


def write_pcapng(path: Path, frames: list[tuple[int, bytes, int]]) -> None:
    """SHB, two IDBs (if 0: microseconds, if 1: nanoseconds), EPBs and SPBs."""
    shb = _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    with path.open("wb") as f:
        f.write(shb + _idb(6) + _idb(9))
        for i, (t, frame, iface) in enumerate(frames):
            cap = frame[:SNAPLEN]
            if i % 97 == 50 and iface == 0:
                # A Simple Packet Block: no timestamp, interface 0.
                f.write(_block(3, struct.pack("<I", len(frame)) + cap))
                continue
            ts = t // 1000 if iface == 0 else t
            body = struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(cap), len(frame))
            f.write(_block(6, body + cap))


def pcap_header(
    nanos: bool = False, big_endian: bool = False, snaplen: int = SNAPLEN, linktype: int = 1
) -> bytes:
    e = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
    return struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)


def pcap_record(
    t_ns: int, frame: bytes, nanos: bool = False, big_endian: bool = False, snaplen: int = SNAPLEN
) -> bytes:
    e = ">" if big_endian else "<"
    frac = t_ns % 1_000_000_000 if nanos else (t_ns % 1_000_000_000) // 1000
    cap = frame[:snaplen]
    return struct.pack(e + "IIII", t_ns // 1_000_000_000, frac, len(cap), len(frame)) + cap


def write_pcap(path: Path, frames: list[tuple[int, bytes, int]]) -> None:
    """Classic pcap, little-endian, microsecond timestamps."""
    with path.open("wb") as f:
        f.write(pcap_header())
        for t, frame, _ in frames:
            f.write(pcap_record(t, frame))


def big_records(gigabytes: float) -> Iterator[bytes]:
    """Records of a large pcap: full-size UDP frames 12.3 us apart (1 Gb/s)."""
    frame = _ipv4_frame(bytes([10, 0, 1, 1]), SERVER_IP, 17, 5000, 5000, 1514)
    total = int(gigabytes * 1e9)
    t = 1_700_000_000_000_000_000
    written = 24
    while written < total:
        rec = pcap_record(t, frame, snaplen=65535)
        written += len(rec)
        t += 12_304
        yield rec


def write_big(path: Path, gigabytes: float) -> None:
    with path.open("wb", buffering=1 << 20) as f:
        f.write(pcap_header(snaplen=65535))
        for rec in big_records(gigabytes):
            f.write(rec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "examples" / "captures"
    )
    ap.add_argument("--big", type=Path, help="write a large pcap here instead")
    ap.add_argument("--gigabytes", type=float, default=1.0)
    args = ap.parse_args()
    if args.big:
        write_big(args.big, args.gigabytes)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    frames = office_frames()
    write_pcapng(args.out / "office.pcapng", frames)
    write_pcap(args.out / "office.pcap", frames)


if __name__ == "__main__":
    main()
