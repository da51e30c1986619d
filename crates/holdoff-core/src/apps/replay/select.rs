//! Which replayed frames to keep (`only_to`) and which to measure apart
//! (`latency_of`): filters over the header fields `reader` decodes.
//!
//! A latency selector matches a frame when every key it gives matches: a
//! port is a UDP or TCP source or destination port; an address an IPv4 or
//! IPv6 source or destination address; DSCP the six high bits of the IPv4
//! TOS byte or the IPv6 traffic class (RFC 2474); a size range the frame's
//! length as the capture records it (without the 4-byte FCS, as packet
//! analysers show it), inclusive.
//!
//! Simplifies: a frame whose headers are not decoded (non-IP, truncated,
//! IPv6 with extension headers before UDP/TCP) matches no port, address or
//! DSCP key; it can match a size range only.
//!
//! Units: sizes [bytes].

use super::reader::CapturedFrame;
use crate::apps::generator::LatencyOf;
use std::net::IpAddr;

/// Filter: frames to this IPv4/IPv6 address or MAC address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnlyTo {
    Ip(IpAddr),
    Mac([u8; 6]),
}

impl OnlyTo {
    /// Parse "10.0.0.2", "fe80::1" or "00:1b:21:aa:bb:cc".
    pub fn parse(s: &str) -> Option<OnlyTo> {
        if let Ok(ip) = s.parse::<IpAddr>() {
            return Some(OnlyTo::Ip(ip));
        }
        let parts: Vec<&str> = s.split([':', '-']).collect();
        if parts.len() != 6 {
            return None;
        }
        let mut m = [0u8; 6];
        for (i, p) in parts.iter().enumerate() {
            if p.len() != 2 {
                return None;
            }
            m[i] = u8::from_str_radix(p, 16).ok()?;
        }
        Some(OnlyTo::Mac(m))
    }
    pub(super) fn keeps(&self, f: &CapturedFrame) -> bool {
        match self {
            OnlyTo::Ip(ip) => f.dst_ip == Some(*ip),
            OnlyTo::Mac(m) => f.dst_mac == *m,
        }
    }
}

/// Largest port number.
pub const MAX_PORT: u64 = 65_535;
/// Largest DSCP value (six bits).
pub const MAX_DSCP: u64 = 63;
/// Largest frame length a size range may name [bytes] (the longest record
/// the replay reads, `MAX_RECORD_BYTES`).
pub const MAX_SELECT_BYTES: u64 = super::reader::MAX_RECORD_BYTES as u64;

/// A validated `latency_of` selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub port: Option<u16>,
    pub address: Option<IpAddr>,
    pub dscp: Option<u8>,
    /// Captured frame length range, inclusive [bytes].
    pub size: Option<(u32, u32)>,
}

