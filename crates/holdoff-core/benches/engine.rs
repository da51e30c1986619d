//! Criterion benchmark: simulated packets per wall-clock second on the
//! bench scenario (64-byte frames at 1 Gb/s line rate into one host, NAPI,
//! static ITR 8000/s), shortened to 100 ms of simulated time per iteration.
//! Throughput is reported in elements (= injected packets) per second.
//!
//! `sim_hosts/N`: the same host replicated N times (N independent DUTs, each
//! fed by its own line-rate generator), 10 ms of simulated time, to show how
//! the per-packet cost grows with the number of queued events.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use holdoff_core::api;
mod common;
use common::{hosts, SCENARIO};

fn short() -> String {
    SCENARIO.replace("duration_ms = 1000", "duration_ms = 100")
}

fn bench_hosts(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_hosts");
    g.sample_size(10);
    for n in [1usize, 16, 64] {
        let text = hosts(n, 10);
        let mut w = api::build(&text, None).expect("replicated scenario is valid");
        w.run();
        g.throughput(Throughput::Elements(w.ledger().injected));
        g.bench_function(format!("{n}"), |b| {
            b.iter(|| {
                let mut w = api::build(&text, None).expect("valid");
                w.run();
                std::hint::black_box(w.ledger().injected)
            })
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let text = short();
    let mut w = api::build(&text, None).expect("bench scenario is valid");
    w.run();
    let packets = w.ledger().injected;
    let mut g = c.benchmark_group("sim");
    g.throughput(Throughput::Elements(packets));
    g.sample_size(20);
    g.bench_function("64b_1g_itr8000_napi_100ms", |b| {
        b.iter(|| {
            let mut w = api::build(&text, None).expect("valid");
            w.run();
            std::hint::black_box(w.ledger().injected)
        })
    });
    g.finish();
}

criterion_group!(benches, bench, bench_hosts);
criterion_main!(benches);
