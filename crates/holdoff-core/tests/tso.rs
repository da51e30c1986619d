//! TCP segmentation offload (`nics[].tso`): one pass through the send path
//! and one TX completion per TSO send of up to 64 KiB, the frames cut by the
//! NIC. Expected values are closed forms of the send cost and the line rate.

mod common;
use common::bulk_iperf;

/// An iperf bulk transfer a -> b between ideal hosts, where a's send path
/// costs 20 us per send (every other cost zero).
fn bulk(tso: bool) -> serde_json::Value {
    let nic = format!("tso = {tso}\n[hosts.nics.moderation]\nkind = \"static\"\nitr_per_s = 8000");
    bulk_iperf(
        "tso",
        [
            "profile_overrides = { tx_packet_ns = 20000 }\n[hosts.tcp]\nskb_truesize_bytes = 0",
            "[hosts.tcp]\nskb_truesize_bytes = 0",
        ],
        &nic,
    )
}

fn goodput_bps(r: &serde_json::Value) -> f64 {
    r["summary"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["app"] == "iperf.receiver")
        .expect("receiver")["throughput_bps"]
        .as_f64()
        .unwrap()
}

#[test]
fn without_tso_the_send_path_limits_the_sender() {
    // One 1448-byte segment per 20 us: 1448 x 8 / 20e-6 = 579.2 Mb/s.
    let g = goodput_bps(&bulk(false));
    assert!((g - 579.2e6).abs() < 0.03 * 579.2e6, "{g}");
}

#[test]
fn with_tso_one_send_carries_many_frames_and_the_line_limits() {
    // Up to 45 segments per 20 us send: the line limits, at 1448 / 1538 of
    // 1 Gb/s = 941.5 Mb/s of payload.
    let r = bulk(true);
    let g = goodput_bps(&r);
    assert!(g > 0.97 * 941.5e6, "{g}");
    // (One TX completion per send, not per frame: nic::tests::
    // a_tso_send_raises_one_tx_completion_at_its_last_frame.)
    assert!(r["summary"]["ports"][0]["tx_packets"].as_u64().unwrap() > 10_000);
}
