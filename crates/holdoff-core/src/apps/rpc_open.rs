//! Open-loop request/response load over many TCP connections, as
//! memcached-style load generators (mutilate, its "agent" mode) drive a
//! server: requests arrive at a target rate whether or not earlier replies
//! have come back, each on one of `connections` connections (round robin),
//! and a request's latency runs from its *intended* send time (its arrival)
//! to the moment the client has read the whole response. A request that
//! cannot be written when it arrives (send buffer full) waits in its
//! connection's queue and its wait counts, so a slow server is not hidden
//! by the client backing off (no coordinated omission).
//!
//! Server: `server_threads` epoll worker threads, each owning the
//! connections `c` with `c mod threads == thread` (as SO_REUSEPORT spreads
//! accepted connections), each reading whole requests in order on each of
//! its connections, computing for a service time (fixed or exponential) and
//! writing the response.
//!
//! Bounds: at most `max_outstanding` requests per connection are queued or
//! awaiting a reply; an arrival beyond that is refused and counted
//! (`dropped`), so every queue is bounded by configuration. A reply that
//! comes later than `timeout_us` after its intended send time is counted as
//! a timeout (its latency is still recorded: TCP delivers it).
//!
//! Busy polling (`server_busy_poll_usecs`, as the `rpc` server): a thread
//! spins on the NAPI instance of its first connection's queue, as Linux's
//! epoll busy polling polls one NAPI id per epoll instance; with one thread
//! per RX queue every connection of a thread is on that queue.
//!
//! Sizes: fixed (`request_bytes`, `response_bytes`) or weighted lists
//! (`request_sizes`, `response_sizes`), drawn per request (`Sizes`).
//!
//! Simplifies: one client host; no connection setup.
//!
//! Units: times [ns] (`_ps` for the fixed arrival period), sizes [bytes].

use super::tcp_apps::{BusyPoll, Calls, TcpIo, Wait};
use crate::engine::StreamRng;
use crate::metrics::LatencyHist;
use crate::units::{Nanos, SimTime};
use rand::RngExt;
use std::collections::VecDeque;

/// Request and response sizes: fixed, or drawn per request from weighted
/// lists. The draw for request `k` of connection `c` is a hash of (seed, c,
/// k), so the client and the server agree on every size without sharing
/// state (the server knows where each request ends, as a protocol's length
/// header would tell it).
#[derive(Clone, Debug)]
pub struct Sizes {
    seed: u64,
    /// (bytes, cumulative weight).
    req: Vec<(u64, u64)>,
    resp: Vec<(u64, u64)>,
}

fn cumulative(v: &[(u64, u32)]) -> Vec<(u64, u64)> {
    let mut c = 0u64;
    v.iter()
        .filter(|(_, w)| *w > 0)
        .map(|&(b, w)| {
            c += w as u64;
            (b, c)
        })
        .collect()
}

/// splitmix64 of (seed, conn, k, salt).
fn mix(seed: u64, conn: u16, k: u64, salt: u64) -> u64 {
    let mut z = seed ^ ((conn as u64) << 48) ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn pick(v: &[(u64, u64)], h: u64) -> u64 {
    if v.len() == 1 {
        return v[0].0;
    }
    let r = h % v.last().map_or(1, |x| x.1);
    v.iter().find(|(_, c)| r < *c).map_or(v[0].0, |x| x.0)
}

impl Sizes {
    /// Weighted (bytes, weight) lists (a single entry: a fixed size).
    pub fn new(req: &[(u64, u32)], resp: &[(u64, u32)], seed: u64) -> Sizes {
        Sizes {
            seed,
            req: cumulative(req),
            resp: cumulative(resp),
        }
    }
    pub fn request(&self, conn: u16, k: u64) -> u64 {
        pick(&self.req, mix(self.seed, conn, k, 1))
    }
    pub fn response(&self, conn: u16, k: u64) -> u64 {
        pick(&self.resp, mix(self.seed, conn, k, 2))
    }
}

/// Arrival process of requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential inter-arrival times.
    Poisson,
    /// Evenly spaced.
    Fixed,
}

/// The client side: arrivals, per-connection queues, latency.
pub struct RpcOpenClient {
    pub conns: Vec<u16>,
    sizes: Sizes,
    /// Per connection: requests fully written, responses fully read.
    wr_idx: Vec<u64>,
    rd_idx: Vec<u64>,
    /// Bytes written and read by the client.
    pub tx_bytes: u64,
    pub rx_bytes: u64,
    /// Request + response bytes of the completed requests.
    pub done_bytes: u64,
    arrivals: Arrivals,
    /// Mean spacing between arrivals [ps].
    period_ps: u64,
    next_ps: u128,
    next_conn: usize,
    max_outstanding: u32,
    timeout: Nanos,
    rng: StreamRng,
    /// Per connection: intended send times of requests not yet fully
    /// written (front: being written, `write_left` bytes to go).
    unsent: Vec<VecDeque<SimTime>>,
    write_left: Vec<u64>,
    /// Per connection: written requests awaiting their response (front:
    /// being read, `read_left` bytes to go).
    inflight: Vec<VecDeque<SimTime>>,
    read_left: Vec<u64>,
    /// The AppTimer already scheduled (for the next arrival).
    pub timer_at: Option<SimTime>,
    pub issued: u64,
    pub completed: u64,
    pub dropped: u64,
    pub timeouts: u64,
    pub started: SimTime,
    pub latency: LatencyHist,
    pub offered_rps: f64,
}

