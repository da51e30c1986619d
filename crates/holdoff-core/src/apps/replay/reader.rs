//! Reading a capture file: pcap and pcapng records streamed one at a time,
//! and the header fields of each Ethernet frame the replay uses (addresses,
//! ports, DSCP, the RSS flow).
//!
//! Simplifies: only Ethernet link types; VLAN tags (802.1Q, 802.1ad) are
//! skipped; IPv6 extension headers are not followed (such a frame has no
//! ports); IPv4 fragments after the first carry no ports.
//!
//! Units: timestamps [ns], lengths [bytes].
//! Sources: pcap: draft-ietf-opsawg-pcap; pcapng: draft-ietf-opsawg-pcapng;
//! IPv4 header (RFC 791, DSCP field RFC 2474), IPv6 header (RFC 8200),
//! RSS hash: the Microsoft RSS specification.

use crate::nic::rss::{toeplitz, FiveTuple, MS_VERIFICATION_KEY};
use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{create_reader, Linktype, PcapBlockOwned, PcapError};
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Initial read buffer [bytes].
const BUFFER_BYTES: usize = 65_536;
/// Longest record accepted [bytes] (pcap's largest snaplen, 256 KiB, with room).
pub const MAX_RECORD_BYTES: usize = 16 << 20;

/// A capture that cannot be read: which file, where, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureError {
    pub path: String,
    /// Byte offset in the file of the record (or header) at fault.
    pub offset: u64,
    pub what: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "capture {}: at byte {}: {}",
            self.path, self.offset, self.what
        )
    }
}

/// One captured frame, as the generator needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapturedFrame {
    /// Capture timestamp [ns since the epoch of the capture clock].
    pub ts_ns: u64,
    /// Original length on the wire without FCS [bytes].
    pub orig_len: u32,
    pub tcp: bool,
    /// IP protocol number (6 TCP, 17 UDP, ...); 0 for non-IP frames and
    /// later fragments (hashed on their addresses only).
    pub proto: u8,
    /// RSS redirection-table index (low 7 bits of the Toeplitz hash with
    /// the specification's key), the flow id when the receiving port runs
    /// without the RSS model.
    pub flow: u16,
    pub dst_mac: [u8; 6],
    /// The source address; None when the record holds fewer than 12 bytes.
    pub src_mac: Option<[u8; 6]>,
    pub dst_ip: Option<IpAddr>,
    pub src_ip: Option<IpAddr>,
    /// UDP or TCP (source, destination) ports; None for other protocols,
    /// later fragments and truncated headers.
    pub ports: Option<(u16, u16)>,
    /// DSCP of the IP header (RFC 2474); None for non-IP frames.
    pub dscp: Option<u8>,
    /// A TCP segment's header bytes, Ethernet (with VLAN tags) to the end of
    /// the TCP header (its data offset), when the captured bytes hold them;
    /// None for other frames. What an offload aggregate is cut after.
    pub tcp_headers: Option<u32>,
}

impl CapturedFrame {
    /// The headers RSS hashes; None for a non-IP frame.
    pub fn tuple(&self) -> Option<FiveTuple> {
        let (sport, dport) = self.ports.unwrap_or((0, 0));
        Some(FiveTuple {
            src: self.src_ip?,
            dst: self.dst_ip?,
            proto: self.proto,
            sport,
            dport,
        })
    }

    /// Frame size on the model's wire: padded to 60, plus FCS [bytes].
    pub fn frame_bytes(&self) -> u32 {
        self.orig_len.max(60).saturating_add(4)
    }
}

/// An interface of a pcapng section.
#[derive(Clone, Copy, Debug)]
struct Iface {
    linktype: Linktype,
    snaplen: u32,
    /// Timestamp units per second (if_tsresol).
    units_per_s: u64,
    /// if_tsoffset [s].
    offset_s: i64,
}

enum Format {
    Legacy {
        nanos: bool,
        snaplen: u32,
        big_endian: bool,
        linktype: Linktype,
    },
    Ng {
        big_endian: bool,
        ifaces: Vec<Iface>,
    },
}

/// A streaming reader of one capture file.
pub struct CaptureReader {
    path: String,
    file_len: u64,
    rd: Box<dyn PcapReaderIterator + Send>,
    fmt: Format,
    /// Byte offset of the next record.
    pos: u64,
    last_ts: Option<u64>,
    /// Records stamped earlier than the one before them (within
    /// `REORDER_TOLERANCE_NS`), and the largest such step back [ns].
    pub reordered: u64,
    pub max_step_back_ns: u64,
}

