//! Capture replay: the shipped fixture, every capture format variant, every
//! kind of bad capture (with its exact error), and a property test that a
//! generator's frames written to a capture replay as the same arrivals.

mod common;

use common::capture::{replay_scenario, tmp, udp_frame, Pcap, LE};
use holdoff_core::api;
use holdoff_core::apps::generator::{GeneratorCfg, Pattern};
use holdoff_core::apps::replay::{CaptureReader, Replay, ReplaySettings};
use holdoff_core::apps::Generator;
use holdoff_core::engine::rng_stream;
use holdoff_core::units::SimTime;
use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures")
}

fn pcapng_block(btype: u32, body: &[u8], be: bool) -> Vec<u8> {
    let mut b = body.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let n = (b.len() + 12) as u32;
    let w = |x: u32| if be { x.to_be_bytes() } else { x.to_le_bytes() };
    let mut v = Vec::new();
    v.extend(w(btype));
    v.extend(w(n));
    v.extend(b);
    v.extend(w(n));
    v
}

fn shb(be: bool) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend(if be {
        0x1a2b_3c4du32.to_be_bytes()
    } else {
        0x1a2b_3c4du32.to_le_bytes()
    });
    body.extend(if be {
        1u16.to_be_bytes()
    } else {
        1u16.to_le_bytes()
    });
    body.extend([0, 0]);
    body.extend((-1i64).to_le_bytes());
    pcapng_block(0x0a0d_0d0a, &body, be)
}

fn idb(tsresol: u8, linktype: u16, be: bool) -> Vec<u8> {
    let w16 = |x: u16| if be { x.to_be_bytes() } else { x.to_le_bytes() };
    let mut body = Vec::new();
    body.extend(w16(linktype));
    body.extend([0, 0]);
    body.extend(if be {
        0u32.to_be_bytes()
    } else {
        0u32.to_le_bytes()
    });
    body.extend(w16(9));
    body.extend(w16(1));
    body.extend([tsresol, 0, 0, 0]);
    body.extend(w16(0));
    body.extend(w16(0));
    pcapng_block(1, &body, be)
}

fn epb(iface: u32, ts_units: u64, frame: &[u8], be: bool) -> Vec<u8> {
    let w = |x: u32| if be { x.to_be_bytes() } else { x.to_le_bytes() };
    let mut body = Vec::new();
    for x in [
        iface,
        (ts_units >> 32) as u32,
        ts_units as u32,
        frame.len() as u32,
        frame.len() as u32,
    ] {
        body.extend(w(x));
    }
    body.extend(frame);
    pcapng_block(6, &body, be)
}

fn spb(frame: &[u8], be: bool) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend(if be {
        (frame.len() as u32).to_be_bytes()
    } else {
        (frame.len() as u32).to_le_bytes()
    });
    body.extend(frame);
    pcapng_block(3, &body, be)
}

/// Replay settings for `path` at a speed [1/1000] and passes, MTU 1500.
fn settings(path: &Path, speed_milli: u64, loops: u32) -> ReplaySettings {
    ReplaySettings {
        path: path.to_path_buf(),
        speed_milli,
        loops,
        skip_ns: 0,
        only_to: None,
        latency_of: None,
        max_frame_bytes: 1518,
    }
}

fn read_all(path: &Path) -> Result<Vec<(u64, u32)>, String> {
    let mut r = CaptureReader::open(path).map_err(|e| e.to_string())?;
    let mut v = Vec::new();
    while let Some(f) = r.next_frame().map_err(|e| e.to_string())? {
        v.push((f.ts_ns, f.frame_bytes()));
    }
    Ok(v)
}

// ------------------------------------------------------------ formats

