//! Capture replay: a generator port that sends the frames of a pcap or
//! pcapng file with the capture's sizes and inter-arrival times.
//!
//! Models: each captured Ethernet frame becomes one UDP-kind frame of the
//! captured original length plus the 4-byte FCS (captures do not keep it),
//! padded to the 60-byte minimum first as the sending MAC pads (IEEE 802.3
//! clause 4.2.3.3); frames longer than the configured MTU + 18 are counted
//! and dropped (`DropReason::FrameOverMtu`, a receiver's oversize count),
//! except TCP segments longer than that: a capture taken on a host sees
//! TCP above segmentation offload (the sender's TSO, the receiver's GRO/LRO
//! merge several wire segments into one), so such a record is cut into the
//! segments the wire carried: its headers, then at most MSS = MTU + 14 -
//! headers bytes of payload each (the last one the rest), all at the
//! record's time, so they leave back to back at line rate.
//! Frames keep their flow: each carries its 5-tuple (addresses, protocol,
//! ports). When the receiving port runs the RSS model (`nic::rss`) the
//! frame carries that port's Toeplitz hash of it (its key, its fields:
//! ports for TCP, for UDP only with `rx_flow_hash_udp4 = "sdfn"`).
//! Otherwise the flow id is the low 7 bits of the Toeplitz hash of the
//! frame's addresses (and TCP ports) with the verification key of the
//! Microsoft RSS specification, the index into a 128-entry redirection
//! table, and the NIC maps it to a queue with the default table
//! (`ethtool_rxfh_indir_default`: index mod queues); those fields follow
//! igb's defaults (`igb_setup_mrqc`, drivers/net/ethernet/intel/igb/
//! igb_main.c). Non-IP frames hash to 0.
//!
//! Simplifies: replay is open loop, so TCP's feedback (ACK clocking,
//! congestion control, retransmissions) is not reproduced; every frame is
//! delivered as a datagram. A cut aggregate's segments start at the
//! record's time (a GRO record is stamped after its last segment arrived,
//! so they arrive up to one aggregate's wire time later than they did),
//! with the record's headers and options; a TCP record whose captured
//! bytes do not reach the end of its TCP header is not cut (dropped as
//! over the MTU). Simple Packet Blocks carry no timestamp: they
//! take the previous record's time (so they go out back to back on the line).
//!
//! Streaming: the file is read through `pcap_parser`'s circular-buffer
//! readers, one record at a time as the generator emits, so memory is
//! O(1) in the capture's size (a 64 KiB buffer, grown only for a record
//! longer than that, up to `MAX_RECORD_BYTES`).
//!
//! Latency of selected traffic: frames matching the generator's
//! `latency_of` selector (`select`) are marked, and the sink that reads
//! them keeps their latency in a second histogram.
//!
//! Sub-modules: `reader` (the file and each frame's headers), `select`
//! (`only_to` and `latency_of`), `directions` (who sent and received the
//! unicast frames read, without `only_to`).
//!
//! What the report is told besides the counts: the share of the file's
//! bytes the run read (a run shorter than the capture reads only its
//! start), and how late the busy wire made frames leave (a capture of a
//! faster link cannot be sent at its times on a slower one; a frame leaves
//! when the line is free, so its lateness is measured, not estimated).
//!
//! Errors name the file, the byte offset of the record and what was wrong.
//!
//! Units: capture timestamps and simulated times [ns], sizes [bytes].
//! Sources: pcap: draft-ietf-opsawg-pcap; pcapng: draft-ietf-opsawg-pcapng
//! (SHB, IDB with `if_tsresol`/`if_tsoffset`, EPB, SPB).

mod directions;
mod reader;
mod select;

pub use directions::{mac_text, Endpoint, Tally};

pub use reader::*;
pub use select::*;

use std::path::PathBuf;

