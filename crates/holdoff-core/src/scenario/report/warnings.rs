//! The report's warnings: configured values not in effect as written
//! (register writes the NIC ignored or converted, named by the scenario
//! field that set them), the line-rate checks of `holdoff explain` on the
//! settings in effect at the end, a link faster than its chip's port, an
//! MSS over the MTU, and a replayed capture that is mostly TCP, holds
//! frames over the MTU, or left its host's busiest core more CPU time than
//! the capture lasts (a backlog the run drained after the last frame);
//! what a replay did not simulate as captured is `replay_checks`.
//!
//! Units: times [ns] (printed in us), sizes [bytes], rates [bit/s].

use super::{WarningOut, TCP_WARN_SHARE};
use crate::scenario::config::Scenario;
use crate::scenario::world::World;

/// One warning per register write that the NIC recorded as not in effect
/// as written (`nic::IgnoredWrite`), naming the scenario field that set it:
/// the moderation table's own field when the user sets that register
/// directly (`ModeratorConfig::config_field`), the `moderation` table when
/// the algorithm wrote it, `set_ide` for the descriptor bit; then the
/// line-rate checks (`line_rate_warnings`) and the host and capture ones.
pub(super) fn warnings(w: &World) -> Vec<WarningOut> {
    let mut out = register_warnings(w);
    out.extend(line_rate_warnings(w));
    for (hi, h) in w.scenario().hosts.iter().enumerate() {
        let mss = h.tcp.mss_bytes;
        if let Some(n) = h
            .nics
            .iter()
            .find(|n| mss + crate::scenario::config::host::TCP_IP_HEADER_BYTES > n.mtu_bytes)
        {
            out.push(WarningOut {
                field: format!("hosts[{hi}].tcp.mss_bytes"),
                message: format!(
                    "{mss} bytes per segment do not fit the MTU of {} ({} bytes): TCP over that port carries at most {} (MTU - 52); set mtu_bytes on the NICs of both ends for jumbo frames",
                    n.name,
                    n.mtu_bytes,
                    n.mtu_bytes - crate::scenario::config::host::TCP_IP_HEADER_BYTES
                ),
            });
        }
    }
    for (gi, g) in w.generators().iter().enumerate() {
        let Some(r) = &g.replay else { continue };
        out.extend(super::replay_checks::replay_checks(w, gi, r));
        let st = &r.stats;
        if st.frames > 0 && st.tcp_frames as f64 / st.frames as f64 > TCP_WARN_SHARE {
            out.push(WarningOut {
                field: format!("generators[{gi}].capture"),
                message: format!(
                    "{:.0}% of the replayed frames are TCP: replay is open loop, so TCP's feedback (ACK clocking, congestion window, retransmissions) is not reproduced; the frames arrive at the capture's times whatever the receiver does",
                    100.0 * st.tcp_frames as f64 / st.frames as f64
                ),
            });
        }
        if let (Some(span), Some(hi)) = (r.span_sim_ns(), w.generator_host(gi)) {
            // The frames' arrival took longer than the capture's span when
            // the line made them late (at most by the latest lateness).
            let span = span + st.max_late_ns;
            let busiest = w.hosts()[hi].busiest_core_ns();
            // As `holdoff tune` judges it (`tune.space.overloaded`): a core
            // that needed more CPU time than the traffic lasted.
            if span >= SPAN_JUDGED_NS && busiest > span {
                out.push(WarningOut {
                    field: format!("generators[{gi}].capture"),
                    message: format!(
                        "the busiest core of {} needed {:.2} ms of CPU for the {:.2} ms the \
                         capture lasts ({:.2}x): it ended with a backlog that the run drained \
                         after the last frame; sustained, traffic like this overflows the rings \
                         whatever this run's drops",
                        host_name(w, hi),
                        busiest as f64 / 1e6,
                        span as f64 / 1e6,
                        busiest as f64 / span as f64
                    ),
                });
            }
        }
        // What the replay read: (counted, field, message), warned when counted.
        let read = [
            (
                st.over_mtu,
                "mtu_bytes",
                format!(
                    "{} captured frames are longer than the MTU ({} bytes) and are dropped as frame_over_mtu (TCP ones are cut into wire segments only when the capture holds their whole TCP header)",
                    st.over_mtu,
                    r.max_frame_bytes() - 18
                ),
            ),
            (
                st.reordered,
                "capture",
                format!(
                    "{} records are stamped earlier than the record before them (by at most {:.3} us: a multi-queue capture stamps frames out of order); each was replayed at the previous record's time",
                    st.reordered,
                    st.max_step_back_ns as f64 / 1e3
                ),
            ),
            (
                st.cut_records,
                "mtu_bytes",
                format!(
                    "{} captured TCP frames are longer than the MTU ({} bytes): offload aggregates of a capture taken on a host (TSO, GRO); each was cut into the segments the wire carried ({} in all), sent back to back from its capture time. If the link carries jumbo frames, set mtu_bytes",
                    st.cut_records,
                    r.max_frame_bytes() - 18,
                    st.cut_segments
                ),
            ),
        ];
        for (n, key, message) in read {
            if n > 0 {
                out.push(WarningOut {
                    field: format!("generators[{gi}].{key}"),
                    message,
                });
            }
        }
    }
    out
}

