//! RSS: the Toeplitz hash against the published verification suite, and
//! the redirection table against its closed-form fills.

use super::*;
use std::net::{Ipv4Addr, Ipv6Addr};

fn v4(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16) -> FiveTuple {
    FiveTuple {
        src: IpAddr::V4(Ipv4Addr::from(src)),
        dst: IpAddr::V4(Ipv4Addr::from(dst)),
        proto,
        sport,
        dport,
    }
}

fn port(udp_ports: bool) -> Rss {
    Rss::new(
        MS_VERIFICATION_KEY,
        HashFields { udp_ports },
        fill_reta(128, 1, &RetaFill::Equal).unwrap(),
    )
}

/// Microsoft RSS specification, "Verifying the RSS Hash Calculation", IPv4
/// table (the same five rows are the 82599 datasheet's §7.1.2.8.3 suite):
/// (source, destination, source port, destination port, hash of the
/// addresses, hash of the addresses and ports), with the specification's key.
type SuiteRow = ([u8; 4], [u8; 4], u16, u16, u32, u32);
const SUITE_V4: [SuiteRow; 5] = [
    (
        [66, 9, 149, 187],
        [161, 142, 100, 80],
        2794,
        1766,
        0x323e_8fc2,
        0x51cc_c178,
    ),
    (
        [199, 92, 111, 2],
        [65, 69, 140, 83],
        14230,
        4739,
        0xd718_262a,
        0xc626_b0ea,
    ),
    (
        [24, 19, 198, 95],
        [12, 22, 207, 184],
        12898,
        38024,
        0xd2d0_a5de,
        0x5c2b_394a,
    ),
    (
        [38, 27, 205, 30],
        [209, 142, 163, 6],
        48228,
        2217,
        0x8298_9176,
        0xafc7_327f,
    ),
    (
        [153, 39, 163, 191],
        [202, 188, 127, 2],
        44251,
        1303,
        0x5d18_09c5,
        0x10e8_28a2,
    ),
];

#[test]
fn toeplitz_matches_the_verification_suite_ipv4() {
    let sd = port(false);
    let sdfn = port(true);
    for (src, dst, sp, dp, h2, h4) in SUITE_V4 {
        // TCP hashes the 4-tuple.
        assert_eq!(sd.hash(&v4(src, dst, PROTO_TCP, sp, dp)), h4);
        // UDP: addresses only by default ("sd"), the 4-tuple with "sdfn".
        assert_eq!(sd.hash(&v4(src, dst, PROTO_UDP, sp, dp)), h2);
        assert_eq!(sdfn.hash(&v4(src, dst, PROTO_UDP, sp, dp)), h4);
        // Other IP protocols: addresses.
        assert_eq!(sdfn.hash(&v4(src, dst, 1, 0, 0)), h2);
    }
}

#[test]
fn toeplitz_matches_the_verification_suite_ipv6() {
    // The specification's IPv6 table, first row: destination
    // 3ffe:2501:200:3::1 port 1766, source 3ffe:2501:200:1fff::7 port 2794.
    let t = FiveTuple {
        src: IpAddr::V6("3ffe:2501:200:1fff::7".parse::<Ipv6Addr>().unwrap()),
        dst: IpAddr::V6("3ffe:2501:200:3::1".parse::<Ipv6Addr>().unwrap()),
        proto: PROTO_TCP,
        sport: 2794,
        dport: 1766,
    };
    assert_eq!(port(false).hash(&t), 0x4020_7d3d);
    assert_eq!(
        port(false).hash(&FiveTuple {
            proto: PROTO_UDP,
            ..t
        }),
        0x2cc1_8cd5
    );
}

#[test]
fn another_key_moves_the_hash() {
    let mut key = MS_VERIFICATION_KEY;
    key[0] ^= 0x80;
    let r = Rss::new(key, HashFields { udp_ports: false }, vec![0]);
    let (src, dst, sp, dp, h2, _) = SUITE_V4[0];
    // Input bit i XORs in key bits i..i+31, so key bit 0 only enters the
    // window of input bit 0 (the source address's top bit), as the hash's
    // top bit. 66 = 0b0100_0010 has it clear: the hash is unchanged.
    assert_eq!(r.hash(&v4(src, dst, PROTO_UDP, sp, dp)), h2);
    // With it set (194 = 66 | 0x80) the hash's top bit flips.
    let h_ms = port(false).hash(&v4([194, 9, 149, 187], dst, PROTO_UDP, sp, dp));
    let h_new = r.hash(&v4([194, 9, 149, 187], dst, PROTO_UDP, sp, dp));
    assert_eq!(h_ms ^ h_new, 0x8000_0000);
}

#[test]
fn tag_marks_a_hash_and_keeps_its_low_bits() {
    assert_eq!(tag(0x1234_5678), 0x8000 | 0x5678);
    assert_eq!(tag(0xffff_ffff), 0xffff);
    assert_eq!(tag(0) & HASHED, HASHED);
    // A frame's record stays within 32 bytes with the tag.
    assert!(std::mem::size_of::<crate::packet::Packet>() <= 32);
}

