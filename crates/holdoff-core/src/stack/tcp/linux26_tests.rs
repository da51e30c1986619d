//! The Linux 2.6.6 sender rules (`linux26`), each against what the 2.6.6
//! source does, driven call by call on one endpoint (the peer is played by
//! hand-made ACK segments).

use super::*;

const MSS: u64 = 1448;

fn cfg(linux26: bool) -> TcpConfig {
    TcpConfig {
        linux26_sender: linux26,
        rto_init: Nanos::from_ms(200),
        ..TcpConfig::default()
    }
}

/// An endpoint whose peer offers a 64 KB window and whose cwnd is `cwnd`.
fn sender(linux26: bool, cwnd: u32) -> TcpEndpoint {
    let mut ep = TcpEndpoint::new(cfg(linux26));
    ep.set_peer_window(65_160);
    ep.cwnd = cwnd;
    ep
}

fn at_us(us: u64) -> SimTime {
    SimTime(us * 1_000)
}

/// The peer acknowledges everything up to `ack` bytes at `now`.
fn ack(ep: &mut TcpEndpoint, now: SimTime, ack: u64) -> TcpOut {
    let mut out = TcpOut::default();
    let seg = Segment {
        seq: 0,
        len: 0,
        ack: ack as u32,
        wnd: 65_160,
    };
    ep.on_segment(now, seg, &mut out);
    out
}

fn write(ep: &mut TcpEndpoint, now: SimTime, bytes: u64) -> u64 {
    let mut out = TcpOut::default();
    ep.app_write(now, bytes, &mut out)
}

#[test]
fn cwnd_grows_only_when_the_flight_filled_it() {
    // tcp_ack (2.6.6): tcp_cong_avoid runs only if prior_in_flight >=
    // snd_cwnd. With cwnd 3: a flight of 3 acknowledged by one ACK opens
    // cwnd to 4 (slow start, +1 per ACK); a flight of 2 (the application
    // wrote less than cwnd) leaves it at 3. The rule off (the modern
    // profile's setting here), every ACK of new data opens cwnd.
    // (linux26, segments written, cwnd after the ACK of all of them)
    let table = [(true, 3, 4), (true, 2, 3), (true, 1, 3), (false, 2, 4)];
    for (linux26, segs, want) in table {
        let mut ep = sender(linux26, 3);
        assert_eq!(write(&mut ep, at_us(0), segs * MSS), segs * MSS);
        assert_eq!(ep.packets_out(), segs as u32);
        ack(&mut ep, at_us(100), segs * MSS);
        assert_eq!(ep.cwnd, want, "linux26 {linux26}, {segs} segments");
    }
}

#[test]
fn an_application_limited_sender_halves_cwnd_towards_what_it_used_each_rto() {
    // tcp_cwnd_validate / tcp_cwnd_application_limited (RFC 2861): a sender
    // that keeps 2 segments in flight against cwnd 10 for an RTO (200 ms)
    // sets cwnd = (cwnd + max(used, 2)) / 2 once per RTO since the last
    // stamp: 10 -> 6 -> 4 -> 3. The next validation gives 2, but then the
    // 2-segment flight fills cwnd, so its ACK opens cwnd again (slow start,
    // +1): seen after each ACK, a sender using 2 segments settles at 3.
    // ssthresh = max(ssthresh, 3/4 cwnd) stays at its initial "infinity".
    // A 2-segment message every ms, acknowledged 100 us later.
    let mut ep = sender(true, 10);
    let mut seen = vec![ep.cwnd];
    for ms in 0..1_100u64 {
        let t = at_us(ms * 1_000);
        write(&mut ep, t, 2 * MSS);
        ack(&mut ep, at_us(ms * 1_000 + 100), (ms + 1) * 2 * MSS);
        if seen.last() != Some(&ep.cwnd) {
            seen.push(ep.cwnd);
        }
    }
    assert_eq!(seen, vec![10, 6, 4, 3]);
    assert_eq!(ep.ssthresh, u32::MAX);
    // The rule off: cwnd is never validated (and here, without the
    // cwnd-limited gate, grows on every ACK).
    let mut ep = sender(false, 10);
    for ms in 0..1_100u64 {
        write(&mut ep, at_us(ms * 1_000), 2 * MSS);
        ack(&mut ep, at_us(ms * 1_000 + 100), (ms + 1) * 2 * MSS);
    }
    assert!(ep.cwnd > 10, "{}", ep.cwnd);
}