/// The shortest traffic span whose busiest core is judged [ns], the same
/// bound as `holdoff tune`'s (`tune.space.SPAN_JUDGED_NS`): over 1 ms one
/// interrupt's fixed cost (2-5 us in the host profiles) is below 0.5 % of it.
const SPAN_JUDGED_NS: u64 = 1_000_000;

/// Host `hi`'s name.
fn host_name(w: &World, hi: usize) -> &str {
    &w.scenario().hosts[hi].name
}

/// `(host, nic)` index of every NIC in scenario order (the order of
/// `World::ports`).
fn nic_indices(s: &Scenario) -> impl Iterator<Item = (usize, usize)> + '_ {
    s.hosts
        .iter()
        .enumerate()
        .flat_map(|(hi, h)| (0..h.nics.len()).map(move |ni| (hi, ni)))
}

/// Register writes not in effect (see `warnings`).
fn register_warnings(w: &World) -> Vec<WarningOut> {
    let s = w.scenario();
    let nics = nic_indices(s);
    let mut out = Vec::new();
    for (pi, ((hi, ni), p)) in nics.zip(w.ports()).enumerate() {
        let nic = &s.hosts[hi].nics[ni];
        let base = format!("hosts[{hi}].nics[{ni}]");
        for iw in p.ignored_writes() {
            let (field, by) = if iw.field == "set_ide" {
                (format!("{base}.set_ide"), String::new())
            } else {
                match nic
                    .moderation
                    .algo()
                    .ok()
                    .and_then(|a| a.config_field(iw.field))
                {
                    Some(f) => (format!("{base}.moderation.{f}"), String::new()),
                    None => (
                        format!("{base}.moderation"),
                        format!(" (written by the {} algorithm)", w.moderator(pi, 0).name()),
                    ),
                }
            };
            out.push(WarningOut {
                field,
                message: format!(
                    "{} = {} [{}]{by}: {}",
                    iw.register, iw.value, iw.field, iw.reason
                ),
            });
        }
        let dropped = w.trace_rows_dropped(pi);
        if dropped > 0 {
            out.push(WarningOut {
                field: format!("{base}.moderation"),
                message: format!(
                    "moderation_trace keeps the first {} decisions; {dropped} later ones are \
                     not listed",
                    crate::scenario::world::MAX_TRACE_ROWS_PER_PORT
                ),
            });
        }
    }
    out
}

/// Wire bytes of a minimum frame: 64 B + 8 B preamble/SFD + 12 B gap.
const MIN_FRAME_WIRE_BYTES: u64 = 84;