/// Parameters of a client.
pub struct RpcOpenParams {
    pub rate_rps: f64,
    pub arrivals: Arrivals,
    pub sizes: Sizes,
    pub max_outstanding: u32,
    pub timeout: Nanos,
    pub start: SimTime,
}

impl RpcOpenClient {
    pub fn new(conns: Vec<u16>, p: &RpcOpenParams, rng: StreamRng) -> Self {
        let n = conns.len();
        RpcOpenClient {
            conns,
            sizes: p.sizes.clone(),
            wr_idx: vec![0; n],
            rd_idx: vec![0; n],
            tx_bytes: 0,
            rx_bytes: 0,
            done_bytes: 0,
            arrivals: p.arrivals,
            period_ps: (1e12 / p.rate_rps).round().max(1.0) as u64,
            next_ps: p.start.as_ns() as u128 * 1000,
            next_conn: 0,
            max_outstanding: p.max_outstanding,
            timeout: p.timeout,
            rng,
            unsent: vec![VecDeque::new(); n],
            write_left: vec![0; n],
            inflight: vec![VecDeque::new(); n],
            read_left: vec![0; n],
            timer_at: None,
            issued: 0,
            completed: 0,
            dropped: 0,
            timeouts: 0,
            started: p.start,
            latency: LatencyHist::new(),
            offered_rps: p.rate_rps,
        }
    }

    /// Time of the next arrival.
    pub fn next_arrival(&self) -> SimTime {
        SimTime((self.next_ps / 1000) as u64)
    }

    /// Requests queued or awaiting a reply, all connections.
    pub fn outstanding(&self) -> u64 {
        self.unsent
            .iter()
            .zip(&self.inflight)
            .map(|(u, i)| (u.len() + i.len()) as u64)
            .sum()
    }

    fn arrive(&mut self, t: SimTime) {
        let i = self.next_conn;
        self.next_conn = (self.next_conn + 1) % self.conns.len();
        if self.unsent[i].len() + self.inflight[i].len() >= self.max_outstanding as usize {
            self.dropped += 1;
            return;
        }
        self.issued += 1;
        if self.unsent[i].is_empty() {
            self.write_left[i] = self.sizes.request(self.conns[i], self.wr_idx[i]);
        }
        self.unsent[i].push_back(t);
    }

    fn advance_arrival(&mut self) {
        let gap = match self.arrivals {
            Arrivals::Fixed => self.period_ps as u128,
            Arrivals::Poisson => {
                let u: f64 = self.rng.random::<f64>();
                ((-(1.0 - u).ln() * self.period_ps as f64).round() as u128).max(1)
            }
        };
        self.next_ps += gap;
    }

    /// One slice: take the arrivals due, write what the sockets accept,
    /// read the responses that are in. Returns the CPU time used and the
    /// next arrival (the client also waits for its sockets to be readable).
    pub fn run<I: TcpIo>(
        &mut self,
        calls: &mut Calls<I>,
        mut cost: Nanos,
    ) -> (Nanos, Wait, SimTime) {
        let now = calls.now;
        while self.next_arrival() <= now {
            let t = self.next_arrival();
            self.arrive(t);
            self.advance_arrival();
        }
        for i in 0..self.conns.len() {
            let c = self.conns[i];
            while !self.unsent[i].is_empty() {
                let n = calls.write(&mut cost, c, 0, self.write_left[i]);
                self.write_left[i] -= n;
                self.tx_bytes += n;
                if self.write_left[i] > 0 {
                    break;
                }
                let t = self.unsent[i].pop_front().expect("non-empty");
                self.wr_idx[i] += 1;
                if self.inflight[i].is_empty() {
                    self.read_left[i] = self.sizes.response(c, self.rd_idx[i]);
                }
                self.inflight[i].push_back(t);
                self.write_left[i] = self.sizes.request(c, self.wr_idx[i]);
            }
            while !self.inflight[i].is_empty() && calls.io.readable(c, 0) > 0 {
                let n = calls.read(&mut cost, c, 0, self.read_left[i]);
                self.read_left[i] -= n;
                self.rx_bytes += n;
                if self.read_left[i] > 0 {
                    break;
                }
                let t = self.inflight[i].pop_front().expect("non-empty");
                let lat = (now + cost) - t;
                self.latency.record(lat.as_ns());
                self.completed += 1;
                if lat > self.timeout {
                    self.timeouts += 1;
                }
                let k = self.rd_idx[i];
                self.done_bytes += self.sizes.request(c, k) + self.sizes.response(c, k);
                self.rd_idx[i] += 1;
                self.read_left[i] = self.sizes.response(c, self.rd_idx[i]);
            }
        }
        (cost, Wait::Readable, self.next_arrival())
    }
}

