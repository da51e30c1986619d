"""What a capture file holds: its span, frames, bytes and mean rate, read from the file.

:func:`scan` streams a pcap or pcapng file once, reading record headers and
seeking past payloads (only the first :data:`PREFIX_BYTES` of a record are
read, for its addresses), so memory does not grow with the file: a 1 GB
capture is never read into memory.

It reads what the core's replay reads (``crates/holdoff-core/src/apps/
replay.rs``) and counts as it counts:

- pcap: magic ``a1b2c3d4`` (microsecond) or ``a1b23c4d`` (nanosecond), in
  either byte order, version 2.x, link type Ethernet (1); a record longer than
  the snaplen is an error;
- pcapng: Section Header, Interface Description (``if_tsresol``: a power of
  10 or, high bit set, of 2; ``if_tsoffset`` in seconds), Enhanced Packet and
  Simple Packet Blocks (a Simple Packet Block has no timestamp: it takes the
  previous record's); other blocks are skipped;
- a frame's length is its original length (or the captured length, if
  larger); on the model's wire it is padded to 60 bytes and carries the
  4-byte FCS (``wire_bytes``), frames longer than MTU + 18 are dropped by the
  receiver, except a TCP segment whose captured bytes hold its whole TCP
  header: an offload aggregate (TSO, GRO) of a capture taken on a host, cut
  into the wire segments it stands for (its headers plus at most MSS = MTU +
  14 - headers bytes each; ``cut_records``, ``cut_segments``), as the core's
  replay cuts it;
- a timestamp earlier than the previous record's by up to
  :data:`REORDER_TOLERANCE_NS` is read as the previous record's time
  (``reordered``); by more it is an error;
- ``only_to``: only frames to one IPv4/IPv6 address or MAC address count,
  as the replay's ``only_to`` keeps them;
- directions (:class:`Directions`): per MAC address, the unicast frames it
  sent and received (the first :data:`MAX_MACS` addresses seen), so that a
  capture taken on a host (both its received and its sent frames) is told
  from one of the frames a host received. A replay sends every frame it
  keeps *into* the simulated host, so the host's own transmissions would
  otherwise be simulated as received traffic.

Simplifies: the file is read as it is at the time of the scan; a capture
that changes afterwards is the replay's to read.

Units: times [ns], sizes [bytes], rates [bit/s].
Sources: draft-ietf-opsawg-pcap (file and record headers), draft-ietf-
opsawg-pcapng (SHB, IDB and its ``if_tsresol``/``if_tsoffset`` options,
EPB, SPB).
"""

from __future__ import annotations

import ipaddress
import math
import os
import stat
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

#: Bytes of a record's payload read (addresses for the destination filter
#: and the directions, the TCP header's length: Ethernet, two VLAN tags, an
#: IPv4 header with options and the TCP data offset fit).
PREFIX_BYTES = 128
#: How far a record may be stamped before the previous one and still be read
#: [ns] (the core's ``REORDER_TOLERANCE_NS``): a multi-queue capture stamps
#: frames when their CPUs hand them over, slightly out of order; such a
#: record is read at the previous record's time. ASSUMPTION, see the core.
REORDER_TOLERANCE_NS = 10_000_000
#: Records between two calls of a scan's progress callback.
PROGRESS_RECORDS = 1 << 16
#: Distinct MAC addresses whose frames the direction count follows; frames
#: of addresses seen after these are not counted (memory stays bounded).
MAX_MACS = 4096
#: A host that sent at least this share of the unicast frames it took part
#: in (and received the rest) makes the capture two-way: its sent frames
#: are not traffic it received.
TWO_WAY_MIN_SHARE = 0.01
#: The share of a capture's unicast frames one address must receive for the
#: capture to be one host's traffic; below it the tune asks which host.
ONE_RECEIVER_SHARE = 0.9
#: Fewer unicast frames than this are not judged for several receivers.
MANY_RECEIVERS_MIN_FRAMES = 100
#: Longest record accepted [bytes] (the core's ``MAX_RECORD_BYTES``).
MAX_RECORD_BYTES = 16 << 20
#: The standard Ethernet MTU [bytes]; a frame over MTU + 18 is dropped.
DEFAULT_MTU = 1500

_PCAP_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", False),
    b"\xa1\xb2\xc3\xd4": (">", False),
    b"\x4d\x3c\xb2\xa1": ("<", True),
    b"\xa1\xb2\x3c\x4d": (">", True),
}
_SHB = 0x0A0D0D0A
_IDB, _SPB, _EPB = 1, 3, 6
_BYTE_ORDER_MAGIC = 0x1A2B3C4D
_LINKTYPE_ETHERNET = 1
#: Link types that are not Ethernet but common, with what to do instead.
_LINKTYPE_HINTS = {
    113: "a Linux cooked capture (LINKTYPE_LINUX_SLL, what `tcpdump -i any` writes); "
    "capture on the interface itself, e.g. `tcpdump -i eth0 -w FILE`, which records "
    "Ethernet frames",
    276: "a Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, what `tcpdump -i any` writes); "
    "capture on the interface itself, e.g. `tcpdump -i eth0 -w FILE`, which records "
    "Ethernet frames",
    101: "raw IP without link-layer headers (LINKTYPE_RAW); capture on an Ethernet "
    "interface, e.g. `tcpdump -i eth0 -w FILE`",
    0: "BSD loopback (LINKTYPE_NULL): loopback traffic never crosses a NIC",
}