fn counts(reta: &[u16], queues: usize) -> Vec<usize> {
    let mut c = vec![0; queues];
    for &q in reta {
        c[q as usize] += 1;
    }
    c
}

#[test]
fn equal_spreading_is_j_mod_queues() {
    // ixgbe_setup_reta: entry j -> j mod queues; 128 entries over 8 queues
    // = 16 each, over 3 queues = ceil(128/3) = 43, 43, and 128 - 86 = 42.
    let t = fill_reta(128, 8, &RetaFill::Equal).unwrap();
    assert_eq!(counts(&t, 8), vec![16; 8]);
    assert!(t.iter().enumerate().all(|(j, &q)| q as usize == j % 8));
    assert_eq!(
        counts(&fill_reta(128, 3, &RetaFill::Equal).unwrap(), 3),
        vec![43, 43, 42]
    );
    // X550: 512 entries over 6 queues: 512 = 6 * 85 + 2 -> 86, 86, 85 x 4.
    assert_eq!(
        counts(&fill_reta(512, 6, &RetaFill::Equal).unwrap(), 6),
        vec![86, 86, 85, 85, 85, 85]
    );
}

#[test]
fn weights_fill_as_ethtool_does() {
    // ethtool fill_indir_table: queue j holds the entries i with
    // floor(size * W(j-1) / sum) <= i < floor(size * W(j) / sum), W the
    // cumulative weights. [1, 1, 2] on 128: boundaries 32, 64, 128.
    let t = fill_reta(128, 3, &RetaFill::Weights(vec![1, 1, 2])).unwrap();
    assert_eq!(counts(&t, 3), vec![32, 32, 64]);
    assert!(t[..32].iter().all(|&q| q == 0) && t[64..].iter().all(|&q| q == 2));
    // [1, 2] on 128: boundary floor(128 / 3) = 42 -> 42 and 86.
    assert_eq!(
        counts(
            &fill_reta(128, 2, &RetaFill::Weights(vec![1, 2])).unwrap(),
            2
        ),
        vec![42, 86]
    );
    // A zero weight empties its queue; missing weights are zero.
    let t = fill_reta(128, 4, &RetaFill::Weights(vec![0, 3, 1])).unwrap();
    assert_eq!(counts(&t, 4), vec![0, 96, 32, 0]);
}

#[test]
fn bad_weights_are_refused() {
    assert_eq!(
        fill_reta(128, 2, &RetaFill::Weights(vec![1, 1, 1])),
        Err(RetaError::TooManyWeights {
            weights: 3,
            queues: 2
        })
    );
    assert_eq!(
        fill_reta(128, 2, &RetaFill::Weights(vec![0, 0])),
        Err(RetaError::ZeroSum)
    );
    assert_eq!(
        fill_reta(128, 2, &RetaFill::Weights(vec![100, 29])),
        Err(RetaError::SumOverSize {
            sum: 129,
            entries: 128
        })
    );
}

#[test]
fn queue_of_hash_uses_the_low_bits() {
    let r = Rss::new(
        MS_VERIFICATION_KEY,
        HashFields { udp_ports: false },
        fill_reta(128, 8, &RetaFill::Equal).unwrap(),
    );
    // Low 7 bits index the table; the tag bit (15) and bits 7-14 do not.
    assert_eq!(r.queue_of_hash(tag(0x0000_0005)), 5);
    assert_eq!(r.queue_of_hash(tag(0x0000_7f85)), 5);
    assert_eq!(r.queue_of_hash(0x7f), 7);
}

#[test]
fn keys_parse_with_or_without_separators() {
    let hex: String = MS_VERIFICATION_KEY
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(parse_key(&hex), Ok(MS_VERIFICATION_KEY));
    let colons: Vec<String> = MS_VERIFICATION_KEY
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    assert_eq!(parse_key(&colons.join(":")), Ok(MS_VERIFICATION_KEY));
    assert!(parse_key("6d:5a").unwrap_err().contains("40 bytes"));
    assert!(parse_key(&"zz".repeat(40)).is_err());
}

/// A port of the 82576 in MSI-X mode with `queues` queues, rings longer
/// than any test sends (no ring drop), and `rss`.
fn rss_port(queues: u32, rss: Rss) -> crate::nic::NicPort {
    use crate::nic::{IntMode, NicPort, PortConfig};
    use crate::units::{BitsPerSec, Nanos};
    let chip = crate::nic::chip::by_name("82576").unwrap();
    let cfg = PortConfig {
        rx_ring: 4096,
        tx_ring: 64,
        queues,
        mode: IntMode::Msix,
        set_ide: false,
        rdmts_shift: 1,
        legacy_itr: chip.legacy_itr,
        max_frame_bytes: 1518,
        gro: false,
        eitr_cnt_ignr: true,
    };
    let mut p = NicPort::new(
        chip,
        cfg,
        crate::wire::LinkDir::new(BitsPerSec::GIGABIT, Nanos(0)),
    );
    p.set_rss(rss);
    p
}

