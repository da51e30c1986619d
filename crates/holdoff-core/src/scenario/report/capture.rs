//! The replay parts of the summary: what a replaying generator read from
//! its capture, and the `latency_of` selectors in words.
//!
//! Units: sizes [bytes], capture times [ns].

use super::CaptureOut;
use crate::scenario::world::World;

/// The replays' `latency_of` selectors in words, distinct, joined by "; "
/// (None when no replay has one).
pub(super) fn selectors(w: &World) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for g in w.generators() {
        if let Some(sel) = g.replay.as_ref().and_then(|r| r.selector()) {
            let d = sel.describe();
            if !seen.contains(&d) {
                seen.push(d);
            }
        }
    }
    (!seen.is_empty()).then(|| seen.join("; "))
}

/// The capture summary of replaying generator `gi`.
pub(super) fn capture_out(w: &World, gi: usize, r: &crate::apps::replay::Replay) -> CaptureOut {
    use crate::apps::replay::SIZE_BUCKETS;
    let st = &r.stats;
    CaptureOut {
        file: w.scenario().generators[gi]
            .capture
            .clone()
            .unwrap_or_default(),
        frames: st.frames,
        bytes: st.bytes,
        duration_ns: match (st.first_ts_ns, st.last_ts_ns) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        },
        size_histogram: SIZE_BUCKETS
            .iter()
            .zip(st.size_hist)
            .map(|((_, name), n)| (*name, n))
            .collect(),
        tcp_share: if st.frames > 0 {
            st.tcp_frames as f64 / st.frames as f64
        } else {
            0.0
        },
        over_mtu: st.over_mtu,
        cut_records: st.cut_records,
        cut_segments: st.cut_segments,
        reordered: st.reordered,
        max_step_back_ns: st.max_step_back_ns,
        skipped: st.skipped,
        complete: st.complete,
        read_bytes: st.read_bytes,
        file_bytes: st.file_bytes,
        late_frames: st.late_frames,
        max_late_ns: st.max_late_ns,
        selected_frames: r.selector().map(|_| st.selected),
    }
}
