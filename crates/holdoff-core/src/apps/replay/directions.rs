//! Who sent and who received a replayed capture's unicast frames: a tally
//! per MAC address, so that the report can say when the capture is not one
//! host's received traffic (the same rules as the Python scan's
//! `holdoff.capture.Directions`, which `holdoff tune` applies before it
//! runs).
//!
//! - Two-way: a capture taken on a host records the frames it sent beside
//!   those it received; the busiest address that did both sent at least
//!   `TWO_WAY_MIN_SHARE` of its frames and received at least as large a
//!   share. A replay sends every frame into the port as received traffic.
//! - Several receivers: a switch or router port's capture, where no address
//!   received `ONE_RECEIVER_SHARE` of the unicast frames (judged from
//!   `MANY_RECEIVERS_MIN_FRAMES` frames on).
//!
//! Simplifies: addresses only (a host behind a bond or with macvlans shows
//! as several); records with fewer than 12 captured bytes, group
//! (multicast, broadcast) destinations and frames whose source is their
//! destination (test traffic with blank addresses) are not counted; at most `MAX_MACS`
//! addresses are followed, the frames of later ones are not counted (memory
//! stays bounded). Counted per captured record (an offload aggregate once).

use super::reader::CapturedFrame;
use std::collections::HashMap;
use std::net::IpAddr;

/// Distinct MAC addresses followed (as `holdoff.capture.MAX_MACS`).
pub const MAX_MACS: usize = 4096;
/// The share of its frames a host must have sent, and received, for the
/// capture to be two-way (as `holdoff.capture.TWO_WAY_MIN_SHARE`).
pub const TWO_WAY_MIN_SHARE: f64 = 0.01;
/// The share of the unicast frames one address must receive for the
/// capture to be one host's traffic (as `holdoff.capture.ONE_RECEIVER_SHARE`).
pub const ONE_RECEIVER_SHARE: f64 = 0.9;
/// Fewer unicast frames than this are not judged for several receivers.
pub const MANY_RECEIVERS_MIN_FRAMES: u64 = 100;

/// One address's unicast frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub mac: [u8; 6],
    /// Frames addressed to it, and sent by it.
    pub received: u64,
    pub sent: u64,
    /// The one IP address every frame to it carried (None if not one).
    pub ip: Option<IpAddr>,
}

impl Endpoint {
    /// "00:1b:21:aa:bb:01 (10.0.0.1)", or the address alone.
    pub fn name(&self) -> String {
        match self.ip {
            Some(ip) => format!("{} ({ip})", mac_text(&self.mac)),
            None => mac_text(&self.mac),
        }
    }

    /// What `only_to` takes to keep this host's frames: its IP address if
    /// it has one, else its MAC address.
    pub fn only_to(&self) -> String {
        self.ip
            .map(|ip| ip.to_string())
            .unwrap_or_else(|| mac_text(&self.mac))
    }
}

/// "00:1b:21:aa:bb:01".
pub fn mac_text(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The running tally.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub unicast: u64,
    /// More than `MAX_MACS` addresses: the later ones' frames not counted.
    pub over_limit: bool,
    index: HashMap<[u8; 6], u32>,
    ends: Vec<Endpoint>,
    /// The last two addresses looked up (a capture's frames mostly repeat them).
    recent: [Option<([u8; 6], u32)>; 2],
}

impl Tally {
    /// Count one record (its destination and source addresses).
    pub fn count(&mut self, f: &CapturedFrame) {
        let Some(src) = f.src_mac else { return };
        if f.dst_mac[0] & 1 != 0 || src == f.dst_mac {
            return;
        }
        self.unicast += 1;
        if let Some(i) = self.slot(f.dst_mac) {
            let e = &mut self.ends[i];
            e.received += 1;
            if e.received == 1 {
                e.ip = f.dst_ip;
            } else if e.ip.is_some() && e.ip != f.dst_ip {
                e.ip = None;
            }
        }
        if let Some(i) = self.slot(src) {
            self.ends[i].sent += 1;
        }
    }

    /// The index of `mac`'s counts, made if there is room.
    fn slot(&mut self, mac: [u8; 6]) -> Option<usize> {
        for (m, i) in self.recent.iter().flatten() {
            if *m == mac {
                return Some(*i as usize);
            }
        }
        let i = match self.index.get(&mac) {
            Some(&i) => i,
            None if self.ends.len() < MAX_MACS => {
                let i = self.ends.len() as u32;
                self.index.insert(mac, i);
                self.ends.push(Endpoint {
                    mac,
                    received: 0,
                    sent: 0,
                    ip: None,
                });
                i
            }
            None => {
                self.over_limit = true;
                return None;
            }
        };
        self.recent = [Some((mac, i)), self.recent[0]];
        Some(i as usize)
    }

    /// The addresses that both sent and received, most frames first (ties
    /// by address).
    pub fn hosts(&self) -> Vec<Endpoint> {
        let mut v: Vec<Endpoint> = self
            .ends
            .iter()
            .filter(|e| e.received > 0 && e.sent > 0)
            .copied()
            .collect();
        v.sort_by_key(|e| (std::cmp::Reverse(e.received + e.sent), e.mac));
        v
    }

