//! The bench scenario and its replication over N independent hosts, shared
//! by the criterion benches and the `bench_hosts` profiling example.

/// `examples/bench-64b-1g-itr8000-napi.toml`: 64-byte frames at 1 Gb/s line
/// rate into one host, NAPI, static ITR 8000/s, 1 s simulated.
pub const SCENARIO: &str = include_str!("../../../../examples/bench-64b-1g-itr8000-napi.toml");

/// The bench scenario with its host, generator, link and sink replicated
/// `n` times (names suffixed by the index), `ms` simulated milliseconds.
pub fn hosts(n: usize, ms: u64) -> String {
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