/// Service-time distribution of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    Fixed,
    Exponential,
}

/// One epoll worker thread of the server.
pub struct RpcOpenServer {
    pub conns: Vec<u16>,
    sizes: Sizes,
    /// Per connection: the index of the request being read or answered.
    idx: Vec<u64>,
    /// Mean service time per request.
    pub service: Nanos,
    pub dist: Service,
    rng: StreamRng,
    read_left: Vec<u64>,
    write_left: Vec<u64>,
    /// The connection the next slice starts with.
    cursor: usize,
    pub served: u64,
    /// epoll busy polling instead of sleeping (None: sleep); the world runs
    /// the loop on the NAPI instance of the thread's first connection.
    pub busy: Option<BusyPoll>,
    /// Busy polling: the next slice starts a busy-poll loop (the world sets
    /// and clears it).
    pub spin_next: bool,
}

impl RpcOpenServer {
    pub fn new(
        conns: Vec<u16>,
        sizes: Sizes,
        service: Nanos,
        dist: Service,
        rng: StreamRng,
        busy: Option<BusyPoll>,
    ) -> Self {
        let n = conns.len();
        RpcOpenServer {
            read_left: conns.iter().map(|&c| sizes.request(c, 0)).collect(),
            idx: vec![0; n],
            conns,
            sizes,
            service,
            dist,
            rng,
            write_left: vec![0; n],
            cursor: 0,
            served: 0,
            busy,
            spin_next: false,
        }
    }

    fn service_time(&mut self) -> Nanos {
        match self.dist {
            Service::Fixed => self.service,
            Service::Exponential => {
                let u: f64 = self.rng.random::<f64>();
                Nanos((-(1.0 - u).ln() * self.service.as_ns() as f64).round() as u64)
            }
        }
    }

    /// One slice: serve the whole requests waiting on the thread's
    /// connections, up to `QUANTUM` of CPU (then `true`: run again); else
    /// block reading (or writing, when only writes are stuck).
    pub fn run<I: TcpIo>(&mut self, calls: &mut Calls<I>, mut cost: Nanos) -> (Nanos, Wait, bool) {
        let start = cost;
        let n = self.conns.len();
        loop {
            let mut progress = false;
            let mut write_blocked = false;
            // One request per connection per pass, from where the last
            // slice stopped (epoll's ready list is served in turn).
            for k in 0..n {
                let i = (self.cursor + k) % n;
                let c = self.conns[i];
                if self.write_left[i] > 0 {
                    let w = calls.write(&mut cost, c, 1, self.write_left[i]);
                    self.write_left[i] -= w;
                    progress |= w > 0;
                    if self.write_left[i] > 0 {
                        write_blocked = true;
                        continue;
                    }
                    self.idx[i] += 1;
                    self.read_left[i] = self.sizes.request(c, self.idx[i]);
                }
                if calls.io.readable(c, 1) == 0 {
                    continue;
                }
                let r = calls.read(&mut cost, c, 1, self.read_left[i]);
                self.read_left[i] -= r;
                progress |= r > 0;
                if self.read_left[i] > 0 {
                    continue;
                }
                cost += self.service_time();
                self.served += 1;
                self.write_left[i] = self.sizes.response(c, self.idx[i]);
                let w = calls.write(&mut cost, c, 1, self.write_left[i]);
                self.write_left[i] -= w;
                if self.write_left[i] == 0 {
                    self.idx[i] += 1;
                    self.read_left[i] = self.sizes.request(c, self.idx[i]);
                } else {
                    write_blocked = true;
                }
                if cost - start >= QUANTUM {
                    self.cursor = (i + 1) % n;
                    return (cost, Wait::Readable, true);
                }
            }
            if !progress {
                let w = if write_blocked && self.conns.iter().all(|&c| calls.io.readable(c, 1) == 0)
                {
                    Wait::Writable
                } else {
                    Wait::Readable
                };
                return (cost, w, false);
            }
        }
    }
}

/// CPU time after which a server thread ends its slice and runs again at
/// once (`true` from `run`). A slice's effects are applied when it starts
/// and stamped with their times inside it; a bound keeps a long backlog from
/// filling the send buffers ahead of the time its responses are computed.
pub const QUANTUM: Nanos = Nanos(100_000);