#[test]
fn every_format_variant_reads_the_same_frames() {
    // Three frames 1.5 us and 2.25 us apart (whole microseconds for the
    // microsecond variants would lose the 0.5 us; so the us variants use
    // whole-us gaps and the ns variants fractional ones).
    let frames = [udp_frame(1000, 1), udp_frame(42, 2), udp_frame(1514, 3)];
    let t0 = 1_700_000_000_000_000_000u64;
    let times_us = [t0, t0 + 2_000, t0 + 5_000];
    let times_ns = [t0, t0 + 1_500, t0 + 3_750];
    // Sizes: 1000 + FCS; 42 padded to 60 + FCS; 1514 + FCS.
    let sizes = [1004u32, 64, 1518];
    for (nanos, be) in [(false, false), (false, true), (true, false), (true, true)] {
        let p = Pcap {
            nanos,
            be,
            snaplen: 65535,
            linktype: 1,
        };
        let times = if nanos { times_ns } else { times_us };
        let mut b = p.header();
        for (t, f) in times.iter().zip(&frames) {
            b.extend(p.record(*t, f, None));
        }
        let path = tmp(&format!("v-{nanos}-{be}.pcap"));
        std::fs::write(&path, &b).unwrap();
        let got = read_all(&path).unwrap();
        let want: Vec<(u64, u32)> = times.iter().copied().zip(sizes).collect();
        assert_eq!(got, want, "pcap nanos={nanos} be={be}");
    }
    for be in [false, true] {
        // Interface 0 in microseconds (if_tsresol 6), interface 1 in units
        // of 2^-10 s (if_tsresol 0x8a): 1024 units = 1 s.
        let mut b = shb(be);
        b.extend(idb(6, 1, be));
        b.extend(idb(0x8a, 1, be));
        b.extend(epb(0, 1_000_000, &frames[0], be)); // 1 s
        b.extend(epb(1, 1024 + 512, &frames[1], be)); // 1.5 s
        b.extend(spb(&frames[2], be)); // no timestamp: 1.5 s
        let path = tmp(&format!("v-{be}.pcapng"));
        std::fs::write(&path, &b).unwrap();
        let got = read_all(&path).unwrap();
        assert_eq!(
            got,
            vec![
                (1_000_000_000, 1004),
                (1_500_000_000, 64),
                (1_500_000_000, 1518)
            ],
            "pcapng be={be}"
        );
    }
}

// ------------------------------------------------------------ bad captures

fn open_err(name: &str, bytes: &[u8]) -> String {
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    let e = read_all(&path).unwrap_err();
    e.replace(&path.display().to_string(), "FILE")
}

#[test]
fn bad_captures_name_file_offset_and_fault() {
    let f = udp_frame(100, 1);
    assert_eq!(
        open_err("zero.pcap", b""),
        "capture FILE: at byte 0: empty file (0 bytes): not a pcap or pcapng file"
    );
    assert_eq!(
        open_err("magic.pcap", b"GIF89a not a capture at all, but long enough to parse"),
        "capture FILE: at byte 0: unknown magic number 47494638: not pcap (a1b2c3d4, a1b23c4d, either byte order) nor pcapng (0a0d0d0a)"
    );
    // Truncated record: a whole record, then 10 bytes of the next header.
    let mut b = LE.header();
    b.extend(LE.record(1_000, &f, None));
    b.extend(&LE.record(2_000, &f, None)[..10]);
    assert_eq!(
        open_err("trunc.pcap", &b),
        "capture FILE: at byte 140: truncated record header (10 of 16 bytes before the end of the file)"
    );
    // Record length over the file: the header says 100 bytes, 40 remain.
    let mut b = LE.header();
    b.extend(&LE.record(1_000, &f, None)[..56]);
    assert_eq!(
        open_err("overfile.pcap", &b),
        "capture FILE: at byte 24: record length 100 runs past the end of the file (40 bytes left after the header)"
    );
    // Record length over snaplen 64.
    let p = Pcap { snaplen: 64, ..LE };
    let mut b = p.header();
    b.extend(p.record(1_000, &f, Some(100)));
    assert_eq!(
        open_err("snap.pcap", &b),
        "capture FILE: at byte 24: record length 100 is over the snaplen 64"
    );
    // Timestamps going backwards by more than the reordering a multi-queue
    // capture shows (10 ms): the second record is 20 ms earlier.
    let mut b = LE.header();
    b.extend(LE.record(25_000_000, &f, None));
    b.extend(LE.record(5_000_000, &f, None));
    assert_eq!(
        open_err("back.pcap", &b),
        "capture FILE: at byte 140: timestamp goes backwards: 5000000 ns is 20000000 ns earlier than \
         the previous record's 25000000 ns (more than the 10 ms a multi-queue capture reorders; files \
         joined out of order?)"
    );
    // Unsupported link type (LINKTYPE_RAW = 101).
    let p = Pcap {
        linktype: 101,
        ..LE
    };
    assert_eq!(
        open_err("raw.pcap", &p.header()),
        "capture FILE: at byte 20: unsupported link type 101 (only Ethernet, LINKTYPE_ETHERNET = 1, is replayed): \
         this is raw IP without link-layer headers (LINKTYPE_RAW); capture on an Ethernet interface, e.g. `tcpdump -i eth0 -w FILE`"
    );
    // `tcpdump -i any` writes Linux cooked captures (113, and 276 for v2): the
    // error says so and names the capture that works.
    for lt in [113, 276] {
        let p = Pcap { linktype: lt, ..LE };
        let e = open_err("any.pcap", &p.header());
        assert!(e.contains(&format!("unsupported link type {lt}")), "{e}");
        assert!(
            e.contains("tcpdump -i any") && e.contains("tcpdump -i eth0 -w FILE"),
            "{e}"
        );
    }
    // pcapng: a packet on an interface of an unsupported link type (IEEE 802.11 = 105).
    let mut b = shb(false);
    b.extend(idb(6, 105, false));
    let at = b.len();
    b.extend(epb(0, 1, &f, false));
    assert_eq!(
        open_err("wifi.pcapng", &b),
        format!("capture FILE: at byte {at}: interface 0: unsupported link type 105 (only Ethernet, LINKTYPE_ETHERNET = 1, is replayed)")
    );
    // A directory.
    let d = tmp("a-directory");
    std::fs::create_dir_all(&d).unwrap();
    let e = read_all(&d).unwrap_err();
    assert_eq!(
        e.replace(&d.display().to_string(), "FILE"),
        "capture FILE: at byte 0: is a directory, not a pcap or pcapng file"
    );
}

