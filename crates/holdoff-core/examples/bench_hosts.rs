//! The bench scenario replicated over N independent hosts, run a few times,
//! printing simulated packets per wall second and events per packet (a
//! development aid for profiling the per-packet path; the user-facing
//! instrument is `holdoff bench --hosts N`).
//! Usage: bench_hosts [HOSTS [SIM_MS [RUNS]]] (default 1 host, 200 ms, 5 runs).
use holdoff_core::api;

const SCENARIO: &str = include_str!("../../../examples/bench-64b-1g-itr8000-napi.toml");

/// The bench scenario with its host, generator, link and sink replicated
/// `n` times (names suffixed by the index), `ms` simulated milliseconds.
fn hosts(n: usize, ms: u64) -> String {
    let short = SCENARIO.replace("duration_ms = 1000", &format!("duration_ms = {ms}"));
    let first = short.find("[[hosts]]").expect("a host");
    let (head, body) = short.split_at(first);
    let mut out = head.to_string();
    for i in 0..n {
        out.push_str(
            &body
                .replace("\"dut\"", &format!("\"dut{i}\""))
                .replace("\"dut.eth0\"", &format!("\"dut{i}.eth0\""))
                .replace("\"gen\"", &format!("\"gen{i}\""))
                .replace("\"sink\"", &format!("\"sink{i}\"")),
        );
        out.push('\n');
    }
    out
}

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