def _linktype_error(linktype: int) -> str:
    hint = _LINKTYPE_HINTS.get(linktype)
    what = f"unsupported link type {linktype} (only Ethernet, LINKTYPE_ETHERNET = 1, is replayed)"
    return f"{what}: this is {hint}" if hint else what


class CaptureFileError(ValueError):
    """A capture that cannot be read: the file, the byte offset and what was wrong."""

    def __init__(self, path: str, offset: int, what: str) -> None:
        super().__init__(f"capture {path}: at byte {offset}: {what}")
        self.path = path
        self.offset = offset
        self.what = what


@dataclass(frozen=True)
class Endpoint:
    """One MAC address's unicast frames in a capture."""

    mac: str
    #: Unicast frames addressed to it, and sent by it.
    received: int
    sent: int
    #: The one IP address every frame to it was addressed to (None if not one).
    ip: str | None

    @property
    def name(self) -> str:
        return f"{self.mac} ({self.ip})" if self.ip else self.mac


@dataclass(frozen=True)
class Directions:
    """Who sent and received a capture's unicast frames (the whole file)."""

    unicast_frames: int
    #: Addresses that both sent and received, most frames first (at most 4).
    hosts: tuple[Endpoint, ...]
    #: More than :data:`MAX_MACS` addresses: frames of the later ones are not counted.
    macs_over_limit: bool = False
    #: The addresses that received the most unicast frames, most first (at most 4).
    receivers: tuple[Endpoint, ...] = ()

    @property
    def main_receiver_share(self) -> float:
        """The share of the unicast frames the busiest receiver got (1 without any)."""
        if not self.receivers or self.unicast_frames == 0:
            return 1.0
        return self.receivers[0].received / self.unicast_frames

    @property
    def many_receivers(self) -> bool:
        """No one address received :data:`ONE_RECEIVER_SHARE` of the unicast
        frames: the capture holds several hosts' traffic (a switch or router
        port), which a replay would send into one."""
        return self.unicast_frames >= MANY_RECEIVERS_MIN_FRAMES and (
            self.main_receiver_share < ONE_RECEIVER_SHARE
        )

    @property
    def two_way(self) -> bool:
        """The capture holds a host's sent frames beside those it received:
        the busiest address that does both sent at least
        :data:`TWO_WAY_MIN_SHARE` of its frames and received at least as large a share."""
        if not self.hosts:
            return False
        h = self.hosts[0]
        return min(h.sent, h.received) >= TWO_WAY_MIN_SHARE * (h.sent + h.received)

    @property
    def capture_host(self) -> Endpoint | None:
        """The host the capture was most likely taken on, whose received
        frames ``only_to`` should keep: the one address that took part in
        more frames than any other (a server's capture: the server, not one
        of its clients); with two tied at the top, the second of them in
        address order. None without such hosts."""
        if not self.hosts:
            return None
        if len(self.hosts) > 1:
            a, b = self.hosts[0], self.hosts[1]
            if a.received + a.sent == b.received + b.sent:
                return b
        return self.hosts[0]

    def text(self) -> str:
        """Each such host's received and sent frames, in one sentence."""
        return "; ".join(
            f"{h.name} received {h.received:,} and sent {h.sent:,}" for h in self.hosts
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "two_way": self.two_way,
            "unicast_frames": self.unicast_frames,
            "hosts": [
                {"mac": h.mac, "ip": h.ip, "received": h.received, "sent": h.sent}
                for h in self.hosts
            ],
            "macs_over_limit": self.macs_over_limit,
            "receivers": [
                {"mac": h.mac, "ip": h.ip, "received": h.received} for h in self.receivers
            ],
            "main_receiver_share": self.main_receiver_share,
        }


def directions_of(
    received: Mapping[bytes, int],
    sent: Mapping[bytes, int],
    ip_to: Mapping[bytes, bytes | None],
    unicast: int,
    over_limit: bool = False,
) -> Directions:
    """:class:`Directions` from per-address counts (pure: the scan's tallies)."""

    def endpoint(m: bytes) -> Endpoint:
        ip = ip_to.get(m)
        return Endpoint(
            ":".join(f"{b:02x}" for b in m),
            received.get(m, 0),
            sent.get(m, 0),
            str(ipaddress.ip_address(ip)) if ip else None,
        )

    both = [m for m in received if sent.get(m, 0) > 0]
    both.sort(key=lambda m: (-(received[m] + sent[m]), m))
    top = sorted(received, key=lambda m: (-received[m], m))[:4]
    return Directions(
        unicast,
        tuple(endpoint(m) for m in both[:4]),
        over_limit,
        tuple(endpoint(m) for m in top),
    )