#[test]
fn a_bad_capture_fails_validation_naming_the_field() {
    let text = scenario_text(&tmp("missing.pcapng").display().to_string());
    let e = api::validate_toml(&text).unwrap_err().to_string();
    assert!(e.contains("generators[0].capture"), "{e}");
    assert!(e.contains("cannot open"), "{e}");
}

#[test]
fn a_record_error_mid_run_stops_the_run_with_the_error() {
    let f = udp_frame(100, 1);
    let mut b = LE.header();
    b.extend(LE.record(1_000_000_000, &f, None));
    b.extend(LE.record(500, &f, None));
    let path = tmp("midrun.pcap");
    std::fs::write(&path, &b).unwrap();
    let e = api::run_toml(&scenario_text(&path.display().to_string()), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("generators[0] (trace)"), "{e}");
    assert!(e.contains("timestamp goes backwards"), "{e}");
}

// ------------------------------------------------------------ the fixture

/// Four queues on four cores, 150 ms.
fn scenario_text(capture: &str) -> String {
    replay_scenario(capture, 150, "cores = 4", "queues = 4", "")
}

fn run_fixture(file: &str) -> Value {
    let out = api::run_toml_in(&scenario_text(file), None, None, Some(&fixtures())).unwrap();
    serde_json::from_str(&out.report_json).unwrap()
}