/// A bad selector key: the key's name (under `latency_of`) and what is wrong.
pub type SelectorError = (&'static str, String);

impl Selector {
    /// Check a `latency_of` table; the error names the key.
    pub fn from_cfg(c: &LatencyOf) -> Result<Selector, SelectorError> {
        if c.port.is_none() && c.address.is_none() && c.dscp.is_none() && c.size.is_none() {
            return Err((
                "",
                "give at least one of port, address, dscp or size \
                 (e.g. latency_of = { port = 5000 })"
                    .into(),
            ));
        }
        let port = match c.port {
            Some(p) if p > MAX_PORT => {
                return Err(("port", format!("got {p}; allowed: 0 to {MAX_PORT}")))
            }
            p => p.map(|p| p as u16),
        };
        let dscp = match c.dscp {
            Some(d) if d > MAX_DSCP => {
                return Err((
                    "dscp",
                    format!("got {d}; allowed: 0 to {MAX_DSCP} (the six DSCP bits)"),
                ))
            }
            d => d.map(|d| d as u8),
        };
        let address = match &c.address {
            Some(a) => Some(a.trim().parse::<IpAddr>().map_err(|_| {
                (
                    "address",
                    format!(
                        "got {a:?}; allowed: an IPv4 or IPv6 address (\"10.0.0.2\", \"fe80::1\")"
                    ),
                )
            })?),
            None => None,
        };
        let size = match c.size.as_deref() {
            None => None,
            Some(&[lo, hi]) => {
                if lo > hi {
                    return Err((
                        "size",
                        format!("got [{lo}, {hi}]: the range is reversed; give [low, high] with low <= high"),
                    ));
                }
                if hi > MAX_SELECT_BYTES {
                    return Err((
                        "size",
                        format!("got [{lo}, {hi}]; allowed: lengths 0 to {MAX_SELECT_BYTES} bytes"),
                    ));
                }
                Some((lo as u32, hi as u32))
            }
            Some(v) => {
                return Err((
                    "size",
                    format!(
                        "got {} number(s); give two, [low, high] in bytes (e.g. size = [64, 300])",
                        v.len()
                    ),
                ))
            }
        };
        Ok(Selector {
            port,
            address,
            dscp,
            size,
        })
    }

    /// Every key given matches the frame.
    pub fn matches(&self, f: &CapturedFrame) -> bool {
        self.port
            .is_none_or(|p| f.ports.is_some_and(|(s, d)| s == p || d == p))
            && self
                .address
                .is_none_or(|a| f.src_ip == Some(a) || f.dst_ip == Some(a))
            && self.dscp.is_none_or(|d| f.dscp == Some(d))
            && self
                .size
                .is_none_or(|(lo, hi)| (lo..=hi).contains(&f.orig_len))
    }

    /// The selector in words, as the report names it ("port 5000, dscp 46").
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.port {
            parts.push(format!("port {p}"));
        }
        if let Some(a) = self.address {
            parts.push(format!("address {a}"));
        }
        if let Some(d) = self.dscp {
            parts.push(format!("dscp {d}"));
        }
        if let Some((lo, hi)) = self.size {
            parts.push(format!("size {lo}-{hi} bytes"));
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_to_parses_ip_and_mac() {
        assert_eq!(
            OnlyTo::parse("10.0.0.2"),
            Some(OnlyTo::Ip("10.0.0.2".parse().unwrap()))
        );
        assert_eq!(
            OnlyTo::parse("00:1b:21:aa:bb:cc"),
            Some(OnlyTo::Mac([0, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]))
        );
        assert_eq!(OnlyTo::parse("host"), None);
    }

    fn frame() -> CapturedFrame {
        CapturedFrame {
            ts_ns: 0,
            orig_len: 200,
            tcp: false,
            proto: 17,
            flow: 0,
            dst_mac: [0; 6],
            src_mac: None,
            dst_ip: Some("10.0.0.2".parse().unwrap()),
            src_ip: Some("10.0.1.1".parse().unwrap()),
            ports: Some((40000, 5000)),
            dscp: Some(46),
            tcp_headers: None,
        }
    }

    fn sel(c: LatencyOf) -> Selector {
        Selector::from_cfg(&c).unwrap()
    }

    #[test]
    fn each_key_matches_source_or_destination_and_all_keys_must_match() {
        let f = frame();
        let port = |p| LatencyOf {
            port: Some(p),
            ..LatencyOf::default()
        };
        assert!(sel(port(5000)).matches(&f)); // destination port
        assert!(sel(port(40000)).matches(&f)); // source port
        assert!(!sel(port(5001)).matches(&f));
        let addr = |a: &str| LatencyOf {
            address: Some(a.into()),
            ..LatencyOf::default()
        };
        assert!(sel(addr("10.0.1.1")).matches(&f));
        assert!(!sel(addr("10.0.0.9")).matches(&f));
        let size = |lo, hi| LatencyOf {
            size: Some(vec![lo, hi]),
            ..LatencyOf::default()
        };
        assert!(sel(size(200, 200)).matches(&f)); // inclusive
        assert!(!sel(size(201, 300)).matches(&f));
        let both = LatencyOf {
            port: Some(5000),
            dscp: Some(0),
            ..LatencyOf::default()
        };
        assert!(!sel(both).matches(&f)); // port matches, DSCP does not
                                         // A frame without decoded ports matches no port key.
        let bare = CapturedFrame {
            ports: None,
            ..frame()
        };
        assert!(!sel(port(5000)).matches(&bare));
    }
}