/// A time [ns] in us with one decimal, rounded to the nearest 0.1 us.
fn us_1(ns: u64) -> String {
    let tenths = (ns + 50) / 100;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// The line-rate checks of `holdoff explain` (`python/holdoff/knobs.py`,
/// `check()`; docs/knobs.md), per port, on the settings in effect at the end
/// of the run (the registers as the port holds them, after the chip's
/// conversions):
/// - RX: the longest a received frame waits for its interrupt (a static
///   throttle interval, or the RX delay timer, RADV or else RDTR, when it
///   acts and is longer) against the time 64-byte frames at line rate take
///   to fill the RX ring, `rx_ring × 84 × 8 / rate` (256 descriptors at
///   1 Gb/s: 172.0 us);
/// - TX ring: the TX completion delay (the interval, or TADV or else TIDV
///   when the delay timers act: IDE set, TIDV non-zero, not MSI-X) against
///   the time the TX ring lasts with 64-byte frames at line rate (seed 004's
///   arithmetic: 256 × 0.672 us = 172 us);
/// - TSQ: on a host with TCP Small Queues on, the same TX completion delay
///   against `limit_output_bytes × 8 / rate`.
///
/// An adaptive interval (`ModeratorConfig::interval_is_static` false, or a
/// Python algorithm) counts as 0 here: only its delay timers are checked.
/// Comparisons are exact integer cross-products (`delay × rate` against
/// `bits × 1e9`); times in the messages are rounded to 0.1 us.
fn line_rate_warnings(w: &World) -> Vec<WarningOut> {
    let s = w.scenario();
    let nics = nic_indices(s);
    let mut out = Vec::new();
    for ((hi, ni), p) in nics.zip(w.ports()) {
        let host = &s.hosts[hi];
        let nic = &host.nics[ni];
        let base = format!("hosts[{hi}].nics[{ni}]");
        let algo = nic.moderation.algo().ok();
        let field = |param: &str| match algo.and_then(|a| a.config_field(param)) {
            Some(f) => format!("{base}.moderation.{f}"),
            None => format!("{base}.moderation"),
        };
        let rate_bps = u128::from(p.egress.rate.0);
        if rate_bps == 0 {
            continue;
        }
        let port_bps = u128::from(p.chip.link_mbps) * 1_000_000;
        if rate_bps > port_bps {
            out.push(WarningOut {
                field: format!("{base}.chip"),
                message: format!(
                    "the {}'s port runs at {} Mb/s and its link at {} Mb/s: the wire carries \
                     frames at the link's rate, faster than the part can receive or send them \
                     (only its descriptor engine's packet rate limits it); give the link the \
                     port's rate or take a chip of the link's speed",
                    p.chip.name,
                    p.chip.link_mbps,
                    p.egress.rate.0 / 1_000_000
                ),
            });
        }
        let regs = p.registers();
        let interval_ns = if algo.is_some_and(|a| a.interval_is_static()) {
            (0..p.num_vectors() as u16)
                .map(|v| p.throttle(v).0 .0)
                .max()
                .unwrap_or(0)
        } else {
            0
        };
        let interval_param = if regs.eitr_us.is_some() {
            "eitr_us"
        } else {
            "itr_256ns"
        };
        let rdtr = regs.rdtr_1024ns.unwrap_or(0);
        let rx_delay_ns = if regs.delay_timers_active && rdtr > 0 {
            let radv = regs.radv_1024ns.unwrap_or(0);
            u64::from(if radv > 0 { radv } else { rdtr }) * 1024
        } else {
            0
        };
        let tidv = regs.tidv_1024ns.unwrap_or(0);
        let tadv = regs.tadv_1024ns.unwrap_or(0);
        let (tx_delay_ns, tx_param) =
            if regs.delay_timers_active && regs.ide == Some(true) && tidv > 0 {
                if tadv > 0 {
                    (u64::from(tadv) * 1024, "tadv_1024ns")
                } else {
                    (u64::from(tidv) * 1024, "tidv_1024ns")
                }
            } else {
                (0, "")
            };
        let rate_mbps = p.egress.rate.0 / 1_000_000;
        // Longer than `bits` at line rate: delay × rate > bits × 1e9.
        let longer = |delay_ns: u64, bits: u64| {
            u128::from(delay_ns) * rate_bps > u128::from(bits) * 1_000_000_000
        };
        let at_rate = |bits: u64| (u128::from(bits) * 1_000_000_000 / rate_bps) as u64;

        let (rx_hold, rx_what, rx_field) = if rx_delay_ns > interval_ns {
            let param = if regs.radv_1024ns.unwrap_or(0) > 0 {
                "radv_1024ns"
            } else {
                "rdtr_1024ns"
            };
            (rx_delay_ns, "the RX delay timer", field(param))
        } else {
            (interval_ns, "the interval", field(interval_param))
        };
        let rx_bits = u64::from(nic.rx_ring()) * MIN_FRAME_WIRE_BYTES * 8;
        if rx_hold > 0 && longer(rx_hold, rx_bits) {
            out.push(WarningOut {
                field: rx_field,
                message: format!(
                    "{rx_what} ({} us) is longer than the {}-descriptor RX ring takes to fill \
                     with 64-byte frames at {rate_mbps} Mb/s ({} us): a burst at line rate \
                     overflows the ring",
                    us_1(rx_hold),
                    nic.rx_ring(),
                    us_1(at_rate(rx_bits))
                ),
            });
        }

        let (tx_hold, tx_what, tx_field) = if tx_delay_ns > interval_ns {
            (tx_delay_ns, "the TX delay timer", field(tx_param))
        } else {
            (interval_ns, "the interval", field(interval_param))
        };
        let tx_bits = u64::from(nic.tx_ring()) * MIN_FRAME_WIRE_BYTES * 8;
        if tx_hold > 0 && longer(tx_hold, tx_bits) {
            out.push(WarningOut {
                field: tx_field.clone(),
                message: format!(
                    "TX completions can wait {} us ({tx_what}): the {}-descriptor TX ring \
                     drains in {} us of back-to-back 64-byte frames at {rate_mbps} Mb/s, \
                     before the TX completion interrupt refills it",
                    us_1(tx_hold),
                    nic.tx_ring(),
                    us_1(at_rate(tx_bits))
                ),
            });
        }
        let tsq_bytes = u64::from(host.tsq_limit_bytes());
        if tsq_bytes > 0 && tx_hold > 0 && longer(tx_hold, tsq_bytes * 8) {
            out.push(WarningOut {
                field: tx_field,
                message: format!(
                    "TX completions can wait {} us ({tx_what}), longer than the {} us the \
                     host's TCP output limit covers at {rate_mbps} Mb/s \
                     (hosts[{hi}].tcp.limit_output_bytes in effect: {tsq_bytes} B): a single \
                     TCP flow stalls between completions",
                    us_1(tx_hold),
                    us_1(at_rate(tsq_bytes * 8))
                ),
            });
        }
    }
    out
}
