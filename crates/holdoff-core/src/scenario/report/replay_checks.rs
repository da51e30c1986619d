//! The report's warnings about what a replay did not simulate as captured:
//! a run that ended before the capture did (with the share of the file
//! read), a replay that sent no frames, a capture that is not one host's
//! received traffic (its sent frames too, or several hosts'; the rules of
//! `apps::replay::directions`), and frames the line made leave later than
//! captured. In the report itself, so that every way to run a scenario
//! (the command line, the Python `run`, sweeps, stored results, reports)
//! carries them.
//!
//! Units: times [ns] (printed in ms), sizes [bytes].

use super::WarningOut;
use crate::apps::replay::{Endpoint, Replay};
use crate::scenario::world::World;

/// A replay whose frames left this much later than captured is warned
/// about [ns] (and only when that is also `LATE_WARN_SHARE` of the capture
/// time replayed): as `holdoff.capture.LAG_WARN_NS`.
pub const LATE_WARN_NS: u64 = 100_000;
pub const LATE_WARN_SHARE: f64 = 0.01;

/// The warnings of replaying generator `gi`.
pub(super) fn replay_checks(w: &World, gi: usize, r: &Replay) -> Vec<WarningOut> {
    let g = &w.scenario().generators[gi];
    let file = g.capture.as_deref().unwrap_or_default();
    let st = &r.stats;
    let field = |key: &str| format!("generators[{gi}].{key}");
    let mut out = Vec::new();
    let covered_ns = match (st.first_ts_ns, st.last_ts_ns) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    if st.frames == 0 {
        let why = match (&g.only_to, st.complete) {
            (Some(o), true) if st.skipped > 0 => {
                format!("none of its frames is to only_to = \"{o}\"")
            }
            (None, true) if st.skipped > 0 => format!("none comes after start_us = {}", g.start_us),
            (_, true) => "it holds no frames".to_string(),
            (_, false) => "none was read before the run ended".to_string(),
        };
        out.push(WarningOut {
            field: field("capture"),
            message: format!("the capture {file} replayed no frames: {why}"),
        });
    } else if !st.complete {
        let share = st.read_bytes as f64 / st.file_bytes.max(1) as f64;
        out.push(WarningOut {
            field: "duration_ms".to_string(),
            message: format!(
                "the run ended before the capture {file} did: it read the first {} frames ({:.3} ms of capture time) and {:.2} % of the file ({} of {} bytes); the rest of the capture is not simulated. Raise duration_ms to cover it",
                st.frames,
                covered_ns as f64 / 1e6,
                100.0 * share,
                st.read_bytes,
                st.file_bytes,
            ),
        });
    }
    let d = &r.directions;
    if g.only_to.is_none() && d.two_way() {
        let hosts = d.hosts();
        let text = hosts
            .iter()
            .take(4)
            .map(|h| format!("{} received {} and sent {}", h.name(), h.received, h.sent))
            .collect::<Vec<_>>()
            .join("; ");
        // The host the capture was most likely taken on.
        let pick = capture_host(&hosts);
        out.push(WarningOut {
            field: field("only_to"),
            message: format!(
                "the capture {file} holds frames both ways ({text}): every frame was replayed into the port as received traffic, the hosts' sent frames too. only_to = \"{}\" keeps the frames that host received",
                pick.only_to()
            ),
        });
    } else if g.only_to.is_none() && d.many_receivers() {
        let top = d.receivers()[0];
        out.push(WarningOut {
            field: field("only_to"),
            message: format!(
                "the capture {file} holds several hosts' traffic (the busiest address, {}, received {:.1} % of its {} unicast frames): every frame was replayed into one port. only_to = \"{}\" keeps one host's",
                top.name(),
                100.0 * d.main_receiver_share(),
                d.unicast,
                top.only_to()
            ),
        });
    }
    let judged = (LATE_WARN_SHARE * r.scaled(covered_ns) as f64) as u64;
    if st.max_late_ns > LATE_WARN_NS.max(judged) {
        out.push(WarningOut {
            field: field("capture"),
            message: format!(
                "{} frames left later than captured, the latest by {:.3} ms: the capture holds traffic faster than its link carries, and a replay sends no faster than the line (was it taken on a faster link? set the link's rate to that link's)",
                st.late_frames,
                st.max_late_ns as f64 / 1e6
            ),
        });
    }
    out
}

/// The host a two-way capture was most likely taken on, whose received
/// frames `only_to` should keep: the one address that took part in more
/// frames than any other (a server's capture: the server, not one of its
/// clients); with two tied at the top, the second of them in address order
/// (as `holdoff.capture.Directions.capture_host`). `hosts` is not empty.
fn capture_host(hosts: &[Endpoint]) -> &Endpoint {
    match hosts {
        [a, b, ..] if a.received + a.sent == b.received + b.sent => b,
        _ => &hosts[0],
    }
}