/// Size-histogram bucket upper bounds [bytes, with FCS] (RMON etherStats
/// buckets, RFC 2819: 64, 65-127, 128-255, 256-511, 512-1023, 1024-1518, longer).
pub const SIZE_BUCKETS: [(u32, &str); 7] = [
    (64, "64"),
    (127, "65-127"),
    (255, "128-255"),
    (511, "256-511"),
    (1023, "512-1023"),
    (1518, "1024-1518"),
    (u32::MAX, "1519+"),
];

/// What a replay read from its capture (first pass only; later loops repeat it).
#[derive(Clone, Debug, Default)]
pub struct CaptureStats {
    /// Frames read in the first pass (after `start_us` and `only_to`).
    pub frames: u64,
    pub bytes: u64,
    pub tcp_frames: u64,
    /// Frames over the MTU (dropped).
    pub over_mtu: u64,
    /// TCP records over the MTU cut into wire segments, and the segments
    /// they gave (counted in `frames`).
    pub cut_records: u64,
    pub cut_segments: u64,
    /// Records stamped before the record ahead of them (within
    /// `REORDER_TOLERANCE_NS`), replayed at its time, and the largest step
    /// back [ns] (whole file, first pass).
    pub reordered: u64,
    pub max_step_back_ns: u64,
    /// Frames skipped: before `start_us` or not to `only_to`.
    pub skipped: u64,
    /// Counts per `SIZE_BUCKETS` bucket (frame size with padding and FCS).
    pub size_hist: [u64; 7],
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
    /// The whole file was read at least once.
    pub complete: bool,
    /// Frames read in the first pass that match `latency_of` (0 without one).
    pub selected: u64,
    /// Bytes of the file read (through the last record read ahead), and
    /// the file's size [bytes].
    pub read_bytes: u64,
    pub file_bytes: u64,
    /// Frames that left later than their capture time (the wire still busy
    /// with the ones before), and the latest of them [ns].
    pub late_frames: u64,
    pub max_late_ns: u64,
}

/// Replay settings (from a validated `GeneratorCfg`).
#[derive(Clone, Debug)]
pub struct ReplaySettings {
    pub path: PathBuf,
    /// Replay speed [1/1000]: 1000 = real time, 2000 = twice as fast.
    pub speed_milli: u64,
    pub loops: u32,
    /// Capture time skipped at the start [ns].
    pub skip_ns: u64,
    pub only_to: Option<OnlyTo>,
    /// Frames whose latency is also measured apart (`latency_of`).
    pub latency_of: Option<Selector>,
    /// Largest frame accepted, with FCS [bytes] (MTU + 18).
    pub max_frame_bytes: u32,
}

/// An offload aggregate being cut into wire segments.
#[derive(Clone, Copy, Debug)]
struct Cut {
    frame: CapturedFrame,
    rel: u64,
    headers: u32,
    left: u32,
    mss: u32,
}

impl Cut {
    /// The next segment (`left` > 0).
    fn next(&mut self) -> CapturedFrame {
        let take = self.left.min(self.mss);
        self.left -= take;
        CapturedFrame {
            orig_len: self.headers + take,
            ..self.frame
        }
    }
}

/// The wire segments of an offload aggregate: (headers, payload, MSS), or
/// None when `f` is not a TCP segment longer than `max_frame_bytes` whose
/// captured bytes reach the end of its TCP header.
pub fn offload_cut(f: &CapturedFrame, max_frame_bytes: u32) -> Option<(u32, u32, u32)> {
    let headers = f.tcp_headers?;
    if f.frame_bytes() <= max_frame_bytes || headers >= f.orig_len {
        return None;
    }
    // The longest segment fills the frame to the MTU: max_frame_bytes
    // counts the 4-byte FCS, orig_len does not.
    let mss = max_frame_bytes
        .checked_sub(4 + headers)
        .filter(|m| *m > 0)?;
    Some((headers, f.orig_len - headers, mss))
}

