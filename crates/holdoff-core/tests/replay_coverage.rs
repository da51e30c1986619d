//! What a replay did not simulate as captured, in the report itself: the
//! share of the file a shorter run read, frames the line made late (against
//! the wire's closed form), and captures that are not one host's received
//! traffic (two-way, several receivers), with `only_to` as the way out.
//!
//! Units: times [ns], sizes [bytes].

mod common;

use common::capture::{ip_frame, replay_scenario, tmp, Pcap, LE};
use holdoff_core::api;
use serde_json::Value;

/// Client and server addresses of the test frames.
const CLIENT_MAC: [u8; 6] = [0x00, 0x1b, 0x21, 0xaa, 0xbb, 0x01];
const SERVER_MAC: [u8; 6] = [0x00, 0x1b, 0x21, 0xaa, 0xbb, 0x02];
const CLIENT_IP: [u8; 4] = [10, 0, 0, 1];
const SERVER_IP: [u8; 4] = [10, 0, 0, 2];

/// A UDP frame of `len` bytes, client to server (`reply`: server to client).
fn frame(len: usize, reply: bool) -> Vec<u8> {
    let (sm, dm, si, di) = if reply {
        (SERVER_MAC, CLIENT_MAC, SERVER_IP, CLIENT_IP)
    } else {
        (CLIENT_MAC, SERVER_MAC, CLIENT_IP, SERVER_IP)
    };
    let mut f = ip_frame(len, 17, 0, si, di, 40000, 5000);
    f[..6].copy_from_slice(&dm);
    f[6..12].copy_from_slice(&sm);
    f
}

/// Write a classic pcap with nanosecond stamps of (time, frame) records;
/// its path and size [bytes].
fn write(name: &str, records: &[(u64, Vec<u8>)]) -> (String, u64) {
    let ns = Pcap { nanos: true, ..LE };
    let mut bytes = ns.header();
    for (t, f) in records {
        bytes.extend(ns.record(*t, f, None));
    }
    let path = tmp(name);
    std::fs::write(&path, &bytes).unwrap();
    (path.display().to_string(), bytes.len() as u64)
}

/// Run `capture` for `duration_ms` on the 1G replay scenario with extra
/// generator lines and link rate; the report's summary.
fn run(capture: &str, duration_ms: u64, generator: &str, rate: &str) -> Value {
    let text = replay_scenario(capture, duration_ms, "", "", generator)
        .replace("rate = \"1G\"", &format!("rate = \"{rate}\""));
    let out = api::run_toml(&text, Some(1)).expect("runs");
    let report: Value = serde_json::from_str(&out.report_json).unwrap();
    report["summary"].clone()
}

fn warnings(s: &Value, field: &str) -> Vec<String> {
    s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["field"] == field)
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect()
}

/// 1000 frames of 200 bytes, one every 100 us (99.9 ms). A classic pcap is
/// a 24-byte header and a 16-byte header plus the captured bytes per record
/// (draft-ietf-opsawg-pcap), so the first k records end at 24 + 216 k. A
/// 10 ms run sends the 100 frames stamped before 10 ms and reads one more
/// ahead (the replay reads the next frame to know when to send it): 101
/// records. A 110 ms run reads the whole file and is not warned.
#[test]
fn a_run_shorter_than_its_capture_says_how_much_of_the_file_it_read() {
    let recs: Vec<(u64, Vec<u8>)> = (0..1000)
        .map(|i| (i * 100_000, frame(200, false)))
        .collect();
    let (cap, size) = write("coverage.pcap", &recs);
    assert_eq!(size, 24 + 1000 * 216);

    let s = run(&cap, 10, "", "1G");
    let c = &s["generators"][0]["capture"];
    assert_eq!(c["complete"], false);
    assert_eq!(c["file_bytes"], size);
    assert_eq!(c["frames"], 101);
    assert_eq!(c["read_bytes"], 24 + 101 * 216);
    let w = warnings(&s, "duration_ms");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("read the first 101 frames (10.000 ms of capture time)"),
        "{}",
        w[0]
    );
    assert!(
        w[0].contains("10.11 % of the file (21840 of 216024 bytes)"),
        "{}",
        w[0]
    );

    let s = run(&cap, 110, "", "1G");
    let c = &s["generators"][0]["capture"];
    assert_eq!(c["complete"], true);
    assert_eq!(c["read_bytes"], size);
    assert!(warnings(&s, "duration_ms").is_empty());
}

