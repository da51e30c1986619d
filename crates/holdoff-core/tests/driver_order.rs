//! Event order of each driver architecture, read from the port's register
//! log, against the drivers' source: Linux NAPI (`net/core/dev.c`,
//! e1000 `e1000_intr`); FreeBSD `sys/dev/em/if_em.c` (2006) `em_intr_fast`
//! / `em_handle_rxtx` and the ithread `em_intr`; OpenBSD
//! `sys/dev/pci/if_em.c` `em_intr`.

mod common;

use holdoff_core::api;
use holdoff_core::nic::RegOp;

/// 250 back-to-back 64-byte frames into one port of a 2006 Opteron host.
fn log_for(driver: &str, extra: &str) -> Vec<RegOp> {
    let host = common::host_with_nic("dut", "opteron-2006", driver, extra, "em0", "82546");
    let toml = format!(
        r#"
name = "order"
duration_ms = 10
{host}[hosts.nics.moderation]
kind = "static"
itr_per_s = 8000
[[generators]]
name = "gen"
load = 1.0
stop_us = 168
[[apps]]
kind = "udp_sink"
name = "sink"
host = "dut"
[[links]]
a = "gen"
b = "dut.em0"
"#
    );
    let mut w = api::build(&toml, None).expect("valid");
    w.log_registers(0);
    w.run();
    w.take_register_log(0)
}

/// Packets taken between consecutive RDT writes.
fn batches(log: &[RegOp]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut n = 0;
    for op in log {
        match op {
            RegOp::RxTake => n += 1,
            RegOp::RdtWrite(k) => {
                assert_eq!(*k, n, "RDT returns exactly the buffers taken");
                out.push(n);
                n = 0;
            }
            _ => {}
        }
    }
    out
}

#[test]
fn napi_masks_in_the_handler_and_unmasks_on_completion() {
    // NAPI: handler reads ICR, masks (IMC); the poll cleans up to 64, one RDT
    // write per poll; IMS only after a poll that did less than its weight.
    let log = log_for("napi", "");
    assert!(matches!(log[0], RegOp::IcrRead(icr) if icr != 0));
    assert_eq!(log[1], RegOp::ImcWrite);
    assert!(batches(&log).iter().all(|&b| b <= 64));
    let mut in_poll = 0;
    for op in &log {
        match op {
            RegOp::RdtWrite(k) => in_poll = *k,
            RegOp::ImsWrite => assert!(in_poll < 64, "unmask after a full-weight poll"),
            _ => {}
        }
    }
    assert!(log.contains(&RegOp::ImsWrite));
    assert!(!log.contains(&RegOp::ApicMask));
}

#[test]
fn freebsd_taskqueue_masks_in_the_nic_and_reenables_after_every_pass() {
    // FreeBSD em 2006 (em_intr_fast, em_handle_rxtx): the fast handler reads
    // ICR and writes IMC; each task pass takes at most rx_process_limit = 100
    // packets and writes RDT once; the 2006 task writes IMS after every pass,
    // even when it re-queued itself.
    let log = log_for("freebsd-taskqueue", "");
    assert!(matches!(log[0], RegOp::IcrRead(icr) if icr != 0));
    assert_eq!(log[1], RegOp::ImcWrite);
    let b = batches(&log);
    assert!(b.iter().all(|&n| n <= 100), "{b:?}");
    assert!(
        b.contains(&100),
        "250 frames need a pass that hits the limit: {b:?}"
    );
    let total: u32 = b.iter().sum();
    assert_eq!(total, 250);
    // After every RDT write, IMS is written before the next packet is taken
    // (the fast handler may preempt the task in between: ICR read + IMC).
    for (i, op) in log.iter().enumerate() {
        if matches!(op, RegOp::RdtWrite(_)) {
            let rest = &log[i + 1..];
            let ims = rest.iter().position(|o| *o == RegOp::ImsWrite);
            let take = rest.iter().position(|o| *o == RegOp::RxTake);
            assert!(
                ims.is_some(),
                "pass ending at {i} never re-enabled interrupts"
            );
            assert!(take.is_none() || ims < take, "at {i}: {:?}", &log[i..]);
        }
    }
    assert!(!log.contains(&RegOp::ApicMask));
}

#[test]
fn freebsd_ithread_masks_the_apic_writes_rdt_per_packet_and_loops_until_icr_is_zero() {
    // FreeBSD em ithread em_intr (freebsd-net, 20 Oct 2006, "em network
    // issues"): the kernel masks the line in the I/O APIC;
    // the thread loops reading ICR until it reads 0, cleaning RX without a
    // limit and writing RDT per packet; then the line is unmasked. The driver
    // never touches IMS/IMC.
    let log = log_for("freebsd-ithread", "");
    assert_eq!(log[0], RegOp::ApicMask);
    assert!(matches!(log[1], RegOp::IcrRead(icr) if icr != 0));
    assert!(
        batches(&log).iter().all(|&n| n == 1),
        "one RDT write per packet"
    );
    assert!(!log.contains(&RegOp::ImsWrite) && !log.contains(&RegOp::ImcWrite));
    for (i, op) in log.iter().enumerate() {
        if *op == RegOp::ApicUnmask {
            assert_eq!(
                log[i - 1],
                RegOp::IcrRead(0),
                "unmask only after ICR read 0"
            );
        }
    }
    assert_eq!(log.last(), Some(&RegOp::ApicUnmask));
}

#[test]
fn openbsd_handler_reads_icr_and_cleans_without_masking() {
    // OpenBSD em_intr: read ICR, clean TX then RX (all ready), refill
    // with one RDT write; no IMC/IMS, no APIC masking, no loop.
    let log = log_for("openbsd-intr", "");
    assert!(matches!(log[0], RegOp::IcrRead(icr) if icr != 0));
    assert!(!log
        .iter()
        .any(|o| matches!(o, RegOp::ImsWrite | RegOp::ImcWrite | RegOp::ApicMask)));
    // Each handler run is ICR read, takes, one RDT write.
    let mut state = 0; // 0: expect ICR read, 1: in takes
    for op in &log {
        match (state, op) {
            (0, RegOp::IcrRead(_)) => state = 1,
            (1, RegOp::RxTake) => {}
            (1, RegOp::RdtWrite(_)) => state = 0,
            (1, RegOp::IcrRead(_)) => state = 1, // a run that found nothing ready
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn polling_never_reads_icr_and_takes_at_most_the_burst_per_tick() {
    // DEVICE_POLLING: interrupts stay masked; each 1 ms tick polls up to the
    // burst: 250 frames need 7 ticks (6 x 40 + 10) within the 10 ms run.
    let log = log_for("polling", "[hosts.bsd]\npoll_burst = 40");
    assert!(!log
        .iter()
        .any(|o| matches!(o, RegOp::IcrRead(_) | RegOp::ImsWrite)));
    let b = batches(&log);
    assert!(b.iter().all(|&n| n <= 40), "{b:?}");
    assert_eq!(b.iter().sum::<u32>(), 250);
}
