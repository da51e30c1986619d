"""Write ``many-flows.pcap``: UDP from 256 flows into one 10 GbE server, for
``holdoff tune --driver linux-ixgbe`` (docs/howto-10g.md).

What the file holds (all of it follows from the constants below; no random
numbers):

- 4 clients, 10.0.1.1 to 10.0.1.4, each sending from 64 source ports
  (40000 to 40063) to 10.0.0.2 port 9000: 256 UDP flows. An RSS hash over the
  addresses only (ixgbe's default for UDP, ``rx-flow-hash udp4 sd``) sees 4
  flows; over addresses and ports (``sdfn``) it sees 256;
- bursts of 32 frames back to back at 10 Gb/s (a frame of L bytes without
  FCS takes (L + 4 FCS + 20 preamble and gap) x 0.8 ns: 67.2 ns for 60
  bytes), a burst every 20 us: 1.6 million frames/s on average, 448 bursts,
  14 336 frames over 8.96 ms;
- frame lengths (without FCS) cycle 60, 60, 60, 60, 142 bytes; consecutive
  frames go to flows 37 apart (flow i*37 mod 256), so every burst mixes
  clients and ports;
- classic pcap, nanosecond timestamps (magic 0xA1B23C4D), link type Ethernet,
  snaplen 42: each record keeps the Ethernet, IPv4 and UDP headers (what RSS
  and the replay read) and the original length, so the file stays under 1 MB.

Run ``python examples/captures/make_many_flows.py`` to write the file next to
this script (the bytes are the same every time).
"""

from __future__ import annotations

import struct
from pathlib import Path

SNAPLEN = 42
CLIENTS = 4
PORTS_PER_CLIENT = 64
FLOWS = CLIENTS * PORTS_PER_CLIENT
BURST = 32
BURSTS = 448
BURST_GAP_NS = 20_000
#: Bytes on the wire besides the frame: FCS 4, preamble and SFD 8, gap 12.
WIRE_EXTRA = 24
SIZES = (60, 60, 60, 60, 142)
STEP = 37
EPOCH_S = 1_700_000_000


def frame(length: int, flow: int) -> bytes:
    """The first ``SNAPLEN`` bytes of an Ethernet/IPv4/UDP frame of ``length`` bytes."""
    client, port = divmod(flow, PORTS_PER_CLIENT)
    src = bytes([10, 0, 1, 1 + client])
    dst = bytes([10, 0, 0, 2])
    eth = bytes.fromhex("001b21aabb02") + bytes.fromhex("001b21cc0000")[:5] + bytes([client])
    ip_len = length - 14
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 17, 0, src, dst)
    udp = struct.pack(">HHHH", 40_000 + port, 9000, ip_len - 20, 0)
    return (eth + b"\x08\x00" + ip + udp)[:SNAPLEN]


def records() -> list[tuple[int, bytes, int]]:
    """(timestamp [ns], captured bytes, original length) of every frame."""
    out = []
    base = EPOCH_S * 1_000_000_000
    i = 0
    for b in range(BURSTS):
        # Tenths of ns: at 10 Gb/s a byte takes 0.8 ns = 8 tenths.
        t10 = (base + b * BURST_GAP_NS) * 10
        for _ in range(BURST):
            length = SIZES[i % len(SIZES)]
            flow = (i * STEP) % FLOWS
            out.append((t10 // 10, frame(length, flow), length))
            t10 += (length + WIRE_EXTRA) * 8
            i += 1
    return out


def write(path: Path) -> int:
    """Write the capture; return its frame count."""
    recs = records()
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, SNAPLEN, 1))
        for ts, data, orig in recs:
            sec, ns = divmod(ts, 1_000_000_000)
            f.write(struct.pack("<IIII", sec, ns, len(data), orig) + data)
    return len(recs)


if __name__ == "__main__":
    target = Path(__file__).with_name("many-flows.pcap")
    n = write(target)
    print(f"wrote {target} ({n} frames, {target.stat().st_size} bytes)")
