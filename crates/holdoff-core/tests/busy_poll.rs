//! End to end: epoll busy polling with `prefer_busy_poll` and NAPI IRQ
//! suspension (`irq_suspend_timeout`, Linux 6.13) on a request/response
//! server, against expectations derived from Linux 6.13 `net/core/dev.c`
//! (`napi_complete_done`, `busy_poll_stop`) and `fs/eventpoll.c` (commit
//! 8a6de2627fd3 "eventpoll: Control irq suspension for prefer_busy_poll").
//!
//! Setup shared by the tests: two `xeon-modern` hosts with i210 NICs
//! (igb-class, MSI-X: the vector auto-masks when it fires and is unmasked
//! only when a NAPI completion returns true), no interrupt throttle
//! (`ethtool -C rx-usecs 0`, as low-latency busy-poll setups run), one
//! 64-byte request outstanding. Every cause on the server's vector (request
//! received, response transmitted) therefore interrupts at once unless the
//! vector is masked.

mod common;
use common::{run, TwoHosts};
use serde_json::Value;

/// `napi`: the server's `[hosts.napi]` body; `server`: extra rpc options.
fn rr_toml(napi: &str, server: &str, duration_ms: u64) -> String {
    TwoHosts {
        head: &format!("name = \"rr-busy-poll\"\nseed = 5\nduration_ms = {duration_ms}"),
        hosts: ["client", "server"],
        profile: "xeon-modern",
        chip: "i210",
        host_extra: ["", &format!("[hosts.napi]\n{napi}")],
        nic_extra: "[hosts.nics.moderation]\nkind = \"static\"\neitr_us = 0",
        nic_extra_b: None,
        link_extra: "",
        apps: &format!(
            "[[apps]]\nkind = \"rpc\"\nname = \"rr\"\nhost = \"client\"\nto = \"server\"\n{server}\n"
        ),
    }
    .toml()
}

