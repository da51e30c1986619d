//! The bench scenario replicated over N independent hosts, run a few times,
//! printing simulated packets per wall second and events per packet (a
//! development aid for profiling the per-packet path; the user-facing
//! instrument is `holdoff bench --hosts N`).
//! Usage: bench_hosts [HOSTS [SIM_MS [RUNS]]] (default 1 host, 200 ms, 5 runs).
use holdoff_core::api;
#[path = "../benches/common/mod.rs"]
mod common;
use common::hosts;

fn arg(args: &[String], i: usize, default: u64) -> u64 {
    args.get(i).map_or(default, |s| {
        s.parse().unwrap_or_else(|_| {
            eprintln!("usage: bench_hosts [HOSTS [SIM_MS [RUNS]]] (integers)");
            std::process::exit(2)
        })
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = arg(&args, 0, 1).max(1) as usize;
    let ms = arg(&args, 1, 200).max(1);
    let runs = arg(&args, 2, 5).max(1);
    let text = hosts(n, ms);
    for _ in 0..runs {
        match api::run_toml(&text, None) {
            Ok(out) => println!(
                "hosts {n} sim {ms} ms: {:.3} M packets/s, {:.3} events/packet, wall {:.3} s, peak queue {}",
                out.perf.packets_per_s / 1e6,
                out.perf.events_processed as f64 / out.perf.sim_packets.max(1) as f64,
                out.perf.wall_time_s,
                out.perf.peak_queued_events
            ),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
    }
}