@dataclass(frozen=True)
class CaptureInfo:
    """What one pass over a capture found (after ``only_to``, if given)."""

    path: str
    #: "pcap" or "pcapng".
    format: str
    frames: int
    #: Sum of the frames' original lengths (without FCS) [bytes].
    orig_bytes: int
    #: Sum of the captured lengths (what the file holds) [bytes].
    captured_bytes: int
    #: Sum of the frames on the model's wire: padded to 60, plus FCS [bytes].
    wire_bytes: int
    #: Frames (and their wire bytes) longer than MTU + 18: dropped by the receiver.
    over_mtu_frames: int
    over_mtu_wire_bytes: int
    first_ts_ns: int | None
    last_ts_ns: int | None
    #: Frames not counted because they are not to ``only_to``.
    skipped: int
    mtu: int = DEFAULT_MTU
    #: Timestamp of the file's first record, kept or not (the replay's time 0) [ns].
    file_first_ts_ns: int | None = None
    #: Frames and wire bytes within ``window_ns`` (all of them without a window).
    window_frames: int = 0
    window_wire_bytes: int = 0
    #: Who sent and received the file's unicast frames (before ``only_to``).
    directions: Directions | None = None
    #: The ``only_to`` filter the counts are after, as given.
    only_to: str | None = None
    #: TCP records over the MTU cut into wire segments (counted in ``frames``).
    cut_records: int = 0
    cut_segments: int = 0
    #: Records stamped before the record ahead of them (read at its time),
    #: and the largest step back [ns].
    reordered: int = 0
    max_step_back_ns: int = 0

    @property
    def span_ns(self) -> int:
        """First to last frame [ns] (0 for fewer than two frames)."""
        if self.first_ts_ns is None or self.last_ts_ns is None:
            return 0
        return self.last_ts_ns - self.first_ts_ns

    @property
    def mean_rate_bps(self) -> float:
        """Wire bytes over the span [bit/s], as the replay's ``offered_bps`` (0 without a span)."""
        return self.wire_bytes * 8e9 / self.span_ns if self.span_ns > 0 else 0.0

    @property
    def deliverable_rate_bps(self) -> float:
        """The mean rate of the frames within the MTU (those a receiver can take) [bit/s]."""
        if self.span_ns <= 0:
            return 0.0
        return (self.wire_bytes - self.over_mtu_wire_bytes) * 8e9 / self.span_ns

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "format": self.format,
            "frames": self.frames,
            "orig_bytes": self.orig_bytes,
            "captured_bytes": self.captured_bytes,
            "wire_bytes": self.wire_bytes,
            "over_mtu_frames": self.over_mtu_frames,
            "span_ns": self.span_ns,
            "mean_rate_bps": self.mean_rate_bps,
            "deliverable_rate_bps": self.deliverable_rate_bps,
            "skipped": self.skipped,
            "only_to": self.only_to,
            "mtu": self.mtu,
            "cut_records": self.cut_records,
            "cut_segments": self.cut_segments,
            "reordered": self.reordered,
            "max_step_back_ns": self.max_step_back_ns,
            "directions": self.directions.to_dict() if self.directions else None,
        }


def parse_only_to(text: str) -> tuple[str, bytes]:
    """``("ip", packed address)`` or ``("mac", 6 bytes)``, as the replay's ``only_to``."""
    try:
        return "ip", ipaddress.ip_address(text).packed
    except ValueError:
        pass
    parts = text.replace("-", ":").split(":")
    if len(parts) == 6 and all(len(p) == 2 for p in parts):
        try:
            return "mac", bytes(int(p, 16) for p in parts)
        except ValueError:
            pass
    raise ValueError(f"only_to {text!r} is neither an IP address nor a MAC address")


def _dst(data: bytes) -> tuple[bytes | None, bytes | None]:
    """The destination MAC and IP address of an Ethernet frame's first bytes."""
    if len(data) < 14:
        return None, None
    return data[:6], _dst_ip(data)


def _l3(data: bytes) -> tuple[int, int]:
    """(EtherType, offset of the network header) past any VLAN tags (802.1Q, 802.1ad)."""
    et = int.from_bytes(data[12:14], "big")
    l3 = 14
    while et in (0x8100, 0x88A8) and len(data) >= l3 + 4:
        et = int.from_bytes(data[l3 + 2 : l3 + 4], "big")
        l3 += 4
    return et, l3


def _dst_ip(data: bytes) -> bytes | None:
    """The destination IP address of an Ethernet frame's first bytes (None if not IP)."""
    et, l3 = _l3(data)
    ip = data[l3:]
    if et == 0x0800 and len(ip) >= 20 and ip[0] >> 4 == 4:
        return ip[16:20]
    if et == 0x86DD and len(ip) >= 40 and ip[0] >> 4 == 6:
        return ip[24:40]
    return None


def tcp_headers(data: bytes) -> int | None:
    """A TCP segment's header bytes (Ethernet with VLAN tags to the end of the
    TCP header), if the frame's first bytes hold them (the core's
    ``CapturedFrame::tcp_headers``); None for other frames."""
    if len(data) < 14:
        return None
    et, l3 = _l3(data)
    ip = data[l3:]
    if et == 0x0800 and len(ip) >= 20 and ip[0] >> 4 == 4:
        frag = int.from_bytes(ip[6:8], "big") & 0x1FFF != 0
        proto, l4 = (0 if frag else ip[9]), (ip[0] & 0x0F) * 4
    elif et == 0x86DD and len(ip) >= 40 and ip[0] >> 4 == 6:
        proto, l4 = ip[6], 40
    else:
        return None
    if proto != 6 or len(ip) <= l4 + 12:
        return None
    doff = (ip[l4 + 12] >> 4) * 4
    return l3 + l4 + doff if doff >= 20 else None


def offload_cut(length: int, headers: int | None, max_frame: int) -> list[int] | None:
    """The wire segments' lengths (without FCS) of an offload aggregate of
    ``length`` bytes, or None when it is not one (the core's ``offload_cut``):
    a TCP frame longer than ``max_frame`` (MTU + 18) whose headers are known."""
    if headers is None or max(length, 60) + 4 <= max_frame or headers >= length:
        return None
    mss = max_frame - 4 - headers
    if mss <= 0:
        return None
    payload = length - headers
    full, rest = divmod(payload, mss)
    return [headers + mss] * full + ([headers + rest] if rest else [])


