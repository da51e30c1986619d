//! Generic receive offload (`nics[].gro`): in one RX clean pass,
//! consecutive in-order TCP frames of one connection go up the stack as one
//! receive. Expected values are closed forms of the receive costs.

mod common;
use common::bulk_iperf;

/// iperf a -> b between ideal hosts for 200 ms, ITR 8000/s, where b's
/// receive costs 10 us per packet, 1 us of it the driver's share.
fn bulk(gro: bool) -> serde_json::Value {
    let nic = format!("gro = {gro}\n[hosts.nics.moderation]\nkind = \"static\"\nitr_per_s = 8000");
    bulk_iperf(
        "gro",
        [
            "[hosts.tcp]\nskb_truesize_bytes = 0",
            "profile_overrides = { rx_packet_ns = 10000, rx_driver_ns = 1000 }\n[hosts.tcp]\nskb_truesize_bytes = 0",
        ],
        &nic,
    )
}

/// (frames b received, frames b sent = its ACKs, b's CPU busy fraction).
fn receiver(r: &serde_json::Value) -> (f64, f64, f64) {
    let s = &r["summary"];
    assert_eq!(s["ledger"]["balanced"], true);
    let b = &s["ports"][1];
    (
        b["rx_packets"].as_f64().unwrap(),
        b["tx_packets"].as_f64().unwrap(),
        s["hosts"][1]["cpu_util"]["busy"].as_f64().unwrap(),
    )
}

#[test]
fn without_gro_every_frame_pays_the_whole_receive() {
    // busy = frames x 10 us / 200 ms (every other cost is zero).
    let (frames, _, busy) = receiver(&bulk(false));
    let want = frames * 10e-6 / 0.2;
    assert!(
        (busy - want).abs() < 0.01 * want,
        "busy {busy}, expected {want}"
    );
}

#[test]
fn with_gro_a_receive_pays_the_protocol_share_once_and_acks_once() {
    // Each frame pays the driver's 1 us; each merged receive pays the other
    // 9 us once and, holding more than one MSS, is acknowledged at once
    // (more than a full segment since the last ACK): receives = ACKs, so
    // busy = (frames x 1 us + ACKs x 9 us) / 200 ms.
    let (frames, acks, busy) = receiver(&bulk(true));
    let want = (frames * 1e-6 + acks * 9e-6) / 0.2;
    assert!(
        (busy - want).abs() < 0.02 * want,
        "busy {busy}, expected {want}"
    );
    // One receive per interrupt's pass at line rate: about 81 300 frames/s
    // over 8000 passes/s, some 10 frames each; at least 5 here.
    assert!(acks * 5.0 < frames, "{acks} ACKs for {frames} frames");
}