/// How far a record may be stamped before the previous one and still be
/// read [ns]: captures of multi-queue NICs stamp each frame when its CPU
/// hands it to the capture socket, so frames of different queues can be
/// written slightly out of order. Such a record is replayed at the previous
/// record's time (back to back behind it). A larger step back (files
/// joined out of order, a clock stepped) is an error. 10 ms is an
/// ASSUMPTION: far above a softirq's scheduling delay, far below any gap a
/// joined file would show.
pub const REORDER_TOLERANCE_NS: u64 = 10_000_000;

/// Resolve a capture path: relative paths are relative to `base` (the
/// scenario file's directory) when given, else to the working directory.
pub fn resolve(capture: &str, base: Option<&Path>) -> PathBuf {
    let p = Path::new(capture);
    match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    }
}

fn u32_at(b: &[u8], at: usize, big_endian: bool) -> u32 {
    let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if big_endian {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

/// Units per second of an `if_tsresol` value (pcapng: high bit clear = a
/// power of 10, set = a power of 2); None if it does not fit in u64.
pub fn ts_units_per_s(tsresol: u8) -> Option<u64> {
    let e = (tsresol & 0x7f) as u32;
    if tsresol & 0x80 == 0 {
        10u64.checked_pow(e)
    } else {
        1u64.checked_shl(e).filter(|_| e < 64)
    }
}

impl CaptureReader {
    /// Open a capture and read its header(s).
    pub fn open(path: &Path) -> Result<CaptureReader, CaptureError> {
        let name = path.display().to_string();
        let err = |offset: u64, what: String| CaptureError {
            path: name.clone(),
            offset,
            what,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(0, format!("cannot open: {e}")))?;
        if meta.is_dir() {
            return Err(err(0, "is a directory, not a pcap or pcapng file".into()));
        }
        // Devices, FIFOs and sockets: never opened (a FIFO waits for a
        // writer, /dev/zero never ends). Captures are streamed: no size limit.
        if !meta.is_file() {
            let what = crate::input_file::check_regular(path, "capture", None)
                .err()
                .and_then(|m| m.rsplit_once(": ").map(|(_, w)| w.to_string()))
                .unwrap_or_else(|| "is not a regular file; give a regular file".into());
            return Err(err(
                0,
                what.replace("give a regular file", "a capture must be a regular file"),
            ));
        }
        if meta.len() == 0 {
            return Err(err(
                0,
                "empty file (0 bytes): not a pcap or pcapng file".into(),
            ));
        }
        let f = File::open(path).map_err(|e| err(0, format!("cannot open: {e}")))?;
        let mut rd = match create_reader(BUFFER_BYTES, f) {
            Ok(r) => r,
            Err(PcapError::Incomplete(_)) | Err(PcapError::Eof) => {
                return Err(err(
                    0,
                    format!(
                        "truncated file header ({} bytes): not a complete pcap or pcapng header",
                        meta.len()
                    ),
                ))
            }
            Err(_) => {
                // The first 4 bytes only (the file may be large).
                let mut magic = [0u8; 4];
                let n = File::open(path)
                    .and_then(|f| {
                        let mut got = Vec::with_capacity(4);
                        f.take(4).read_to_end(&mut got)?;
                        magic[..got.len()].copy_from_slice(&got);
                        Ok(got.len())
                    })
                    .unwrap_or(0);
                return Err(err(
                    0,
                    format!(
                        "unknown magic number {}: not pcap (a1b2c3d4, a1b23c4d, either byte order) nor pcapng (0a0d0d0a)",
                        hex(&magic[..n])
                    ),
                ));
            }
        };
        let (n, fmt) = match rd.next() {
            Ok((n, PcapBlockOwned::LegacyHeader(h))) => {
                if h.version_major != 2 {
                    return Err(err(
                        4,
                        format!(
                            "pcap version {}.{}; only 2.x is read",
                            h.version_major, h.version_minor
                        ),
                    ));
                }
                (
                    n,
                    Format::Legacy {
                        nanos: h.is_nanosecond_precision(),
                        snaplen: h.snaplen,
                        big_endian: h.is_bigendian(),
                        linktype: h.network,
                    },
                )
            }
            Ok((n, PcapBlockOwned::NG(Block::SectionHeader(shb)))) => (
                n,
                Format::Ng {
                    big_endian: shb.big_endian(),
                    ifaces: Vec::new(),
                },
            ),
            Ok(_) => return Err(err(0, "the file does not start with a header".into())),
            Err(e) => return Err(err(0, format!("unreadable file header ({})", short(&e)))),
        };
        if let Format::Legacy { linktype, .. } = fmt {
            if linktype != Linktype::ETHERNET {
                return Err(err(20, linktype_error(linktype)));
            }
        }
        rd.consume(n);
        Ok(CaptureReader {
            path: name,
            file_len: meta.len(),
            rd,
            fmt,
            pos: n as u64,
            last_ts: None,
            reordered: 0,
            max_step_back_ns: 0,
        })
    }

    /// Bytes of the file read so far (the offset of the next record), and
    /// the file's size [bytes].
    pub fn read_bytes(&self) -> u64 {
        self.pos
    }
    pub fn file_bytes(&self) -> u64 {
        self.file_len
    }

    fn err(&self, offset: u64, what: impl Into<String>) -> CaptureError {
        CaptureError {
            path: self.path.clone(),
            offset,
            what: what.into(),
        }
    }

    /// Buffer at least `n` bytes of the rest of the file (fewer at its end).
    fn fill_to(&mut self, n: usize) -> Result<usize, CaptureError> {
        if n > BUFFER_BYTES && !self.rd.grow(n + BUFFER_BYTES) {
            return Err(self.err(
                self.pos,
                format!("record of {n} bytes does not fit in memory"),
            ));
        }
        while self.rd.data().len() < n && !self.rd.reader_exhausted() {
            if self.rd.refill().is_err() {
                return Err(self.err(self.pos, "read error"));
            }
        }
        Ok(self.rd.data().len())
    }

    /// The next frame, None at the end of the file.
    pub fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        loop {
            let at = self.pos;
            let left = self.file_len.saturating_sub(at);
            let have = self.fill_to(16)?;
            if have == 0 {
                return Ok(None);
            }
            // Check the record's declared length before parsing it.
            let (hdr, len) = match &self.fmt {
                Format::Legacy {
                    big_endian,
                    snaplen,
                    ..
                } => {
                    if have < 16 {
                        return Err(self.err(
                            at,
                            format!("truncated record header ({have} of 16 bytes before the end of the file)"),
                        ));
                    }
                    let caplen = u32_at(self.rd.data(), 8, *big_endian);
                    if *snaplen > 0 && caplen > *snaplen {
                        return Err(self.err(
                            at,
                            format!("record length {caplen} is over the snaplen {snaplen}"),
                        ));
                    }
                    (16u64, caplen as u64)
                }
                Format::Ng { big_endian, .. } => {
                    if have < 12 {
                        return Err(self.err(
                            at,
                            format!("truncated block header ({have} of 12 bytes before the end of the file)"),
                        ));
                    }
                    let blen = u32_at(self.rd.data(), 4, *big_endian);
                    if blen < 12 || !blen.is_multiple_of(4) {
                        return Err(self.err(
                            at,
                            format!("block length {blen} is not a multiple of 4 of at least 12"),
                        ));
                    }
                    (0u64, blen as u64)
                }
            };
            if hdr + len > left {
                return Err(self.err(
                    at,
                    format!(
                        "record length {len} runs past the end of the file ({} bytes left after the header)",
                        left - hdr
                    ),
                ));
            }
            if (hdr + len) as usize > MAX_RECORD_BYTES {
                return Err(self.err(
                    at,
                    format!(
                        "record length {len} is over the largest accepted ({MAX_RECORD_BYTES})"
                    ),
                ));
            }
            self.fill_to((hdr + len) as usize)?;
            let path = self.path.clone();
            let (n, rec) = match self.rd.next() {
                Ok((n, b)) => (n, self_decode(&mut self.fmt, b)),
                Err(PcapError::Eof) => return Ok(None),
                Err(e) => {
                    return Err(CaptureError {
                        path,
                        offset: at,
                        what: format!("malformed record ({})", short(&e)),
                    })
                }
            };
            self.rd.consume(n);
            self.pos += n as u64;
            let frame = match rec.map_err(|w| self.err(at, w))? {
                Some(f) => f,
                None => continue,
            };
            let mut ts = match frame.ts_ns {
                u64::MAX => self.last_ts.unwrap_or(0), // SPB: no timestamp
                t => t,
            };
            if let Some(last) = self.last_ts {
                if ts < last {
                    let back = last - ts;
                    if back > REORDER_TOLERANCE_NS {
                        return Err(self.err(
                            at,
                            format!(
                                "timestamp goes backwards: {ts} ns is {back} ns earlier than the \
                                 previous record's {last} ns (more than the {} ms a multi-queue \
                                 capture reorders; files joined out of order?)",
                                REORDER_TOLERANCE_NS / 1_000_000
                            ),
                        ));
                    }
                    self.reordered += 1;
                    self.max_step_back_ns = self.max_step_back_ns.max(back);
                    ts = last;
                }
            }
            self.last_ts = Some(ts);
            return Ok(Some(CapturedFrame { ts_ns: ts, ..frame }));
        }
    }
}

/// Decode a parsed block: Some(frame) for a packet record, None for other
/// blocks (interface descriptions are recorded); `ts_ns == u64::MAX` marks a
/// Simple Packet Block (no timestamp).
fn self_decode(fmt: &mut Format, b: PcapBlockOwned<'_>) -> Result<Option<CapturedFrame>, String> {
    match (fmt, b) {
        (
            Format::Legacy {
                nanos, linktype, ..
            },
            PcapBlockOwned::Legacy(r),
        ) => {
            let frac = if *nanos {
                r.ts_usec as u64
            } else {
                r.ts_usec as u64 * 1000
            };
            let ts = r.ts_sec as u64 * 1_000_000_000 + frac;
            Ok(Some(parse_frame(
                ts,
                r.origlen.max(r.caplen),
                r.data,
                *linktype,
            )?))
        }
        (Format::Ng { ifaces, big_endian }, PcapBlockOwned::NG(blk)) => match blk {
            Block::SectionHeader(shb) => {
                *big_endian = shb.big_endian();
                ifaces.clear();
                Ok(None)
            }
            Block::InterfaceDescription(idb) => {
                let units_per_s = ts_units_per_s(idb.if_tsresol).ok_or_else(|| {
                    format!(
                        "interface {}: if_tsresol {:#x} is out of range",
                        ifaces.len(),
                        idb.if_tsresol
                    )
                })?;
                ifaces.push(Iface {
                    linktype: idb.linktype,
                    snaplen: idb.snaplen,
                    units_per_s,
                    offset_s: idb.if_tsoffset,
                });
                Ok(None)
            }
            Block::EnhancedPacket(epb) => {
                let i = *ifaces.get(epb.if_id as usize).ok_or_else(|| {
                    format!(
                        "packet on interface {} but only {} interface(s) described before it",
                        epb.if_id,
                        ifaces.len()
                    )
                })?;
                if i.snaplen > 0 && epb.caplen > i.snaplen {
                    return Err(format!(
                        "record length {} is over the snaplen {} of interface {}",
                        epb.caplen, i.snaplen, epb.if_id
                    ));
                }
                let raw = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                let ns = raw as u128 * 1_000_000_000 / i.units_per_s as u128;
                let ns = ns as i128 + i.offset_s as i128 * 1_000_000_000;
                let ts = u64::try_from(ns)
                    .ok()
                    .filter(|&t| t != u64::MAX)
                    .ok_or_else(|| format!("timestamp out of range on interface {}", epb.if_id))?;
                let len = epb.origlen.max(epb.caplen);
                let data = &epb.data[..(epb.caplen as usize).min(epb.data.len())];
                Ok(Some(
                    parse_frame(ts, len, data, i.linktype)
                        .map_err(|e| format!("interface {}: {e}", epb.if_id))?,
                ))
            }
            Block::SimplePacket(spb) => {
                let i = *ifaces
                    .first()
                    .ok_or("simple packet block before any interface description")?;
                let caplen = if i.snaplen > 0 {
                    spb.origlen.min(i.snaplen)
                } else {
                    spb.origlen
                };
                let data = &spb.data[..(caplen as usize).min(spb.data.len())];
                Ok(Some(parse_frame(u64::MAX, spb.origlen, data, i.linktype)?))
            }
            _ => Ok(None),
        },
        _ => Err("unexpected block type for this file format".into()),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn short<I>(e: &PcapError<I>) -> String {
    match e {
        PcapError::Eof | PcapError::UnexpectedEof | PcapError::Incomplete(_) => {
            "unexpected end of file".into()
        }
        PcapError::BufferTooSmall => "record too large".into(),
        PcapError::ReadError => "read error".into(),
        PcapError::HeaderNotRecognized => "header not recognised".into(),
        PcapError::NomError(_, k) | PcapError::OwnedNomError(_, k) => {
            format!("parse error: {}", k.description())
        }
    }
}

/// A link type the replay does not read, with what to do instead for the
/// common ones (`tcpdump -i any` writes Linux cooked captures).
fn linktype_error(lt: Linktype) -> String {
    let hint = match lt.0 {
        113 => Some(
            "a Linux cooked capture (LINKTYPE_LINUX_SLL, what `tcpdump -i any` writes); \
             capture on the interface itself, e.g. `tcpdump -i eth0 -w FILE`, which records \
             Ethernet frames",
        ),
        276 => Some(
            "a Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, what `tcpdump -i any` writes); \
             capture on the interface itself, e.g. `tcpdump -i eth0 -w FILE`, which records \
             Ethernet frames",
        ),
        101 => Some(
            "raw IP without link-layer headers (LINKTYPE_RAW); capture on an Ethernet \
             interface, e.g. `tcpdump -i eth0 -w FILE`",
        ),
        0 => Some("BSD loopback (LINKTYPE_NULL): loopback traffic never crosses a NIC"),
        _ => None,
    };
    let base = format!(
        "unsupported link type {} (only Ethernet, LINKTYPE_ETHERNET = 1, is replayed)",
        lt.0
    );
    match hint {
        Some(h) => format!("{base}: this is {h}"),
        None => base,
    }
}

/// The fields of an Ethernet frame the replay uses.
fn parse_frame(ts_ns: u64, orig_len: u32, d: &[u8], lt: Linktype) -> Result<CapturedFrame, String> {
    if lt != Linktype::ETHERNET {
        return Err(linktype_error(lt));
    }
    let mut f = CapturedFrame {
        ts_ns,
        orig_len,
        tcp: false,
        proto: 0,
        flow: 0,
        dst_mac: [0; 6],
        src_mac: None,
        dst_ip: None,
        src_ip: None,
        ports: None,
        dscp: None,
        tcp_headers: None,
    };
    if d.len() >= 12 {
        let mut m = [0u8; 6];
        m.copy_from_slice(&d[6..12]);
        f.src_mac = Some(m);
    }
    if d.len() < 14 {
        return Ok(f);
    }
    f.dst_mac.copy_from_slice(&d[..6]);
    let mut et = u16::from_be_bytes([d[12], d[13]]);
    let mut l3 = 14;
    while (et == 0x8100 || et == 0x88a8) && d.len() >= l3 + 4 {
        et = u16::from_be_bytes([d[l3 + 2], d[l3 + 3]]);
        l3 += 4;
    }
    let ip = &d[l3.min(d.len())..];
    // (hash input, protocol, offset of the L4 header) for IPv4 and IPv6.
    let mut input = [0u8; 36];
    let (n_addr, proto, l4) = match et {
        0x0800 if ip.len() >= 20 && ip[0] >> 4 == 4 => {
            let ihl = (ip[0] & 0x0f) as usize * 4;
            input[..8].copy_from_slice(&ip[12..20]);
            f.src_ip = Some(IpAddr::from([ip[12], ip[13], ip[14], ip[15]]));
            f.dst_ip = Some(IpAddr::from([ip[16], ip[17], ip[18], ip[19]]));
            f.dscp = Some(ip[1] >> 2);
            let frag = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0;
            (8, if frag { 0 } else { ip[9] }, ihl)
        }
        0x86dd if ip.len() >= 40 && ip[0] >> 4 == 6 => {
            input[..32].copy_from_slice(&ip[8..40]);
            let mut a = [0u8; 16];
            a.copy_from_slice(&ip[8..24]);
            f.src_ip = Some(IpAddr::from(a));
            a.copy_from_slice(&ip[24..40]);
            f.dst_ip = Some(IpAddr::from(a));
            // Traffic class: the 8 bits after the version nibble.
            f.dscp = Some(((ip[0] & 0x0f) << 2) | (ip[1] >> 6));
            (32, ip[6], 40)
        }
        _ => return Ok(f),
    };
    f.tcp = proto == 6;
    f.proto = proto;
    if f.tcp && ip.len() > l4 + 12 {
        // TCP data offset: the header's length in 32-bit words (RFC 9293).
        let doff = (ip[l4 + 12] >> 4) as usize * 4;
        if doff >= 20 {
            f.tcp_headers = Some((l3 + l4 + doff) as u32);
        }
    }
    if (proto == 6 || proto == 17) && ip.len() >= l4 + 4 {
        f.ports = Some((
            u16::from_be_bytes([ip[l4], ip[l4 + 1]]),
            u16::from_be_bytes([ip[l4 + 2], ip[l4 + 3]]),
        ));
    }
    let mut n = n_addr;
    if f.tcp && ip.len() >= l4 + 4 {
        input[n..n + 4].copy_from_slice(&ip[l4..l4 + 4]);
        n += 4;
    }
    f.flow = (toeplitz(&MS_VERIFICATION_KEY, &input[..n]) & 0x7f) as u16;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsresol_power_of_ten_and_two() {
        assert_eq!(ts_units_per_s(6), Some(1_000_000));
        assert_eq!(ts_units_per_s(9), Some(1_000_000_000));
        assert_eq!(ts_units_per_s(0x80 | 10), Some(1024));
        assert_eq!(ts_units_per_s(20), None);
    }
}