#[test]
fn a_sender_blocked_on_its_send_buffer_keeps_its_cwnd() {
    // tcp_cwnd_application_limited does nothing while SOCK_NOSPACE is set
    // (the sender is limited by its buffer, not by the application).
    // The stamp is renewed either way, so the next check is one RTO later.
    let mut ep = sender(true, 10);
    ep.nospace = true;
    ep.cwnd_validate(at_us(300_000));
    assert_eq!(ep.cwnd, 10);
    ep.nospace = false;
    ep.cwnd_validate(at_us(400_000));
    assert_eq!(ep.cwnd, 10, "less than an RTO since the stamp");
    ep.cwnd_validate(at_us(500_000));
    assert_eq!(ep.cwnd, 6, "(10 + max(0, 2)) / 2");
}

#[test]
fn cwnd_restarts_after_an_idle_rto() {
    // tcp_event_data_sent -> tcp_cwnd_restart when nothing is in flight and
    // the last data left more than an RTO (200 ms) ago: cwnd halves once
    // per whole RTO of idle beyond the first, not below min(initial cwnd 3,
    // cwnd). cwnd 16: idle 0.9 RTO keeps 16; 1.5 RTO halves once (8); 2.5
    // twice (4); 3.5 RTO would give 2, raised to the restart window 3.
    // (idle [us], cwnd at the next send)
    let table = [(180_000, 16), (300_000, 8), (500_000, 4), (700_000, 3)];
    for (idle_us, want) in table {
        let mut ep = sender(true, 16);
        write(&mut ep, at_us(0), MSS);
        ack(&mut ep, at_us(100), MSS);
        // The ACK of a 1-segment flight did not open cwnd.
        assert_eq!(ep.cwnd, 16);
        write(&mut ep, at_us(idle_us), MSS);
        assert_eq!(ep.cwnd, want, "idle {idle_us} us");
    }
}

#[test]
fn the_send_buffer_is_charged_by_buffer_truesize() {
    // tcp_sendmsg allocates a new MSS-sized buffer while sk_wmem_queued <
    // sk_sndbuf; each charges SKB_DATA_ALIGN(1448 + MAX_TCP_HEADER 160) +
    // sizeof(struct sk_buff) 160 = 1664 + 160 = 1824 B. Against tcp_wmem[1]
    // = 16384: 8 buffers (14592) leave room for a 9th (16416): 9 x 1448 =
    // 13032 B of a 32 KB write, and the writer blocks (SOCK_NOSPACE).
    assert_eq!(linux26_tx_truesize(1448), 1824);
    let mut ep = sender(true, 3);
    assert_eq!(write(&mut ep, at_us(0), 32_768), 13_032);
    assert!(ep.nospace);
    // Payload accounting (rule off) takes the whole 16384.
    let mut ep = sender(false, 3);
    assert_eq!(write(&mut ep, at_us(0), 32_768), 16_384);
}

#[test]
fn the_send_buffer_grows_only_after_the_writer_blocked() {
    // tcp_check_space calls tcp_new_space only for a SOCK_NOSPACE socket;
    // it sets sndbuf = 2 x max(cwnd, reordering + 1 = 4) x sndmem with
    // sndmem = 1448 + 160 + 16 + 160 = 1784, if packets_out < cwnd.
    // (writer blocked, cwnd, sndbuf after an ACK of 2 segments)
    let table = [
        // 9 segments in flight < cwnd 20: the ACK does not open cwnd.
        (true, 20, 2 * 20 * 1784),
        (true, 3, 16_384),   // 2 x 4 x 1784 = 14272 < 16384: unchanged
        (false, 20, 16_384), // never blocked: never grown
    ];
    for (blocked, cwnd, want) in table {
        let mut ep = sender(true, cwnd);
        let bytes = if blocked { 32_768 } else { 5 * MSS };
        write(&mut ep, at_us(0), bytes);
        assert_eq!(ep.nospace, blocked);
        let out = ack(&mut ep, at_us(100), 2 * MSS);
        assert_eq!(ep.sndbuf(), want, "blocked {blocked}, cwnd {cwnd}");
        // tcp_write_space wakes the writer once free >= queued / 2.
        let queued = ep.wmem_queued();
        let woke = ep.sndbuf() as u64 - queued >= queued / 2;
        assert_eq!(out.writable, !blocked || woke);
    }
    // Rule off: the buffer follows cwnd (2 x cwnd x MSS) on every ACK.
    let mut ep = sender(false, 20);
    write(&mut ep, at_us(0), 5 * MSS);
    ack(&mut ep, at_us(100), 2 * MSS);
    assert_eq!(ep.sndbuf(), 2 * 21 * 1448);
}