/// A replay in progress: the reader and the frame read ahead.
pub struct Replay {
    set: ReplaySettings,
    rd: CaptureReader,
    /// Capture time of the first record of the current pass [ns].
    pass_first: Option<u64>,
    /// Simulated offset of the current pass from the generator's start [ns].
    pass_offset_ns: u64,
    pass: u32,
    /// Frames kept in the current pass, and the last one's capture time.
    pass_frames: u64,
    pass_last: u64,
    /// Next frame and its simulated time relative to the start [ns].
    ahead: Option<(CapturedFrame, u64)>,
    /// The rest of an offload aggregate being cut: the record, its time,
    /// the payload bytes still to send and the MSS [bytes].
    cutting: Option<Cut>,
    pub stats: CaptureStats,
    /// Who sent and received the unicast frames of the first pass (counted
    /// without `only_to` only).
    pub directions: Tally,
    /// A record error met mid-run; the run reports it.
    pub error: Option<CaptureError>,
}

impl Replay {
    /// Open the capture (errors as at validation).
    pub fn open(set: ReplaySettings) -> Result<Replay, CaptureError> {
        let rd = CaptureReader::open(&set.path)?;
        let stats = CaptureStats {
            file_bytes: rd.file_bytes(),
            read_bytes: rd.read_bytes(),
            ..CaptureStats::default()
        };
        Ok(Replay {
            set,
            rd,
            pass_first: None,
            pass_offset_ns: 0,
            pass: 0,
            pass_frames: 0,
            pass_last: 0,
            ahead: None,
            cutting: None,
            stats,
            directions: Tally::default(),
            error: None,
        })
    }

