//! Capture writers shared by the integration tests: temporary files, an
//! Ethernet/IPv4/UDP or TCP frame builder with the header fields the
//! replay decodes (addresses, ports, DSCP), and a classic pcap writer in
//! either byte order and timestamp precision.
//!
//! Units: times [ns], lengths [bytes].

use std::path::PathBuf;

pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("holdoff-replay-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

// ------------------------------------------------------------ writers

/// An Ethernet/IPv4/UDP frame of `len` bytes without FCS (at least 42).
pub fn udp_frame(len: usize, sport: u16) -> Vec<u8> {
    let mut f = vec![0u8; len.max(42)];
    f[12] = 0x08;
    f[14] = 0x45;
    f[23] = 17;
    f[26..30].copy_from_slice(&[10, 0, 1, 1]);
    f[30..34].copy_from_slice(&[10, 0, 0, 2]);
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f.truncate(len.max(14));
    f
}

pub struct Pcap {
    pub nanos: bool,
    pub be: bool,
    pub snaplen: u32,
    pub linktype: u32,
}

impl Pcap {
    pub fn header(&self) -> Vec<u8> {
        let magic: u32 = if self.nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut v = Vec::new();
        let w32 = |v: &mut Vec<u8>, x: u32| {
            v.extend(if self.be {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            })
        };
        w32(&mut v, magic);
        let (a, b) = (2u16, 4u16);
        v.extend(if self.be {
            a.to_be_bytes()
        } else {
            a.to_le_bytes()
        });
        v.extend(if self.be {
            b.to_be_bytes()
        } else {
            b.to_le_bytes()
        });
        w32(&mut v, 0);
        w32(&mut v, 0);
        w32(&mut v, self.snaplen);
        w32(&mut v, self.linktype);
        v
    }
    pub fn record(&self, t_ns: u64, frame: &[u8], caplen: Option<u32>) -> Vec<u8> {
        let mut v = Vec::new();
        let cap = caplen.unwrap_or(frame.len().min(self.snaplen as usize) as u32);
        let frac = if self.nanos {
            t_ns % 1_000_000_000
        } else {
            t_ns % 1_000_000_000 / 1000
        };
        for x in [
            (t_ns / 1_000_000_000) as u32,
            frac as u32,
            cap,
            frame.len() as u32,
        ] {
            v.extend(if self.be {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            });
        }
        v.extend(&frame[..(cap as usize).min(frame.len())]);
        v
    }
}

pub const LE: Pcap = Pcap {
    nanos: false,
    be: false,
    snaplen: 65535,
    linktype: 1,
};

/// An Ethernet/IPv4 frame of `len` bytes without FCS (at least 42):
/// protocol `proto` (17 UDP, 6 TCP), DSCP `dscp`, addresses `src` -> `dst`
/// and ports `sport` -> `dport`.
pub fn ip_frame(
    len: usize,
    proto: u8,
    dscp: u8,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
) -> Vec<u8> {
    let mut f = vec![0u8; len.max(42)];
    f[12] = 0x08;
    f[14] = 0x45;
    f[15] = dscp << 2;
    f[23] = proto;
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&dst);
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[36..38].copy_from_slice(&dport.to_be_bytes());
    f
}

/// A scenario replaying `capture` into host "server" (xeon-modern, NAPI, an
/// i350 with a static 50 us EITR) read by a UDP sink, for `duration_ms`.
/// `host`, `nic` and `generator` are extra lines of those tables.
pub fn replay_scenario(
    capture: &str,
    duration_ms: u64,
    host: &str,
    nic: &str,
    generator: &str,
) -> String {
    let host = super::host_with_nic("server", "xeon-modern", "napi", host, "eth0", "i350");
    format!(
        r#"
name = "replay"
duration_ms = {duration_ms}
{host}{nic}
[hosts.nics.moderation]
kind = "static"
eitr_us = 50
[[generators]]
name = "trace"
pattern = "replay"
capture = "{capture}"
{generator}
[[links]]
a = "trace"
b = "server.eth0"
rate = "1G"
[[apps]]
kind = "udp_sink"
name = "sink"
host = "server"
"#
    )
}
