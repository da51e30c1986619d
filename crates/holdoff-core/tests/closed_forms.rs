//! The NIC timers against closed forms (Poisson arrivals, `ideal` host).
//!
//! Setup: a generator sends 64-byte frames with exponential inter-arrival
//! times (rate lambda) to an 82546 whose host costs nothing (`ideal`), so the
//! driver services every interrupt at the instant it is asserted and the only
//! delays are the wire, the chip's DMA latency and the moderation timers.
//!
//! Measured: interrupt rate (interrupts / duration) and the mean one-way
//! latency seen by the UDP sink, minus the fixed path (serialisation 672 ns
//! + the chip's RX DMA latency + the M/D/1 wait for the line).
//!
//! Closed forms (derivations in docs/models/nic.md, "Validation"):
//! - ITR holdoff T, RDTR = 0: after an interrupt the next one comes at
//!   max(T, X), X ~ Exp(lambda) (memoryless). Rate = 1 / (T + e^{-lT}/l).
//!   Frames landing inside the interval wait for its end (mean T/2), the first
//!   frame after it waits 0: delay = (l T^2 / 2) / (l T + e^{-lT}).
//! - Packet timer d alone (RDTR = d, RADV = 0): an interrupt follows every
//!   gap longer than d: rate = l e^{-ld}; a frame waits until the first gap
//!   > d after it, plus d: delay = (e^{ld} - 1) / l.
//! - Absolute timer a alone (RADV = a, RDTR = a + 1 tick disables the packet
//!   timer, SDM §3.2.7.1.2): cycle = a + Exp(lambda): rate = 1 / (a + 1/l);
//!   the first frame waits a, the l a others wait a/2 on average:
//!   delay = (a + l a^2 / 2) / (1 + l a).

mod common;
use common::{run, OneHost};

const LAMBDA: f64 = 20_000.0; // frames/s
const DURATION_S: f64 = 10.0;

fn fixed_path_ns() -> f64 {
    let dma = holdoff_core::nic::chip::by_name("82546")
        .unwrap()
        .rx_dma_ns
        .as_ns() as f64;
    let d = 672.0; // 84 wire bytes at 1 Gb/s
    let rho = LAMBDA * d * 1e-9;
    let mdl_wait = rho * d / (2.0 * (1.0 - rho)); // M/D/1 mean wait
    d + dma + mdl_wait
}

/// (interrupt rate [1/s], mean added delay [ns]) measured.
fn measure(moderation: &str, driver: &'static str) -> (f64, f64) {
    let s = OneHost {
        moderation: moderation.into(),
        driver,
        rate_pps: LAMBDA,
        duration_ms: (DURATION_S * 1000.0) as u64,
        ..Default::default()
    };
    let r = run(&s.toml());
    let port = &r["summary"]["ports"][0];
    let rate = port["interrupts"].as_f64().unwrap() / DURATION_S;
    let mean_us = r["summary"]["apps"][0]["latency_us"]["mean"]
        .as_f64()
        .unwrap();
    assert_eq!(r["summary"]["ledger"]["dropped"], 0);
    eprintln!(
        "{moderation:?} {driver}: rate {rate:.1}/s delay {:.1} ns",
        mean_us * 1000.0 - fixed_path_ns()
    );
    (rate, mean_us * 1000.0 - fixed_path_ns())
}

fn close(got: f64, want: f64, rel: f64, what: &str) {
    assert!(
        (got - want).abs() <= rel * want,
        "{what}: simulated {got:.1}, closed form {want:.1} (tolerance {:.0} %)",
        rel * 100.0
    );
}

#[test]
fn itr_holdoff_alone() {
    let t = 488.0 * 256e-9; // ITR 488 = 124.928 us
    let l = LAMBDA;
    let rate = 1.0 / (t + (-l * t).exp() / l);
    let delay_ns = (l * t * t / 2.0) / (l * t + (-l * t).exp()) * 1e9;
    for driver in ["napi", "linux-isr"] {
        let (r, d) = measure("itr_256ns = 488", driver);
        close(r, rate, 0.02, &format!("{driver}: interrupt rate"));
        close(
            d,
            delay_ns,
            0.03,
            &format!("{driver}: mean added delay [ns]"),
        );
    }
}

#[test]
fn packet_timer_alone() {
    let d = 32.0 * 1.024e-6; // RDTR 32 ticks
    let l = LAMBDA;
    let rate = l * (-l * d).exp();
    let delay_ns = ((l * d).exp() - 1.0) / l * 1e9;
    let (r, dl) = measure("rdtr_1024ns = 32\nradv_1024ns = 0", "napi");
    close(r, rate, 0.02, "interrupt rate");
    close(dl, delay_ns, 0.03, "mean added delay [ns]");
}

#[test]
fn absolute_timer_alone() {
    let a = 64.0 * 1.024e-6; // RADV 64 ticks, RDTR 65 ticks
    let l = LAMBDA;
    let rate = 1.0 / (a + 1.0 / l);
    let delay_ns = (a + l * a * a / 2.0) / (1.0 + l * a) * 1e9;
    let (r, dl) = measure("rdtr_1024ns = 65\nradv_1024ns = 64", "napi");
    close(r, rate, 0.02, "interrupt rate");
    close(dl, delay_ns, 0.03, "mean added delay [ns]");
}

#[test]
fn no_moderation_gives_one_interrupt_per_frame() {
    // RDTR = 0, ITR = 0: every frame interrupts at once; delay 0.
    let (r, d) = measure("", "napi");
    close(r, LAMBDA, 0.02, "interrupt rate");
    assert!(d.abs() < 50.0, "added delay {d} ns");
}