class _Scan:
    """Running counts of one pass."""

    def __init__(
        self,
        path: str,
        mtu: int,
        only_to: tuple[str, bytes] | None,
        window: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self.window = window
        self.file_first: int | None = None
        self.win_frames = self.win_bytes = 0
        self.max_frame = mtu + 18
        self.mtu = mtu
        self.only_to = only_to
        self.frames = self.orig = self.captured = self.wire = 0
        self.over = self.over_bytes = self.skipped = 0
        self.cut_records = self.cut_segments = 0
        self.reordered = self.max_step_back = 0
        #: Called with (byte offset, file size) every PROGRESS_RECORDS records.
        self.progress: Callable[[int, int], None] | None = None
        self.size = 0
        self.records = 0
        self.first: int | None = None
        self.last: int | None = None
        self.prev_ts: int | None = None
        self.only_to_text: str | None = None
        # Directions: unicast frames per destination and source MAC, and the
        # one destination IP of the frames to each MAC (None once it varies);
        # a frame from an address to itself (blank test addresses) is not
        # counted. The core counts the same (apps::replay::directions).
        self.received: dict[bytes, int] = {}
        self.sent: dict[bytes, int] = {}
        self.ip_to: dict[bytes, bytes | None] = {}
        self.unicast = 0
        self.macs_over = False

    def err(self, offset: int, what: str) -> CaptureFileError:
        return CaptureFileError(self.path, offset, what)

    def frame(self, at: int, ts: int, orig: int, caplen: int, prefix: bytes | None) -> None:
        self.records += 1
        if self.progress is not None and self.records % PROGRESS_RECORDS == 0:
            self.progress(at, self.size)
        if self.prev_ts is not None and ts < self.prev_ts:
            back = self.prev_ts - ts
            if back > REORDER_TOLERANCE_NS:
                raise self.err(
                    at,
                    f"timestamp goes backwards: {ts} ns is {back} ns earlier than the previous "
                    f"record's {self.prev_ts} ns (more than the "
                    f"{REORDER_TOLERANCE_NS // 1_000_000} ms a multi-queue capture reorders; "
                    "files joined out of order?)",
                )
            # A multi-queue capture's reordering: replayed at the previous time.
            self.reordered += 1
            self.max_step_back = max(self.max_step_back, back)
            ts = self.prev_ts
        self.prev_ts = ts
        if self.file_first is None:
            self.file_first = ts
        if (
            prefix is not None
            and len(prefix) >= 12
            and not prefix[0] & 1
            and prefix[:6] != prefix[6:12]
        ):
            self._direction(prefix)
        if self.only_to is not None:
            mac, ip = _dst(prefix or b"")
            kind, want = self.only_to
            if (mac if kind == "mac" else ip) != want:
                self.skipped += 1
                return
        length = max(orig, caplen)
        self.captured += caplen
        cut = None
        if max(length, 60) + 4 > self.max_frame and prefix is not None:
            cut = offload_cut(length, tcp_headers(prefix[:caplen]), self.max_frame)
        if cut is not None:
            self.cut_records += 1
            self.cut_segments += len(cut)
        frames = 0
        wire_sum = 0
        for seg in cut or [length]:
            wire = max(seg, 60) + 4
            frames += 1
            wire_sum += wire
            self.orig += seg
            if wire > self.max_frame:
                self.over += 1
                self.over_bytes += wire
        self.frames += frames
        self.wire += wire_sum
        if self.first is None:
            self.first = ts
        self.last = ts
        rel = ts - self.file_first
        if self.window is None or self.window[0] <= rel < self.window[1]:
            self.win_frames += frames
            self.win_bytes += wire_sum

    def _direction(self, prefix: bytes) -> None:
        """Count a unicast frame for its destination and source address."""
        self.unicast += 1
        dst, src = prefix[:6], prefix[6:12]
        got = self.received.get(dst)
        if got is not None:
            self.received[dst] = got + 1
            known = self.ip_to[dst]
            if known is not None:
                # Untagged IPv4 (the common frame) without the general parse.
                ip: bytes | None
                if prefix[12:14] == b"\x08\x00" and len(prefix) >= 34 and prefix[14] >> 4 == 4:
                    ip = prefix[30:34]
                else:
                    ip = _dst_ip(prefix) if len(prefix) >= 14 else None
                if ip != known:
                    self.ip_to[dst] = None
        elif len(self.received) < MAX_MACS:
            self.received[dst] = 1
            self.ip_to[dst] = _dst_ip(prefix) if len(prefix) >= 14 else None
        else:
            self.macs_over = True
        got = self.sent.get(src)
        if got is not None:
            self.sent[src] = got + 1
        elif len(self.sent) < MAX_MACS:
            self.sent[src] = 1
        else:
            self.macs_over = True

    def info(self, fmt: str) -> CaptureInfo:
        return CaptureInfo(
            self.path,
            fmt,
            self.frames,
            self.orig,
            self.captured,
            self.wire,
            self.over,
            self.over_bytes,
            self.first,
            self.last,
            self.skipped,
            self.mtu,
            self.file_first,
            self.win_frames,
            self.win_bytes,
            directions_of(self.received, self.sent, self.ip_to, self.unicast, self.macs_over),
            self.only_to_text,
            self.cut_records,
            self.cut_segments,
            self.reordered,
            self.max_step_back,
        )


def scan(
    path: str | os.PathLike[str],
    *,
    only_to: str | None = None,
    mtu: int = DEFAULT_MTU,
    window_ns: tuple[int, int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CaptureInfo:
    """Read ``path``'s record headers once and count (see the module doc).

    ``window_ns``: also count the frames from ``start`` (inclusive) to ``end``
    (exclusive), capture time after the file's first record [ns].
    ``progress``: called with (bytes read, file size) every
    :data:`PROGRESS_RECORDS` records (a 30 s capture of a busy port holds
    tens of millions: its scan takes a minute).

    Raises :class:`CaptureFileError` (naming the file and byte offset) for a
    file that is missing, not a regular file, empty, truncated, or not a pcap
    or pcapng capture of Ethernet frames.
    """
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as err:
        raise CaptureFileError(name, 0, f"cannot open: {err.strerror or err}") from err
    if stat.S_ISDIR(st.st_mode):
        raise CaptureFileError(name, 0, "is a directory, not a pcap or pcapng file")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or special file"
        raise CaptureFileError(name, 0, f"is {kind}, not a regular pcap or pcapng file")
    if st.st_size == 0:
        raise CaptureFileError(name, 0, "empty file (0 bytes): not a pcap or pcapng file")
    filt = None
    if only_to is not None:
        try:
            filt = parse_only_to(only_to)
        except ValueError as err:
            raise CaptureFileError(name, 0, str(err)) from err
    counts = _Scan(name, mtu, filt, window_ns)
    counts.only_to_text = only_to
    counts.progress, counts.size = progress, st.st_size
    try:
        with open(name, "rb") as f:
            magic = f.read(4)
            if magic in _PCAP_MAGIC:
                _scan_pcap(f, st.st_size, magic, counts)
                return counts.info("pcap")
            if len(magic) == 4 and struct.unpack("<I", magic)[0] == _SHB:
                _scan_pcapng(f, st.st_size, counts)
                return counts.info("pcapng")
    except OSError as err:
        raise CaptureFileError(name, 0, f"read error: {err.strerror or err}") from err
    if len(magic) < 4:
        raise CaptureFileError(
            name, 0, f"truncated file header ({len(magic)} bytes): not a pcap or pcapng header"
        )
    raise CaptureFileError(
        name,
        0,
        f"unknown magic number {magic.hex()}: not pcap (a1b2c3d4, a1b23c4d, either byte "
        "order) nor pcapng (0a0d0d0a)",
    )


def _read(f: BinaryIO, n: int, at: int, size: int, what: str, counts: _Scan) -> bytes:
    data = f.read(n)
    if len(data) < n:
        raise counts.err(
            at, f"truncated {what} ({len(data)} of {n} bytes before the end of the file)"
        )
    return data


def _scan_pcap(f: BinaryIO, size: int, magic: bytes, counts: _Scan) -> None:
    order, nanos = _PCAP_MAGIC[magic]
    hdr = f.read(20)
    if len(hdr) < 20:
        raise counts.err(
            0,
            f"truncated file header ({4 + len(hdr)} bytes): not a complete pcap or pcapng header",
        )
    major, minor, _zone, _sigfigs, snaplen, linktype = struct.unpack(order + "HHiIII", hdr)
    if major != 2:
        raise counts.err(4, f"pcap version {major}.{minor}; only 2.x is read")
    if linktype & 0xFFFF != _LINKTYPE_ETHERNET:
        raise counts.err(20, _linktype_error(linktype & 0xFFFF))
    rec = struct.Struct(order + "IIII")
    pos = 24
    while pos < size:
        head = _read(f, 16, pos, size, "record header", counts)
        sec, frac, caplen, orig = rec.unpack(head)
        if snaplen > 0 and caplen > snaplen:
            raise counts.err(pos, f"record length {caplen} is over the snaplen {snaplen}")
        if 16 + caplen > size - pos:
            raise counts.err(
                pos,
                f"record length {caplen} runs past the end of the file "
                f"({size - pos - 16} bytes left after the header)",
            )
        if 16 + caplen > MAX_RECORD_BYTES:
            raise counts.err(pos, f"record length {caplen} is over the largest accepted")
        ts = sec * 1_000_000_000 + (frac if nanos else frac * 1000)
        prefix = f.read(min(caplen, PREFIX_BYTES))
        f.seek(caplen - len(prefix), os.SEEK_CUR)
        counts.frame(pos, ts, orig, caplen, prefix)
        pos += 16 + caplen


def _ts_units_per_s(tsresol: int) -> int | None:
    e = tsresol & 0x7F
    if tsresol & 0x80:
        return 1 << e if e < 64 else None
    v = 10**e
    return v if v < 2**64 else None


def _scan_pcapng(f: BinaryIO, size: int, counts: _Scan) -> None:
    pos = 0
    f.seek(0)
    order = "<"
    #: Per interface of the current section: (units per second, offset [s]).
    ifaces: list[tuple[int, int, int]] = []
    while pos < size:
        head = _read(f, 12, pos, size, "block header", counts)
        btype = struct.unpack("<I", head[:4])[0]
        if btype == _SHB:
            bom = head[8:12]
            if bom == struct.pack("<I", _BYTE_ORDER_MAGIC):
                order = "<"
            elif bom == struct.pack(">I", _BYTE_ORDER_MAGIC):
                order = ">"
            else:
                raise counts.err(pos, f"section header with byte-order magic {bom.hex()}")
            ifaces = []
        else:
            btype = struct.unpack(order + "I", head[:4])[0]
        blen = struct.unpack(order + "I", head[4:8])[0]
        if blen < 12 or blen % 4:
            raise counts.err(pos, f"block length {blen} is not a multiple of 4 of at least 12")
        if blen > size - pos:
            raise counts.err(
                pos,
                f"block length {blen} runs past the end of the file ({size - pos} bytes left)",
            )
        if blen > MAX_RECORD_BYTES:
            raise counts.err(pos, f"block length {blen} is over the largest accepted")
        body_len = blen - 12
        if btype == _IDB:
            body = head[8:] + _read(f, body_len, pos + 12, size, "interface block", counts)
            ifaces.append(_idb(body, order, pos, counts, len(ifaces)))
        elif btype == _EPB:
            if body_len < 16:
                raise counts.err(pos, f"enhanced packet block of {blen} bytes is too short")
            more = _read(f, 16, pos + 12, size, "enhanced packet block", counts)
            if_id = struct.unpack(order + "I", head[8:])[0]
            hi, lo, caplen, orig = struct.unpack(order + "IIII", more)
            if if_id >= len(ifaces):
                raise counts.err(
                    pos,
                    f"packet on interface {if_id} but only {len(ifaces)} interface(s) "
                    "described before it",
                )
            units, offset_s, snaplen = ifaces[if_id]
            if snaplen > 0 and caplen > snaplen:
                raise counts.err(
                    pos,
                    f"record length {caplen} is over the snaplen {snaplen} of interface {if_id}",
                )
            if caplen > body_len - 20:
                raise counts.err(pos, f"captured length {caplen} is over the block's {blen} bytes")
            ts = ((hi << 32) | lo) * 1_000_000_000 // units + offset_s * 1_000_000_000
            if not 0 <= ts < 2**64 - 1:
                raise counts.err(pos, f"timestamp out of range on interface {if_id}")
            counts.frame(pos, ts, orig, caplen, f.read(min(caplen, PREFIX_BYTES)))
        elif btype == _SPB:
            if not ifaces:
                raise counts.err(pos, "simple packet block before any interface description")
            orig = struct.unpack(order + "I", head[8:])[0]
            snaplen = ifaces[0][2]
            caplen = min(orig, snaplen) if snaplen > 0 else orig
            caplen = min(caplen, body_len - 4)
            prefix = f.read(min(caplen, PREFIX_BYTES))
            ts = counts.prev_ts if counts.prev_ts is not None else 0
            counts.frame(pos, ts, orig, caplen, prefix)
        f.seek(pos + blen, os.SEEK_SET)
        pos += blen


def _idb(body: bytes, order: str, pos: int, counts: _Scan, index: int) -> tuple[int, int, int]:
    """(timestamp units per second, if_tsoffset [s], snaplen) of an IDB's body."""
    if len(body) < 8:
        raise counts.err(pos, "interface description block is too short")
    linktype, _res, snaplen = struct.unpack(order + "HHI", body[:8])
    if linktype != _LINKTYPE_ETHERNET:
        raise counts.err(pos, f"interface {index}: {_linktype_error(linktype)}")
    units, offset_s = 1_000_000, 0
    i = 8
    opts = body[: len(body) - 4]  # the trailing block length
    while i + 4 <= len(opts):
        code, olen = struct.unpack(order + "HH", opts[i : i + 4])
        value = opts[i + 4 : i + 4 + olen]
        if code == 0:
            break
        if code == 9 and olen >= 1:
            got = _ts_units_per_s(value[0])
            if got is None:
                raise counts.err(pos, f"if_tsresol {value[0]:#x} is out of range")
            units = got
        elif code == 14 and olen >= 8:
            offset_s = struct.unpack(order + "q", value[:8])[0]
        i += 4 + olen + (-olen % 4)
    return units, offset_s, snaplen


#: Simulated time after a capture's last frame, so its last frames are received [ms].
DRAIN_MS = 10


@dataclass(frozen=True)
class Coverage:
    """Which part of a capture a run simulates, and how that was chosen."""

    #: The whole file (after ``only_to``); ``window_*`` count the part simulated.
    info: CaptureInfo
    #: The replayed window, capture time after the file's first record [ns].
    start_ns: int
    end_ns: int
    #: The run's simulated time [ns].
    simulated_ns: int
    speed: float
    #: "the capture's whole span", "--span", "--duration-ms" or "duration_ms".
    chosen_by: str

    @property
    def share(self) -> float:
        """The share of the capture's span (first to last frame) inside the window (0..1)."""
        i = self.info
        if i.first_ts_ns is None or i.last_ts_ns is None or i.file_first_ts_ns is None:
            return 0.0
        first = i.first_ts_ns - i.file_first_ts_ns
        last = i.last_ts_ns - i.file_first_ts_ns
        if last <= first:
            return 1.0 if i.window_frames else 0.0
        covered = min(self.end_ns, last) - max(self.start_ns, first)
        return max(0.0, min(1.0, covered / (last - first)))

    @property
    def whole(self) -> bool:
        """Every frame of the capture is replayed."""
        return self.info.window_frames == self.info.frames

    @property
    def traffic_ns(self) -> float:
        """Simulated time the replayed frames span: the capture's span for the
        whole capture, else the window [ns] (the throughput's denominator)."""
        if self.whole:
            return self.info.span_ns / self.speed
        return (self.end_ns - self.start_ns) / self.speed

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.info.to_dict(),
            "window_ms": [self.start_ns / 1e6, min(self.end_ns, _rel_last(self.info)) / 1e6],
            "simulated_ns": self.simulated_ns,
            "frames_simulated": self.info.window_frames,
            "share_covered": self.share,
            "whole": self.whole,
            "chosen_by": self.chosen_by,
            "speed": self.speed,
        }

    def text(self) -> str:
        """One line for the terminal: the capture, then what is simulated."""
        i = self.info
        what = (
            "the whole capture"
            if self.whole
            else f"{pct(self.share)} of the capture ({self.chosen_by})"
        )
        kept = (
            f" to {i.only_to} ({i.skipped:,} others not replayed)" if i.only_to is not None else ""
        )
        return (
            f"capture {Path(i.path).name}: span {i.span_ns / 1e6:,.3f} ms, {i.frames:,} frames"
            f"{kept}, {i.orig_bytes:,} bytes; mean {i.mean_rate_bps / 1e6:,.2f} Mb/s. Simulated: "
            f"{what}, capture time {self.start_ns / 1e6:,.3f} to "
            f"{min(self.end_ns, _rel_last(i)) / 1e6:,.3f} ms ({i.window_frames:,} frames) in "
            f"{self.simulated_ns / 1e6:,.3f} ms of simulated time"
        )


#: Bytes each frame takes on an Ethernet wire beyond the frame itself:
#: preamble and start delimiter (8) and the minimum inter-frame gap (12)
#: (IEEE 802.3 clause 4.4.2).
WIRE_OVERHEAD_BYTES = 20


def wire_lag_ns(cov: Coverage, line_bps: float) -> float:
    """How far the replay of ``cov``'s frames must fall behind the capture by
    its last frame on a link of ``line_bps`` [ns] (0 if it keeps up on
    average): the time the frames take on the wire, with preamble and gap,
    less the span they were captured over. A replay sends no faster than
    the line, so a capture that needs more wire time than its span was not
    taken on a link of that speed."""
    i = cov.info
    frames, wire = (i.frames, i.wire_bytes) if cov.whole else (i.window_frames, i.window_wire_bytes)
    span = cov.traffic_ns
    if frames < 2 or line_bps <= 0:
        return 0.0
    need = (wire + WIRE_OVERHEAD_BYTES * frames) * 8e9 / line_bps
    # The last frame's own wire time is not inside the span (first to last start).
    need -= (wire / frames + WIRE_OVERHEAD_BYTES) * 8e9 / line_bps
    return max(0.0, need - span)


def pct(share: float) -> str:
    """A share as a percentage with digits enough to tell it from 0 and 100."""
    v = share * 100
    if 0 < v < 1:
        return f"{v:.2g} %"
    if 99 < v < 100:
        return f"{min(v, 99.9):.1f} %"
    return f"{v:.1f} %"


def _rel_last(i: CaptureInfo) -> int:
    if i.last_ts_ns is None or i.file_first_ts_ns is None:
        return 0
    return i.last_ts_ns - i.file_first_ts_ns


def plan(
    path: str | os.PathLike[str],
    *,
    speed: float = 1.0,
    only_to: str | None = None,
    span_ns: tuple[int, int] | None = None,
    duration_ns: int | None = None,
    mtu: int = DEFAULT_MTU,
    progress: Callable[[int, int], None] | None = None,
) -> Coverage:
    """What to simulate of a capture: the window ``span_ns`` (capture time
    after the first record), the first ``duration_ns`` of simulated time, or
    else the whole capture plus :data:`DRAIN_MS`. Raises
    :class:`CaptureFileError` for an unreadable file and ``ValueError`` for a
    window beyond the capture's end (the message says where it ends)."""
    if span_ns is not None:
        window: tuple[int, int] | None = span_ns
    elif duration_ns is not None:
        window = (0, int(duration_ns * speed))
    else:
        window = None
    info = scan(path, only_to=only_to, mtu=mtu, window_ns=window, progress=progress)
    last = _rel_last(info)
    if span_ns is not None:
        if span_ns[0] > last:
            raise ValueError(
                f"starts at {span_ns[0] / 1e6:g} ms, after the capture's last frame "
                f"({last / 1e6:,.3f} ms after its first record)"
            )
        if span_ns[1] > last + 1_000_000:
            raise ValueError(
                f"ends at {span_ns[1] / 1e6:g} ms, beyond the capture's last frame "
                f"({last / 1e6:,.3f} ms after its first record)"
            )
        return Coverage(
            info, span_ns[0], span_ns[1], int((span_ns[1] - span_ns[0]) / speed), speed, "--span"
        )
    if duration_ns is not None:
        assert window is not None
        return Coverage(info, 0, window[1], duration_ns, speed, "--duration-ms")
    simulated = (math.ceil(last / speed / 1e6) + DRAIN_MS) * 1_000_000
    return Coverage(info, 0, last + 1, simulated, speed, "the capture's whole span")


def replay_warnings(
    scenario: Mapping[str, Any],
    base_dir: str | os.PathLike[str] | None = None,
    *,
    reported: bool = False,
) -> list[str]:
    """Warnings for a scenario's replays, before it runs: a capture with no
    frames (or none left after ``only_to``), a ``duration_ms`` that ends
    before the capture (with the share covered and the value that covers
    it), a capture faster than its link, and one that holds a host's sent
    frames beside those it received, or several hosts' traffic, replayed
    without ``only_to``. Unreadable captures are left to the run, which
    names them.

    ``reported``: only what the run's own report does not say. The report
    (``scenario/report/replay_checks.rs``) carries every one of these as
    measured in the run, but not the ``duration_ms`` that covers a capture
    (the run reads only the part it simulates), so this keeps that one."""
    out: list[str] = []
    gens = scenario.get("generators") or []
    duration_ms = scenario.get("duration_ms")
    if not isinstance(gens, list) or not isinstance(duration_ms, int | float):
        return out
    for gi, gen in enumerate(gens):
        if not isinstance(gen, Mapping) or gen.get("pattern") != "replay":
            continue
        cap = gen.get("capture")
        if not isinstance(cap, str):
            continue
        path = Path(cap)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        speed = float(gen.get("speed") or 1.0)
        start_ns = int(gen.get("start_us") or 0) * 1000
        only_to = gen.get("only_to") if isinstance(gen.get("only_to"), str) else None
        end_ns = start_ns + int(duration_ms * 1e6 * speed)
        try:
            cov = Coverage(
                scan(path, only_to=only_to, window_ns=(start_ns, end_ns)),
                start_ns,
                end_ns,
                int(duration_ms * 1e6),
                speed,
                "duration_ms",
            )
        except (CaptureFileError, ValueError):
            continue
        name = f"generators[{gi}] ({gen.get('name', '')})"
        line = _link_bps(scenario, str(gen.get("name", "")))
        lag = wire_lag_ns(cov, line) if line else 0.0
        if reported:
            if cov.info.frames and cov.info.window_frames and cov.share < 1.0:
                out.append(_coverage_warning(name, path, duration_ms, speed, cov))
            continue
        if line and lag > max(LAG_WARN_NS, LAG_WARN_SHARE * cov.traffic_ns):
            out.append(
                f"{name}: the capture {path.name} needs more than its link's "
                f"{line / 1e6:,.0f} Mb/s: a replay sends no faster than the line, so it falls "
                f"{lag / 1e6:,.3f} ms behind the capture by its last frame and the frames "
                "arrive later than captured (it was not taken on a link of this speed)"
            )
        dirs = cov.info.directions
        if only_to is None and dirs is not None and not dirs.two_way and dirs.many_receivers:
            top = dirs.receivers[0]
            out.append(
                f"{name}: the capture {path.name} holds several hosts' traffic (the busiest "
                f"address, {top.name}, received {pct(dirs.main_receiver_share)} of its unicast "
                f'frames); every frame is replayed into the port. only_to = "{top.ip or top.mac}" '
                "keeps one host's"
            )
        if only_to is None and dirs is not None and dirs.two_way:
            pick = dirs.capture_host or dirs.hosts[0]
            out.append(
                f"{name}: the capture {path.name} holds frames both ways ({dirs.text()}); "
                "every frame is replayed into the port as received traffic, the hosts' sent "
                f'frames too. only_to = "{pick.ip or pick.mac}" keeps the frames that host '
                "received"
            )
        if cov.info.frames == 0 or cov.info.window_frames == 0:
            why = (
                f"none is to only_to = {only_to!r}"
                if cov.info.frames == 0 and only_to
                else "it has no frames"
                if cov.info.frames == 0
                else "none falls inside the simulated time"
            )
            out.append(f"{name}: the capture {path.name} replays no frames: {why}")
        elif cov.share < 1.0:
            out.append(_coverage_warning(name, path, duration_ms, speed, cov))
    return out


def _coverage_warning(
    name: str, path: Path, duration_ms: float, speed: float, cov: Coverage
) -> str:
    return (
        f"{name}: duration_ms = {duration_ms:g} ends before the capture {path.name}: "
        f"{pct(cov.share)} of its {cov.info.span_ns / 1e6:,.3f} ms span is "
        f"simulated ({cov.info.window_frames:,} of {cov.info.frames:,} frames); "
        f"duration_ms = {math.ceil(_rel_last(cov.info) / speed / 1e6) + DRAIN_MS} "
        "covers it all"
    )


#: A replay that must fall behind its capture by more than this by its last
#: frame is warned about [ns] (and by more than this share of the span);
#: the tune refuses the same (``holdoff.tune.workloads.LAG_REFUSED_NS``).
LAG_WARN_NS = 100_000
LAG_WARN_SHARE = 0.01


def parse_rate(text: Any) -> float | None:
    """A link rate [bit/s] as scenarios write it ("1G", "2.5G", "100M", "10k"
    or plain bit/s; the core's ``parse_rate``); None if it is not one."""
    t = str(text).strip()
    mult = {"g": 1e9, "m": 1e6, "k": 1e3}.get(t[-1:].lower(), 1.0)
    num = t[:-1] if mult != 1.0 else t
    try:
        v = float(num)
    except ValueError:
        return None
    return v * mult if v > 0 and num.replace(".", "", 1).isdigit() else None


def _link_bps(scenario: Mapping[str, Any], gen: str) -> float | None:
    """The rate of the link a generator sends on [bit/s] (the default 1G)."""
    for link in scenario.get("links") or []:
        if isinstance(link, Mapping) and gen in (link.get("a"), link.get("b")):
            return parse_rate(link.get("rate", "1G"))
    return None


def describe(info: CaptureInfo) -> str:
    """One line: span, frames, bytes and mean rate."""
    return (
        f"{Path(info.path).name}: {info.span_ns / 1e6:,.3f} ms, {info.frames:,} frames, "
        f"{info.orig_bytes:,} bytes ({info.captured_bytes:,} captured), mean "
        f"{info.mean_rate_bps / 1e6:,.2f} Mb/s"
    )


__all__ = [
    "DEFAULT_MTU",
    "MAX_RECORD_BYTES",
    "CaptureFileError",
    "CaptureInfo",
    "Directions",
    "Endpoint",
    "MAX_MACS",
    "ONE_RECEIVER_SHARE",
    "REORDER_TOLERANCE_NS",
    "TWO_WAY_MIN_SHARE",
    "directions_of",
    "DRAIN_MS",
    "Coverage",
    "describe",
    "plan",
    "replay_warnings",
    "offload_cut",
    "parse_only_to",
    "scan",
    "tcp_headers",
    "wire_lag_ns",
    "WIRE_OVERHEAD_BYTES",
]