#[test]
fn shipped_capture_replays_every_frame() {
    // scripts/make_capture.py writes 1000 frames; two are 9014-byte TCP
    // frames over the 1500-byte MTU (offload aggregates), with 54 bytes of
    // headers (Ethernet 14, IPv4 20, TCP 20): MSS 1500 + 14 - 54 = 1460, so
    // 8960 payload bytes are 6 full segments and one of 200, 7 frames each:
    // 998 + 14 = 1012 frames, none over the MTU. The pcap and the pcapng
    // file hold the same frames.
    for file in ["office.pcapng", "office.pcap"] {
        let r = run_fixture(file);
        let s = &r["summary"];
        assert_eq!(s["ledger"]["injected"], 1012, "{file}");
        assert_eq!(s["ledger"]["balanced"], true);
        assert_eq!(s["drops"]["frame_over_mtu"], 0);
        let cap = &s["generators"][0]["capture"];
        assert_eq!(cap["frames"], 1012);
        assert_eq!(cap["complete"], true);
        assert_eq!(cap["over_mtu"], 0);
        assert_eq!(
            (cap["cut_records"].as_u64(), cap["cut_segments"].as_u64()),
            (Some(2), Some(14))
        );
        // The capture's share of TCP is over one half: the open-loop warning.
        assert!(cap["tcp_share"].as_f64().unwrap() > 0.5);
        assert!(s["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["field"] == "generators[0].capture"));
        // Flows spread over the four queues (RSS on the 5-tuple).
        let vectors = s["ports"][0]["vectors"].as_array().unwrap();
        assert!(
            vectors
                .iter()
                .filter(|v| v["interrupts"].as_u64().unwrap() > 0)
                .count()
                >= 3
        );
    }
}

// ------------------------------------------------------------ property

fn gen_cfg(rate: f64, sizes: &[u32]) -> GeneratorCfg {
    let toml = format!(
        "name = \"g\"\npattern = \"poisson\"\nrate_pps = {rate}\nframe_sizes = [{}]\nflows = 8\n",
        sizes
            .iter()
            .map(|b| format!("{{ bytes = {b}, weight = 1 }}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut c: GeneratorCfg = toml::from_str(&toml).unwrap();
    c.pattern = Pattern::Poisson;
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// A Poisson generator's frames, written as a nanosecond pcap (the frame
    /// size minus the FCS as the original length), replay with the same
    /// times (relative to the first) and the same sizes.
    #[test]
    fn a_generators_frames_replay_as_the_same_arrivals(
        seed in 0u64..1000,
        rate in 1.0e4f64..1.0e6,
        sizes in proptest::collection::vec(64u32..=1518, 1..4),
        nanos_be in 0usize..2,
    ) {
        let mut g = Generator::new(&gen_cfg(rate, &sizes), 1_000_000_000, SimTime(2_000_000), rng_stream(seed, "g"));
        let mut sent = Vec::new();
        let mut t = g.first();
        while let Some(now) = t {
            let (pkt, next) = g.emit(now);
            sent.push((now.as_ns(), pkt.frame_bytes));
            t = next;
        }
        let p = Pcap { nanos: true, be: nanos_be == 1, snaplen: 65535, linktype: 1 };
        let base = 1_600_000_000_000_000_000u64;
        let mut b = p.header();
        for (i, (t, bytes)) in sent.iter().enumerate() {
            b.extend(p.record(base + t, &udp_frame(*bytes as usize - 4, i as u16), None));
        }
        let path = tmp(&format!("prop-{seed}-{nanos_be}.pcap"));
        std::fs::write(&path, &b).unwrap();
        let mut r = Replay::open(settings(&path, 1000, 1)).unwrap();
        let mut got = Vec::new();
        while let Some(rel) = r.advance() {
            let (f, _) = r.take().unwrap();
            got.push((rel, f.frame_bytes()));
        }
        let t0 = sent.first().map(|s| s.0).unwrap_or(0);
        let want: Vec<(u64, u32)> = sent.iter().map(|(t, b)| (t - t0, *b)).collect();
        prop_assert_eq!(got, want);
        std::fs::remove_file(&path).ok();
    }
}

#[test]
fn loops_and_speed_scale_the_schedule() {
    // Frames at 0, 10 and 30 us: at speed 2 they come at 0, 5, 15 us; a
    // second pass starts one mean gap (15 us of capture time, 7.5 us
    // replayed) after the last frame: 22.5, 27.5, 37.5 us.
    let f = udp_frame(100, 1);
    let mut b = LE.header();
    for t in [1_000_000u64, 1_010_000, 1_030_000] {
        b.extend(LE.record(t, &f, None));
    }
    let path = tmp("loops.pcap");
    std::fs::write(&path, &b).unwrap();
    let mut r = Replay::open(settings(&path, 2000, 2)).unwrap();
    let mut got = Vec::new();
    while let Some(rel) = r.advance() {
        r.take();
        got.push(rel);
    }
    assert_eq!(got, vec![0, 5_000, 15_000, 22_500, 27_500, 37_500]);
    assert_eq!(r.stats.frames, 3);
}

/// The many-flow capture: 14 336 frames in 8.943 ms. xeon-modern spends
/// rx_packet_ns = 0.9 us of softirq a frame, so one core needs at least
/// 14 336 x 0.9 us = 12.9 ms, 1.44x the span. With every queue vector on
/// core 0 and rings of 4096 nothing is dropped (the rings hold the
/// backlog and the run drains it after the last frame): the run warns at
/// the capture. With the vectors on two cores (at most 0.72x each when
/// split evenly) it does not.
#[test]
fn a_replay_whose_core_drains_it_after_its_end_is_warned() {
    let cap = fixtures().join("many-flows.pcap");
    let text = |cores: &str| {
        format!(
            "name = \"one-core\"\nseed = 1\nduration_ms = 19\n\
             [[hosts]]\nname = \"dut\"\nprofile = \"xeon-modern\"\ndriver = \"napi\"\ncores = 8\n\
             [[hosts.nics]]\nname = \"eth0\"\nchip = \"82599\"\nqueues = 8\nrss = true\n\
             rx_ring = 4096\nirq_cores = [{cores}]\n\
             [hosts.nics.moderation]\nkind = \"ixgbe\"\nrx_usecs = 250\n\
             [[generators]]\nname = \"cap\"\npattern = \"replay\"\ncapture = {:?}\n\
             [[links]]\na = \"cap\"\nb = \"dut.eth0\"\nrate = \"10G\"\n\
             [[apps]]\nkind = \"udp_sink\"\nname = \"sink\"\nhost = \"dut\"\n",
            cap.display().to_string()
        )
    };
    let warned = |cores: &str| -> (Vec<String>, u64) {
        let out = api::run_toml(&text(cores), None).expect("runs");
        let report: Value = serde_json::from_str(&out.report_json).unwrap();
        let s = &report["summary"];
        let w = s["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["field"] == "generators[0].capture")
            .map(|w| w["message"].as_str().unwrap().to_string())
            .collect();
        (w, s["ledger"]["dropped"].as_u64().unwrap())
    };
    let (w, dropped) = warned("0, 0, 0, 0, 0, 0, 0, 0");
    assert_eq!(dropped, 0);
    assert_eq!(w.len(), 1, "{w:?}");
    let lower = 14_336.0 * 0.9e-3; // ms
    let need: f64 = w[0]
        .split("needed ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|x| x.parse().ok())
        .unwrap();
    assert!(lower <= need && need <= 1.2 * lower, "{}", w[0]);
    assert!(
        w[0].contains("for the 8.94 ms the capture lasts"),
        "{}",
        w[0]
    );
    let (w, _) = warned("0, 1, 0, 1, 0, 1, 0, 1");
    assert!(w.is_empty(), "{w:?}");
}

/// A TCP frame of `len` bytes whose header says `doff` 32-bit words.
fn tcp_frame(len: usize, doff: u8) -> Vec<u8> {
    let mut f = common::capture::ip_frame(len, 6, 0, [10, 0, 1, 1], [10, 0, 0, 2], 40000, 443);
    f[14 + 20 + 12] = doff << 4;
    f
}

#[test]
fn offload_aggregates_are_cut_into_wire_segments() {
    // Headers 14 + 20 + 32 (TCP with 12 bytes of options) = 66 bytes, so
    // the MSS at MTU 1500 is 1500 + 14 - 66 = 1448: a 4510-byte record
    // (4444 payload bytes = 3 x 1448 + 100) is 3 frames of 1514 bytes and
    // one of 166, all at the record's time. A 5000-byte UDP datagram and a
    // TCP record whose data offset is invalid (0) stay over the MTU.
    let path = tmp("gro.pcap");
    let mut b = LE.header();
    b.extend(LE.record(1_000_000, &tcp_frame(4510, 8), None));
    b.extend(LE.record(2_000_000, &udp_frame(5000, 7), None));
    b.extend(LE.record(3_000_000, &tcp_frame(3000, 0), None));
    std::fs::write(&path, &b).unwrap();
    let mut r = Replay::open(settings(&path, 1000, 1)).unwrap();
    let mut got = Vec::new();
    while let Some(rel) = r.advance() {
        got.push((rel, r.take().unwrap().0.orig_len));
    }
    assert_eq!(
        got,
        [
            (0, 1514),
            (0, 1514),
            (0, 1514),
            (0, 166),
            (1_000_000, 5000),
            (2_000_000, 3000)
        ]
    );
    let st = &r.stats;
    assert_eq!(
        (st.frames, st.cut_records, st.cut_segments, st.over_mtu),
        (6, 1, 4, 2)
    );
    // 3 x 1518 + 170 with FCS, then the two over the MTU with theirs.
    assert_eq!(st.bytes, 3 * 1518 + 170 + 5004 + 3004);
    // In a run the segments leave back to back at line rate and arrive;
    // the two long frames are dropped as over the MTU.
    let text = replay_scenario(path.to_str().unwrap(), 10, "", "", "");
    let out = api::run_toml(&text, None).unwrap();
    let v: Value = serde_json::from_str(&out.report_json).unwrap();
    let s = &v["summary"];
    assert_eq!(s["ledger"]["injected"], 6);
    assert_eq!(s["drops"]["frame_over_mtu"], 2);
    assert_eq!(s["ledger"]["delivered"], 4);
}

#[test]
fn records_stamped_slightly_out_of_order_are_replayed_in_file_order() {
    // A multi-queue capture: the third record is stamped 3 us before the
    // second. It is read at the second's time (back to back behind it),
    // counted, and the largest step back is kept.
    let f = udp_frame(100, 1);
    let mut b = LE.header();
    for t in [1_000_000, 1_010_000, 1_007_000, 1_020_000] {
        b.extend(LE.record(t, &f, None));
    }
    let path = tmp("reorder.pcap");
    std::fs::write(&path, &b).unwrap();
    let mut r = Replay::open(settings(&path, 1000, 1)).unwrap();
    let mut got = Vec::new();
    while let Some(rel) = r.advance() {
        r.take();
        got.push(rel);
    }
    assert_eq!(got, [0, 10_000, 10_000, 20_000]);
    assert_eq!((r.stats.reordered, r.stats.max_step_back_ns), (1, 3_000));
}