// ------------------------------------------------ the prequeue ACK rule

/// A receiver with the prequeue rule on or off, past its quick-ACK start
/// (interactive mode, as a NetPIPE peer that answers each message).
fn receiver(prequeue: bool) -> TcpEndpoint {
    let mut ep = TcpEndpoint::new(TcpConfig {
        linux26_prequeue: prequeue,
        ..cfg(true)
    });
    ep.quickack = 0;
    ep.pingpong = true;
    ep
}

/// `n` in-order full segments from the peer at 12 us intervals (the wire
/// time of a 1518-byte frame at 1 Gb/s, rounded); returns the pure ACKs
/// sent, as (ack, window).
fn receive(ep: &mut TcpEndpoint, n: u64, reader_waiting: bool) -> Vec<(u32, u32)> {
    let mut acks = Vec::new();
    for i in 0..n {
        let mut out = TcpOut::default();
        ep.reader_waiting = reader_waiting;
        let seg = Segment {
            seq: (i * MSS) as u32,
            len: MSS as u32,
            ack: 0,
            wnd: 65_160,
        };
        ep.on_segment(at_us(12 * i), seg, &mut out);
        acks.extend(
            out.segs
                .iter()
                .filter(|s| s.len == 0)
                .map(|s| (s.ack, s.wnd)),
        );
    }
    acks
}

#[test]
fn data_copied_to_a_blocked_reader_is_acknowledged_by_the_read() {
    // 2.6.6 tcp_rcv_established: a segment copied straight to a reader
    // blocked in recv() ("eaten", through the prequeue) is followed by
    // tcp_send_delayed_ack outside quick-ACK mode, not by
    // __tcp_ack_snd_check; the read's cleanup_rbuf then sends the ACK
    // ("Once-per-two-segments ACK was not sent by tcp_input.c") because
    // more than one MSS is unacknowledged. So 24 segments to a waiting
    // reader give no ACK while they arrive and one ACK of all 24 x 1448 =
    // 34752 bytes at the read.
    let mut ep = receiver(true);
    assert_eq!(receive(&mut ep, 24, true), vec![]);
    let mut out = TcpOut::default();
    assert_eq!(ep.app_read(at_us(400), 24 * MSS, &mut out), 24 * MSS);
    let acks: Vec<u32> = out.segs.iter().map(|s| s.ack).collect();
    assert_eq!(acks, vec![(24 * MSS) as u32]);
}

#[test]
fn without_a_waiting_reader_or_the_rule_every_second_segment_is_acknowledged() {
    // The segment is queued (no reader in recv(), or a kernel without the
    // prequeue): __tcp_ack_snd_check sends an ACK once more than one full
    // segment is unacknowledged, i.e. at segments 2, 4, ..., 24: 12 ACKs,
    // the last of 24 x 1448 bytes. Either way the read then finds nothing
    // to acknowledge.
    for (prequeue, waiting) in [(true, false), (false, true)] {
        let mut ep = receiver(prequeue);
        let acks = receive(&mut ep, 24, waiting);
        let want: Vec<u32> = (1..=12).map(|k| (2 * k * MSS) as u32).collect();
        let got: Vec<u32> = acks.iter().map(|a| a.0).collect();
        assert_eq!(got, want, "prequeue {prequeue}, reader waiting {waiting}");
        let mut out = TcpOut::default();
        ep.app_read(at_us(400), 24 * MSS, &mut out);
        assert!(
            out.segs.is_empty(),
            "prequeue {prequeue}, waiting {waiting}"
        );
    }
}

#[test]
fn a_quick_ack_goes_out_at_once_even_to_a_blocked_reader() {
    // In quick-ACK mode (the start of a connection, TCP_MAX_QUICKACKS) the
    // eaten path sends the ACK at once (tcp_send_ack): one per segment.
    let mut ep = receiver(true);
    ep.quickack = 16;
    ep.pingpong = false;
    let acks = receive(&mut ep, 4, true);
    let got: Vec<u32> = acks.iter().map(|a| a.0).collect();
    assert_eq!(got, vec![1448, 2896, 4344, 5792]);
}
