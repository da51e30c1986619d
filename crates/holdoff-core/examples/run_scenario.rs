//! Run a scenario file and print its JSON report (a development aid; the
//! user-facing CLI is `holdoff run`). Usage: run_scenario FILE [SEED]
fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run_scenario FILE [SEED]");
        std::process::exit(2);
    };
    let seed = args
        .next()
        .map(|s| s.parse::<u64>().expect("SEED must be an integer"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2)
    });
    match holdoff_core::api::run_toml(&text, seed) {
        Ok(out) => {
            println!("{}", out.report_json);
            eprintln!(
                "wall {:.3} s, {} events, {:.2} M events/s, {:.2} M packets/s",
                out.perf.wall_time_s,
                out.perf.events_processed,
                out.perf.events_per_s / 1e6,
                out.perf.packets_per_s / 1e6
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