/// 2000 frames of 1514 bytes stamped 1.23 us apart (a 10 Gb/s capture).
/// On a 1 Gb/s link each takes (1514 + 4 FCS + 20 preamble and gap) x 8 =
/// 12 304 ns, so frame k leaves at 12 304 k instead of 1 230 k: every
/// frame but the first is late, the last by 1999 x 11 074 ns. On a 10 Gb/s
/// link a frame takes 1 230.4 ns: frame k is late by 0.4 k ns, under 1 us
/// at the last, below the warning's 100 us.
#[test]
fn frames_the_line_holds_back_are_counted_and_warned() {
    let recs: Vec<(u64, Vec<u8>)> = (0..2000).map(|i| (i * 1230, frame(1514, false))).collect();
    let (cap, _) = write("late.pcap", &recs);

    let s = run(&cap, 40, "", "1G");
    let c = &s["generators"][0]["capture"];
    assert_eq!(c["late_frames"], 1999);
    assert_eq!(c["max_late_ns"], 1999 * 11_074);
    let w = warnings(&s, "generators[0].capture");
    assert!(
        w.iter()
            .any(|m| m.contains("1999 frames left later than captured, the latest by 22.137 ms")),
        "{w:?}"
    );

    let s = run(&cap, 40, "", "10G");
    let c = &s["generators"][0]["capture"];
    let late = c["max_late_ns"].as_u64().unwrap();
    assert!(late <= 1999 * 4 / 10 + 1, "{late}");
    let w = warnings(&s, "generators[0].capture");
    assert!(
        !w.iter().any(|m| m.contains("later than captured")),
        "{w:?}"
    );
}

/// Requests and their replies, as a capture on either host records them:
/// both addresses received and sent half the frames. The report says so
/// and names the `only_to` that keeps the server's received frames; with
/// it, the run replays 500 frames and says nothing.
#[test]
fn a_two_way_capture_is_warned_and_only_to_keeps_one_side() {
    let recs: Vec<(u64, Vec<u8>)> = (0..1000)
        .map(|i| {
            (
                i * 100_000,
                frame(if i % 2 == 0 { 200 } else { 1400 }, i % 2 == 1),
            )
        })
        .collect();
    let (cap, _) = write("two-way.pcap", &recs);

    let s = run(&cap, 110, "", "1G");
    let w = warnings(&s, "generators[0].only_to");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("holds frames both ways"), "{}", w[0]);
    assert!(
        w[0].contains("00:1b:21:aa:bb:01 (10.0.0.1) received 500 and sent 500"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("only_to = \"10.0.0.2\""), "{}", w[0]);

    let s = run(&cap, 110, "only_to = \"10.0.0.2\"", "1G");
    assert_eq!(s["generators"][0]["sent_packets"], 500);
    assert!(warnings(&s, "generators[0].only_to").is_empty());
}

/// A switch port's capture: frames from one gateway to four hosts in turn,
/// 25 % each, under the 90 % one host's traffic needs.
#[test]
fn a_capture_of_several_hosts_is_warned() {
    let recs: Vec<(u64, Vec<u8>)> = (0..400u64)
        .map(|i| {
            let mut f = frame(200, false);
            f[5] = 0x10 + (i % 4) as u8;
            f[33] = 10 + (i % 4) as u8;
            (i * 100_000, f)
        })
        .collect();
    let (cap, _) = write("several.pcap", &recs);
    let s = run(&cap, 50, "", "1G");
    let w = warnings(&s, "generators[0].only_to");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("holds several hosts' traffic"), "{}", w[0]);
    assert!(
        w[0].contains("received 25.0 % of its 400 unicast frames"),
        "{}",
        w[0]
    );
}

/// A server's capture with three clients: each client sent 100 requests
/// and got 100 replies, so the server took part in all 600 frames and each
/// client in 200. The value to keep is the server's (the frames it
/// received), not one client's.
#[test]
fn a_servers_two_way_capture_names_the_server() {
    let mut recs = Vec::new();
    for i in 0..300u64 {
        let c = (i % 3) as u8;
        let mut req = frame(200, false);
        req[11] = 0x10 + c; // client MAC
        req[29] = 10 + c; // client IP
        let mut rep = frame(1400, true);
        rep[5] = 0x10 + c;
        rep[33] = 10 + c;
        recs.push((i * 200_000, req));
        recs.push((i * 200_000 + 50_000, rep));
    }
    let (cap, _) = write("server.pcap", &recs);
    let s = run(&cap, 70, "", "1G");
    let w = warnings(&s, "generators[0].only_to");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("00:1b:21:aa:bb:02 (10.0.0.2) received 300 and sent 300"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("only_to = \"10.0.0.2\""), "{}", w[0]);
}