/// (server port interrupts, transactions, server NAPI counters, server host).
fn outcome(r: &Value) -> (u64, u64, Value, Value) {
    let s = &r["summary"];
    assert_eq!(s["ledger"]["balanced"], true, "ledger");
    let port = &s["ports"][1];
    assert_eq!(port["port"], "server.eth0");
    (
        port["interrupts"].as_u64().unwrap(),
        s["apps"][0]["transactions"].as_u64().unwrap(),
        port["vectors"][0]["napi"].clone(),
        s["hosts"][1].clone(),
    )
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

const BUSY: &str = "server_busy_poll_usecs = 200\nserver_busy_poll_budget = 8";
const PREFER: &str = "server_prefer_busy_poll = true";
const DEFER: &str = "defer_hard_irqs = 2\ngro_flush_timeout_ns = 10000";
const SUSPEND_20MS: &str = "irq_suspend_timeout_ns = 20000000";

#[test]
fn irq_suspension_keeps_the_server_irq_masked_while_epoll_finds_events() {
    // The server computes 50 us per request (server_think_us), longer than
    // the deferral's patience: defer_hard_irqs = 2 empty polls x
    // gro_flush_timeout 10 us = 20 us.
    let think = "server_think_us = 50";
    let dur = 100;

    // (1) busy poll + prefer_busy_poll + irq_suspend_timeout 20 ms. The
    // first request interrupts (the server sleeps at start) and its softirq
    // poll takes the deferral path (work done: count 2, 10 us timer, IRQ
    // masked). From then on the server is always either serving or in its
    // busy-poll loop: each loop that finds the request ends with
    // busy_poll_stop (timeout = irq_suspend_timeout, timer started) and a
    // final poll whose napi_complete_done sees PREFER_BUSY_POLL (ret =
    // false, timer 20 ms), and epoll's napi_suspend_irqs re-arms 20 ms. A
    // transaction takes ~60 us, so the 20 ms timer never fires and the
    // vector is never unmasked: at most the first interrupt, and one more
    // if the first response's TX completion came before the loop began.
    let r = run(&rr_toml(
        &format!("{DEFER}\n{SUSPEND_20MS}"),
        &format!("{BUSY}\n{PREFER}\n{think}"),
        dur,
    ));
    let (irqs, tx, napi, host) = outcome(&r);
    assert!(tx > 1000, "transactions {tx}");
    assert!(
        irqs <= 2,
        "suspended: {irqs} interrupts for {tx} transactions"
    );
    // Every request after the first is received by a busy poll, and every
    // epoll return with events suspends (one per transaction, +1 for the
    // first wake-up from sleep).
    assert!(n(&napi, "busy_poll_packets") >= tx - 1, "{napi}");
    assert!(n(&napi, "irq_suspends") >= tx - 1, "{napi}");
    assert_eq!(n(&napi, "suspend_timer_expiries"), 0, "{napi}");
    // Only the first request's deferral timer can poll, and only while the
    // busy loop did not own the instance: at most its two re-polls.
    assert!(n(&napi, "defer_timer_polls") <= 2, "{napi}");
    // The server core spins when not serving: application time ~ the whole run.
    let app_ns = n(&host["cpu_ns"], "app");
    assert!(
        app_ns as f64 > 0.99 * dur as f64 * 1e6,
        "app cpu {app_ns} ns"
    );
    let suspended_softirq = n(&host["cpu_ns"], "softirq");

    // (2) The same without irq_suspend_timeout: busy_poll_stop uses the
    // deferral (defer_count = 2, 10 us timer). During the 50 us of
    // computing, the timer polls twice (empty: 2 -> 1 -> 0) and the third
    // completion unmasks (at +20 us < 50 us). The request's receive cause,
    // pending in EICR since it landed while masked, then asserts at once
    // (a spurious interrupt: busy poll already took the packet; its softirq
    // poll is empty and unmasks again), and the response's TX completion
    // interrupts too (the vector is unmasked when it is sent). At least one
    // interrupt per transaction, at most two (+1 for the first request).
    let r = run(&rr_toml(DEFER, &format!("{BUSY}\n{PREFER}\n{think}"), dur));
    let (irqs_defer, tx_defer, napi, host) = outcome(&r);
    assert!(irqs_defer >= tx_defer, "{irqs_defer} vs {tx_defer}");
    assert!(irqs_defer <= 2 * tx_defer + 1, "{irqs_defer} vs {tx_defer}");
    assert!(
        n(&napi, "defer_timer_polls") >= 2 * (tx_defer - 1),
        "{napi}"
    );
    assert_eq!(n(&napi, "irq_suspends"), 0, "{napi}");
    // Those timer polls and spurious interrupts cost softirq time that the
    // suspended server does not spend.
    assert!(n(&host["cpu_ns"], "softirq") > 10 * suspended_softirq.max(1));

    // (3) No busy polling, plain NAPI: the server sleeps between requests,
    // every completion unmasks, so each request interrupts and so does each
    // response's TX completion: two per transaction, plus up to two for the
    // transaction in progress at the end and one for the client's pure
    // quick-ACK of the first response.
    let r = run(&rr_toml("", think, dur));
    let (irqs_plain, tx_plain, napi, _) = outcome(&r);
    assert!(irqs_plain >= 2 * tx_plain, "{irqs_plain} vs {tx_plain}");
    assert!(irqs_plain <= 2 * tx_plain + 3, "{irqs_plain} vs {tx_plain}");
    assert_eq!(n(&napi, "busy_polls"), 0);
}

#[test]
fn back_to_back_requests_never_unmask_once_the_busy_loop_owns_the_instance() {
    // No server computing. Suspended: as above, at most 2 interrupts.
    // Without suspension the deferral timer (10 us) is armed at each
    // busy_poll_stop, but the server answers in a few us and re-enters its
    // busy loop, which owns the instance when the timer fires: napi_watchdog
    // does nothing and the vector stays masked too (the benefit of
    // suspension needs processing longer than the deferral). Without busy
    // polling each request interrupts.
    let dur = 50;
    let (irqs, tx, _, _) = outcome(&run(&rr_toml(
        &format!("{DEFER}\n{SUSPEND_20MS}"),
        &format!("{BUSY}\n{PREFER}"),
        dur,
    )));
    assert!(tx > 1000 && irqs <= 2, "suspended: {irqs} for {tx}");
    let (irqs, tx, napi, _) = outcome(&run(&rr_toml(DEFER, &format!("{BUSY}\n{PREFER}"), dur)));
    assert!(tx > 1000 && irqs <= 2, "deferred: {irqs} for {tx}");
    assert_eq!(n(&napi, "defer_timer_polls"), 0, "{napi}");
    let (irqs, tx, _, _) = outcome(&run(&rr_toml("", "", dur)));
    assert!(irqs >= tx, "plain: {irqs} for {tx}");
}

#[test]
fn the_suspend_timer_brings_irqs_back_when_the_server_stops_polling() {
    // Safety net: irq_suspend_timeout 200 us, but the server computes
    // 500 us per request. The timer armed when epoll returned the request
    // fires 200 us into the computing: napi_watchdog schedules a softirq
    // poll (preempting the application, as at the timer interrupt's exit),
    // PREFER_BUSY_POLL is clear, so the completion takes the normal path
    // and unmasks (no deferral configured). The pending receive cause then
    // interrupts, and the response's TX completion finds the vector
    // unmasked too: one expiry and at least one interrupt per transaction.
    let r = run(&rr_toml(
        "irq_suspend_timeout_ns = 200000",
        &format!("{BUSY}\n{PREFER}\nserver_think_us = 500"),
        20,
    ));
    let (irqs, tx, napi, _) = outcome(&r);
    // ~20 ms / (500 us + a few us of network and stack) = ~39.
    assert!((35..=40).contains(&tx), "transactions {tx}");
    assert!(n(&napi, "suspend_timer_expiries") >= tx - 1, "{napi}");
    assert!(irqs >= tx, "{irqs} interrupts for {tx} transactions");
}

#[test]
fn busy_polling_that_finds_nothing_resumes_irqs_before_sleeping() {
    // The client thinks 1 ms between transactions; the server busy-polls
    // 50 us, finds nothing, and epoll is about to sleep: napi_resume_irqs
    // schedules a poll whose completion (PREFER_BUSY_POLL cleared by the
    // final poll of busy_poll_stop, no deferral) unmasks. The next request
    // then interrupts and wakes the sleeping server. One resume and at least
    // one interrupt per transaction; the 20 ms suspend timer is re-armed
    // every ~1 ms and never fires.
    let toml = rr_toml(
        SUSPEND_20MS,
        &format!("server_busy_poll_usecs = 50\n{PREFER}\nthink_us = 1000"),
        50,
    );
    let (irqs, tx, napi, _) = outcome(&run(&toml));
    assert!(tx > 40, "transactions {tx}");
    assert!(n(&napi, "irq_resumes") >= tx - 1, "{napi}");
    assert!(irqs >= tx, "{irqs} interrupts for {tx} transactions");
    assert_eq!(n(&napi, "suspend_timer_expiries"), 0, "{napi}");
}

#[test]
fn busy_poll_options_are_validated_with_the_field_named() {
    let cases: [(&str, &str, &str); 3] = [
        ("", PREFER, "server_prefer_busy_poll"),
        (
            "",
            "server_busy_poll_usecs = 50\nserver_busy_poll_budget = 0",
            "server_busy_poll_budget",
        ),
        (
            "irq_suspend_timeout_ns = 20000000000",
            &format!("{BUSY}\n{PREFER}"),
            "napi.irq_suspend_timeout_ns",
        ),
    ];
    for (napi, server, field) in cases {
        let err = holdoff_core::api::run_toml(&rr_toml(napi, server, 1), None)
            .err()
            .unwrap_or_else(|| panic!("{field}: accepted"));
        assert!(err.to_string().contains(field), "{field}: {err}");
    }
    // irq_suspend_timeout without a prefer_busy_poll application is accepted
    // and does nothing, as in Linux: a busy-polling server without
    // prefer_busy_poll gives the same run with and without it.
    let with = run(&rr_toml(SUSPEND_20MS, BUSY, 5));
    let without = run(&rr_toml("", BUSY, 5));
    let (irqs_with, tx_with, napi_with, _) = outcome(&with);
    let (irqs_without, tx_without, _, _) = outcome(&without);
    assert_eq!((irqs_with, tx_with), (irqs_without, tx_without));
    assert_eq!(n(&napi_with, "irq_suspends"), 0, "{napi_with}");
    assert_eq!(n(&napi_with, "suspend_timer_expiries"), 0, "{napi_with}");
    // Busy polling calls the NAPI poll: other drivers are refused. (The
    // server's i210 in MSI mode: openbsd-intr runs no MSI-X handler.)
    let toml = rr_toml("", BUSY, 1).replace(
        "name = \"server\"\nprofile = \"xeon-modern\"",
        "name = \"server\"\nprofile = \"xeon-modern\"\ndriver = \"openbsd-intr\"",
    );
    let at = toml.rfind("chip = \"i210\"").unwrap() + "chip = \"i210\"".len();
    let toml = format!("{}\ninterrupt_mode = \"msi\"{}", &toml[..at], &toml[at..]);
    let Err(err) = holdoff_core::api::run_toml(&toml, None) else {
        panic!("a non-NAPI busy-poll server was accepted")
    };
    assert!(err.to_string().contains("server_busy_poll_usecs"), "{err}");
}