/// Send frames carrying `tags` 1 us apart into `port` and complete their
/// DMA in time order.
fn receive(port: &mut crate::nic::NicPort, tags: &[u16]) {
    use crate::engine::EventQueue;
    use crate::nic::{NicEvent, NicOut};
    use crate::packet::{Packet, PktKind};
    use crate::units::SimTime;
    let mut q: EventQueue<NicEvent> = EventQueue::new();
    let mut out = NicOut::default();
    for (i, &t) in tags.iter().enumerate() {
        let now = SimTime(i as u64 * 1000);
        while let Some((at, ev)) = q.pop_until(now) {
            if let NicEvent::RxDmaDone { queue } = ev {
                port.rx_dma_done(at, queue, &mut out);
            }
        }
        let mut pkt = Packet::datagram(PktKind::Udp, now, 64, i as u32, 0);
        pkt.rss = t;
        port.frame_arrived(now, pkt, &mut out);
        for (at, ev) in out.drain_events() {
            if matches!(ev, NicEvent::RxDmaDone { .. }) {
                q.schedule(at, ev);
            }
        }
        out.clear();
    }
    while let Some((at, ev)) = q.pop_until(SimTime(u64::MAX / 2)) {
        if let NicEvent::RxDmaDone { queue } = ev {
            port.rx_dma_done(at, queue, &mut out);
        }
        out.clear();
    }
}

proptest::proptest! {
    /// The port's table-driven hash equals the bitwise definition on any
    /// key and any IPv4 or IPv6 tuple, with and without ports.
    #[test]
    fn table_hash_equals_the_bitwise_definition(
        key in proptest::collection::vec(proptest::prelude::any::<u8>(), KEY_BYTES),
        a in proptest::collection::vec(proptest::prelude::any::<u8>(), 32),
        sport in proptest::prelude::any::<u16>(),
        dport in proptest::prelude::any::<u16>(),
        v6 in proptest::prelude::any::<bool>(),
        proto in proptest::prop_oneof![proptest::prelude::Just(PROTO_TCP), proptest::prelude::Just(PROTO_UDP), proptest::prelude::Just(1u8)],
    ) {
        let key: [u8; KEY_BYTES] = key.try_into().unwrap();
        let r = Rss::new(key, HashFields { udp_ports: true }, vec![0]);
        let (src, dst, mut input) = if v6 {
            let s: [u8; 16] = a[..16].try_into().unwrap();
            let d: [u8; 16] = a[16..].try_into().unwrap();
            (IpAddr::from(s), IpAddr::from(d), a.clone())
        } else {
            let s: [u8; 4] = a[..4].try_into().unwrap();
            let d: [u8; 4] = a[4..8].try_into().unwrap();
            (IpAddr::from(s), IpAddr::from(d), a[..8].to_vec())
        };
        if proto != 1 {
            input.extend_from_slice(&sport.to_be_bytes());
            input.extend_from_slice(&dport.to_be_bytes());
        }
        let t = FiveTuple { src, dst, proto, sport, dport };
        proptest::prop_assert_eq!(r.hash(&t), toeplitz(&key, &input));
    }

    /// Conservation across queues: every frame is received exactly once,
    /// in the queue its table entry (hash mod 128) names; queues whose
    /// weight is 0 get nothing.
    #[test]
    fn every_frame_lands_in_the_queue_its_entry_names(
        queues in 1u32..=8,
        weights in proptest::collection::vec(0u32..4, 0..=8),
        hashes in proptest::collection::vec(proptest::prelude::any::<u32>(), 1..200),
    ) {
        let fill = if !weights.is_empty()
            && weights.len() <= queues as usize
            && weights.iter().any(|&w| w > 0)
        {
            RetaFill::Weights(weights.clone())
        } else {
            RetaFill::Equal
        };
        let reta = fill_reta(128, queues, &fill).unwrap();
        let mut expected = vec![0u64; queues as usize];
        for &h in &hashes {
            expected[reta[(h % 128) as usize] as usize] += 1;
        }
        let rss = Rss::new(MS_VERIFICATION_KEY, HashFields { udp_ports: false }, reta);
        let mut port = rss_port(queues, rss);
        let tags: Vec<u16> = hashes.iter().map(|&h| tag(h)).collect();
        receive(&mut port, &tags);
        let got: Vec<u64> = (0..queues as u16).map(|q| port.rx_queue_counters(q).0).collect();
        proptest::prop_assert_eq!(&got, &expected);
        proptest::prop_assert_eq!(got.iter().sum::<u64>(), hashes.len() as u64);
        proptest::prop_assert_eq!(port.stats.rx_packets, hashes.len() as u64);
        if let RetaFill::Weights(w) = &fill {
            for (q, &wq) in w.iter().enumerate() {
                if wq == 0 {
                    proptest::prop_assert_eq!(got[q], 0);
                }
            }
        }
    }
}