    /// The addresses that received frames, most first (ties by address).
    pub fn receivers(&self) -> Vec<Endpoint> {
        let mut v: Vec<Endpoint> = self
            .ends
            .iter()
            .filter(|e| e.received > 0)
            .copied()
            .collect();
        v.sort_by_key(|e| (std::cmp::Reverse(e.received), e.mac));
        v
    }

    /// The capture holds a host's sent frames beside those it received.
    pub fn two_way(&self) -> bool {
        self.hosts().first().is_some_and(|h| {
            (h.sent.min(h.received) as f64) >= TWO_WAY_MIN_SHARE * (h.sent + h.received) as f64
        })
    }

    /// The share of the unicast frames the busiest receiver got (1 without any).
    pub fn main_receiver_share(&self) -> f64 {
        match self.receivers().first() {
            Some(r) if self.unicast > 0 => r.received as f64 / self.unicast as f64,
            _ => 1.0,
        }
    }

    /// No one address received `ONE_RECEIVER_SHARE` of the unicast frames.
    pub fn many_receivers(&self) -> bool {
        self.unicast >= MANY_RECEIVERS_MIN_FRAMES && self.main_receiver_share() < ONE_RECEIVER_SHARE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(dst: u8, src: u8, ip: Option<[u8; 4]>) -> CapturedFrame {
        CapturedFrame {
            ts_ns: 0,
            orig_len: 60,
            tcp: false,
            proto: 17,
            flow: 0,
            dst_mac: [0, 0x1b, 0x21, 0, 0, dst],
            src_mac: Some([0, 0x1b, 0x21, 0, 0, src]),
            dst_ip: ip.map(IpAddr::from),
            src_ip: None,
            ports: None,
            dscp: None,
            tcp_headers: None,
        }
    }

    fn tally(frames: &[(u8, u8, u64)]) -> Tally {
        let mut t = Tally::default();
        for &(d, s, n) in frames {
            for _ in 0..n {
                t.count(&frame(d, s, Some([10, 0, 0, d])));
            }
        }
        t
    }

    /// Table of direction cases: (frames as (dst, src, count), two-way,
    /// several receivers). The shares are the definitions': a host that
    /// sent 1 % of its frames is two-way; 0.9 of the frames to one address
    /// is one host's traffic.
    #[test]
    fn direction_rules() {
        type Case = (&'static [(u8, u8, u64)], bool, bool);
        let cases: &[Case] = &[
            // A one-way capture: everything to host 2 from the gateway 1.
            (&[(2, 1, 1000)], false, false),
            // Requests and replies, half each: two-way (and, counted alone,
            // no address received 90 %: the report names the two-way
            // finding only).
            (&[(2, 1, 500), (1, 2, 500)], true, true),
            // Host 2 sent 10 of its 1000 frames (1 %): two-way.
            (&[(2, 1, 990), (1, 2, 10)], true, false),
            // Host 2 sent 9 of 1000 (0.9 %): not two-way.
            (&[(2, 1, 991), (1, 2, 9)], false, false),
            // Three receivers, none with 90 % (a switch port), 300 frames.
            (&[(2, 1, 100), (3, 1, 100), (4, 1, 100)], false, true),
            // The same shape under 100 frames is not judged.
            (&[(2, 1, 30), (3, 1, 30), (4, 1, 30)], false, false),
            // 90 % to one address: one host's traffic.
            (&[(2, 1, 900), (3, 1, 100)], false, false),
        ];
        for (frames, two_way, many) in cases {
            let t = tally(frames);
            assert_eq!(t.two_way(), *two_way, "{frames:?}");
            assert_eq!(t.many_receivers(), *many, "{frames:?}");
        }
    }

    #[test]
    fn group_destinations_and_short_records_are_not_counted() {
        let mut t = Tally::default();
        t.count(&frame(2, 2, None));
        let mut bcast = frame(2, 1, None);
        bcast.dst_mac = [0xff; 6];
        t.count(&bcast);
        let mut short = frame(2, 1, None);
        short.src_mac = None;
        t.count(&short);
        assert_eq!(t.unicast, 0);
        assert!(t.receivers().is_empty());
    }

    #[test]
    fn one_ip_per_receiver_or_none() {
        let mut t = Tally::default();
        t.count(&frame(2, 1, Some([10, 0, 0, 2])));
        t.count(&frame(2, 1, Some([10, 0, 0, 2])));
        t.count(&frame(3, 1, Some([10, 0, 0, 3])));
        t.count(&frame(3, 1, Some([10, 0, 0, 9])));
        let r = t.receivers();
        assert_eq!(r[0].only_to(), "10.0.0.2");
        assert_eq!(r[0].name(), "00:1b:21:00:00:02 (10.0.0.2)");
        assert_eq!(r[1].only_to(), "00:1b:21:00:00:03");
    }

    #[test]
    fn addresses_past_the_limit_are_flagged_not_counted() {
        let mut t = Tally::default();
        for i in 0..(MAX_MACS as u32 + 10) {
            let b = i.to_be_bytes();
            let mut f = frame(0, 0, None);
            f.dst_mac = [0, 0, b[0], b[1], b[2], b[3]];
            f.src_mac = Some([2, 0, 0, 0, 0, 1]);
            t.count(&f);
        }
        assert!(t.over_limit);
        assert_eq!(t.receivers().len(), MAX_MACS - 1);
        assert_eq!(t.unicast, MAX_MACS as u64 + 10);
    }
}