    /// Read ahead the next frame to send; its time relative to the start [ns].
    pub fn advance(&mut self) -> Option<u64> {
        if let Some(c) = self.cutting.as_mut().filter(|c| c.left > 0) {
            let (seg, rel) = (c.next(), c.rel);
            self.ahead = Some((seg, rel));
            return Some(rel);
        }
        self.cutting = None;
        loop {
            let f = match self.rd.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => {
                    if self.pass == 0 {
                        self.stats.complete = true;
                        self.stats.read_bytes = self.rd.read_bytes();
                    }
                    self.note_reordering();
                    if self.pass + 1 >= self.set.loops || self.pass_frames == 0 {
                        self.ahead = None;
                        return None;
                    }
                    // Next pass: one mean inter-arrival after the last frame.
                    let t0 = self.pass_first.unwrap_or(0) + self.set.skip_ns;
                    let span = self.pass_last.saturating_sub(t0);
                    let gap = if self.pass_frames > 1 {
                        span / (self.pass_frames - 1)
                    } else {
                        1_000
                    };
                    self.pass_offset_ns += self.scale(span + gap.max(1));
                    self.pass += 1;
                    self.pass_frames = 0;
                    self.pass_first = None;
                    match CaptureReader::open(&self.set.path) {
                        Ok(r) => self.rd = r,
                        Err(e) => {
                            self.error = Some(e);
                            return None;
                        }
                    }
                    continue;
                }
                Err(e) => {
                    self.error = Some(e);
                    self.ahead = None;
                    return None;
                }
            };
            if self.pass == 0 {
                self.stats.read_bytes = self.rd.read_bytes();
            }
            let t0 = *self.pass_first.get_or_insert(f.ts_ns) + self.set.skip_ns;
            let keep = f.ts_ns >= t0 && self.set.only_to.is_none_or(|o| o.keeps(&f));
            if !keep {
                if self.pass == 0 {
                    self.stats.skipped += 1;
                }
                continue;
            }
            self.pass_frames += 1;
            self.pass_last = f.ts_ns;
            let rel = self.pass_offset_ns + self.scale(f.ts_ns - t0);
            let mut first = f;
            if let Some((headers, payload, mss)) = offload_cut(&f, self.set.max_frame_bytes) {
                let mut c = Cut {
                    frame: f,
                    rel,
                    headers,
                    left: payload,
                    mss,
                };
                first = c.next();
                if self.pass == 0 {
                    self.count_cut(&c, payload);
                }
                self.cutting = Some(c);
            } else if self.pass == 0 {
                self.count(&f);
            }
            if self.pass == 0 {
                if self.set.only_to.is_none() {
                    self.directions.count(&f);
                }
                let s = &mut self.stats;
                s.first_ts_ns.get_or_insert(f.ts_ns);
                s.last_ts_ns = Some(f.ts_ns);
                self.note_reordering();
            }
            self.ahead = Some((first, rel));
            return Some(rel);
        }
    }

    /// The reader's count of out-of-order records, kept for the first pass.
    fn note_reordering(&mut self) {
        if self.pass == 0 {
            self.stats.reordered = self.rd.reordered;
            self.stats.max_step_back_ns = self.rd.max_step_back_ns;
        }
    }

    /// First-pass counts of one frame sent.
    fn count(&mut self, f: &CapturedFrame) {
        let s = &mut self.stats;
        s.frames += 1;
        let b = f.frame_bytes();
        s.bytes += b as u64;
        s.tcp_frames += f.tcp as u64;
        if b > self.set.max_frame_bytes {
            s.over_mtu += 1;
        }
        let k = SIZE_BUCKETS
            .iter()
            .position(|(hi, _)| b <= *hi)
            .unwrap_or(6);
        s.size_hist[k] += 1;
        s.selected += self.set.latency_of.as_ref().is_some_and(|l| l.matches(f)) as u64;
    }

    /// First-pass counts of every segment of an aggregate being cut (`c`
    /// before its first segment was taken: `payload` bytes in all).
    fn count_cut(&mut self, c: &Cut, payload: u32) {
        let mut c = Cut {
            left: payload,
            ..*c
        };
        self.stats.cut_records += 1;
        while c.left > 0 {
            let seg = c.next();
            self.stats.cut_segments += 1;
            self.count(&seg);
        }
    }

    /// Capture time [ns] to simulated time at `speed`.
    pub fn scaled(&self, capture_ns: u64) -> u64 {
        self.scale(capture_ns)
    }

    /// Capture time [ns] to simulated time at `speed`.
    fn scale(&self, capture_ns: u64) -> u64 {
        let v = capture_ns as u128 * 1000 / self.set.speed_milli as u128;
        v.min(u64::MAX as u128) as u64
    }

    /// The capture's span, first to last kept frame, in simulated time at
    /// the replay's speed [ns]: when the run read the whole file and
    /// replays it once (None otherwise: a cut run or several passes).
    pub fn span_sim_ns(&self) -> Option<u64> {
        let st = &self.stats;
        match (st.first_ts_ns, st.last_ts_ns) {
            (Some(a), Some(b)) if st.complete && self.set.loops == 1 => Some(self.scale(b - a)),
            _ => None,
        }
    }

    /// The frame read ahead, and its time relative to the start [ns].
    pub fn take(&mut self) -> Option<(CapturedFrame, u64)> {
        self.ahead.take()
    }

    /// A frame left `late_ns` after its capture time (0: on time).
    pub fn note_sent(&mut self, late_ns: u64) {
        if late_ns > 0 {
            self.stats.late_frames += 1;
            self.stats.max_late_ns = self.stats.max_late_ns.max(late_ns);
        }
    }

    /// The capture's mean rate at the replay speed [bit/s] (frames with
    /// FCS, first pass, first to last frame); 0 for fewer than two frames.
    pub fn offered_bps(&self) -> f64 {
        let s = &self.stats;
        match (s.first_ts_ns, s.last_ts_ns) {
            (Some(a), Some(b)) if b > a => {
                s.bytes as f64 * 8.0 * 1e9 / b.saturating_sub(a) as f64
                    * self.set.speed_milli as f64
                    / 1000.0
            }
            _ => 0.0,
        }
    }

    /// The `latency_of` selector, if any.
    pub fn selector(&self) -> Option<&Selector> {
        self.set.latency_of.as_ref()
    }

    /// The frame matches `latency_of` (false without a selector).
    pub fn selects(&self, f: &CapturedFrame) -> bool {
        self.set.latency_of.as_ref().is_some_and(|l| l.matches(f))
    }

    pub fn max_frame_bytes(&self) -> u32 {
        self.set.max_frame_bytes
    }
}
