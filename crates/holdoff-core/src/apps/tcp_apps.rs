//! Applications over TCP: NetPIPE (NPtcp client and its echoing peer), a
//! request/response client and server, and an iperf-like bulk
//! sender/receiver.
//!
//! An application runs as a sequence of system calls on its core (application
//! class). Each `run` call is one scheduling slice: it performs calls until it
//! must block, and returns the CPU time used and what it waits for. Socket
//! operations go through `TcpIo`, which the world implements (it charges the
//! stack's per-segment send cost and transmits the segments); the
//! application itself charges the user/kernel copy of every byte it writes
//! or reads (`copy_ps_per_byte`).
//!
//! NetPIPE: the client runs NPtcp's schedule (`netpipe`): for each point,
//! TRIALS trials of `nrepeat` round trips (write the message, read the
//! echo); a trial's time runs from its first write call to the end of its
//! last read. The peer reads a whole message and writes it back. Between
//! trials NPtcp also synchronises the two sides with a short exchange; that
//! is not modelled.
//!
//! Request/response (rpc): the client writes a request, reads the
//! response, thinks, repeats; the server reads a request, computes for
//! `think` (CPU), writes the response. A server may busy-poll (`BusyPoll`,
//! epoll EPIOCSPARAMS) instead of sleeping; the world runs that loop since
//! it calls the driver (docs/models/napi.md).
//!
//! iperf: the client keeps every stream's send buffer full with writes of
//! `write_bytes`; the server reads whatever arrives. Goodput = bytes read by
//! the server / time since the first write.
//!
//! Units: bytes, times [ns].

use super::netpipe::{format_line, Netpipe, Point, PointResult};
use crate::host::profile::HostProfile;
use crate::units::{Nanos, SimTime};

/// Socket calls as the world offers them to applications.
pub trait TcpIo {
    /// Write up to `n` bytes on `(conn, side)` at `t`; returns bytes accepted
    /// and the stack's CPU time to send the segments this produced.
    fn write(&mut self, t: SimTime, conn: u16, side: u8, n: u64) -> (u64, Nanos);
    /// Read up to `n` bytes; returns bytes read and the stack's CPU time
    /// (a window update it may send).
    fn read(&mut self, t: SimTime, conn: u16, side: u8, n: u64) -> (u64, Nanos);
    /// Bytes readable now.
    fn readable(&self, conn: u16, side: u8) -> u64;
}

/// What a blocked application waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    Readable,
    Writable,
    /// Finished; never runs again.
    Done,
}

fn copy(prof: &HostProfile, n: u64) -> Nanos {
    Nanos(n * prof.copy_ps_per_byte / 1000)
}

/// The socket calls of one application slice: each at `now + *cost`, its
/// CPU time (the stack's part plus the copy of the bytes moved) added to
/// `*cost`.
pub struct Calls<'a, I> {
    pub io: &'a mut I,
    pub prof: &'a HostProfile,
    pub now: SimTime,
}

impl<I: TcpIo> Calls<'_, I> {
    /// Charge a call's `(bytes moved, stack CPU time)`; returns the bytes.
    fn charge(&self, cost: &mut Nanos, (got, c): (u64, Nanos)) -> u64 {
        *cost += copy(self.prof, got) + c;
        got
    }

    /// One write(2) of up to `n` bytes; returns the bytes accepted.
    pub(crate) fn write(&mut self, cost: &mut Nanos, conn: u16, side: u8, n: u64) -> u64 {
        let r = self.io.write(self.now + *cost, conn, side, n);
        self.charge(cost, r)
    }

    /// One read(2) of up to `n` bytes; returns the bytes read.
    pub(crate) fn read(&mut self, cost: &mut Nanos, conn: u16, side: u8, n: u64) -> u64 {
        let r = self.io.read(self.now + *cost, conn, side, n);
        self.charge(cost, r)
    }

    /// Write what is left of a message: one write call, `left` reduced by
    /// what the socket took; true when nothing is left.
    fn write_rest(&mut self, cost: &mut Nanos, conn: u16, side: u8, left: &mut u64) -> bool {
        *left -= self.write(cost, conn, side, *left);
        *left == 0
    }
}

/// One request/response exchange of a closed-loop client on side 0 of its
/// connection: write the request, then read the whole response [bytes left].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exchange {
    Write { left: u64, response: u64 },
    Read { left: u64 },
}

impl Exchange {
    fn new(request_bytes: u64, response_bytes: u64) -> Self {
        Exchange::Write {
            left: request_bytes,
            response: response_bytes,
        }
    }

    /// Socket calls until the response is read (`None`) or the socket
    /// blocks (`Some`: what to wait for).
    fn run<I: TcpIo>(&mut self, calls: &mut Calls<I>, cost: &mut Nanos, conn: u16) -> Option<Wait> {
        loop {
            match *self {
                Exchange::Write { left, response } => {
                    let n = calls.write(cost, conn, 0, left);
                    if n < left {
                        *self = Exchange::Write {
                            left: left - n,
                            response,
                        };
                        return Some(Wait::Writable);
                    }
                    *self = Exchange::Read { left: response };
                }
                Exchange::Read { left } => {
                    let n = calls.read(cost, conn, 0, left);
                    if n < left {
                        *self = Exchange::Read { left: left - n };
                        return Some(Wait::Readable);
                    }
                    return None;
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    NextPoint,
    Exchange(Exchange),
    Done,
}

/// The NPtcp transmitter side.
pub struct NetpipeClient {
    pub conn: u16,
    pub np: Netpipe,
    phase: Phase,
    point: Option<Point>,
    rep: u64,
    trial_start: SimTime,
    /// NPtcp-style result lines, in order.
    pub lines: Vec<String>,
}

impl NetpipeClient {
    pub fn new(conn: u16, np: Netpipe) -> Self {
        NetpipeClient {
            conn,
            np,
            phase: Phase::NextPoint,
            point: None,
            rep: 0,
            trial_start: SimTime::ZERO,
            lines: Vec::new(),
        }
    }

    /// Size of the message being exchanged now (the peer echoes this much).
    pub fn current_bytes(&self) -> u64 {
        self.point.map_or(0, |p| p.bytes)
    }

    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    pub fn results(&self) -> &[PointResult] {
        self.np.results()
    }

    /// One scheduling slice starting at `now`.
    pub fn run<I: TcpIo>(&mut self, calls: &mut Calls<I>, mut cost: Nanos) -> (Nanos, Wait) {
        let now = calls.now;
        loop {
            match self.phase {
                Phase::NextPoint => match self.np.next_point() {
                    None => {
                        self.phase = Phase::Done;
                        return (cost, Wait::Done);
                    }
                    Some(p) => {
                        self.point = Some(p);
                        self.start_trial(now + cost);
                    }
                },
                Phase::Exchange(mut x) => {
                    let blocked = x.run(calls, &mut cost, self.conn);
                    self.phase = Phase::Exchange(x);
                    if let Some(wait) = blocked {
                        return (cost, wait);
                    }
                    self.rep += 1;
                    let p = self.point.expect("a point is running");
                    if self.rep < p.nrepeat {
                        self.phase = Phase::Exchange(Exchange::new(p.bytes, p.bytes));
                        continue;
                    }
                    let elapsed = (now + cost) - self.trial_start;
                    match self.np.trial_done(elapsed) {
                        Some(res) => {
                            self.lines.push(format_line(&res));
                            self.phase = Phase::NextPoint;
                        }
                        None => self.start_trial(now + cost),
                    }
                }
                Phase::Done => return (cost, Wait::Done),
            }
        }
    }

    fn start_trial(&mut self, t: SimTime) {
        self.trial_start = t;
        self.rep = 0;
        let bytes = self.current_bytes();
        self.phase = Phase::Exchange(Exchange::new(bytes, bytes));
    }
}

/// The NPtcp receiver side: read a whole message, write it back.
pub struct NetpipeServer {
    pub conn: u16,
    /// Bytes still to read of the current message (None: not started).
    read_left: Option<u64>,
    write_left: u64,
    msg: u64,
}

impl NetpipeServer {
    pub fn new(conn: u16) -> Self {
        NetpipeServer {
            conn,
            read_left: None,
            write_left: 0,
            msg: 0,
        }
    }

    /// One slice; `msg_bytes` is the size of the message the client is sending.
    pub fn run<I: TcpIo>(
        &mut self,
        calls: &mut Calls<I>,
        mut cost: Nanos,
        msg_bytes: u64,
    ) -> (Nanos, Wait) {
        loop {
            if self.write_left > 0
                && !calls.write_rest(&mut cost, self.conn, 1, &mut self.write_left)
            {
                return (cost, Wait::Writable);
            }
            let left = match self.read_left {
                Some(l) => l,
                None => {
                    // The size of a new message is known once its first byte
                    // arrived (the client has moved to it by then).
                    if msg_bytes == 0 || calls.io.readable(self.conn, 1) == 0 {
                        return (cost, Wait::Readable);
                    }
                    self.msg = msg_bytes;
                    msg_bytes
                }
            };
            let n = calls.read(&mut cost, self.conn, 1, left);
            if n < left {
                self.read_left = Some(left - n);
                return (cost, Wait::Readable);
            }
            self.read_left = None;
            self.write_left = self.msg;
        }
    }
}

/// Request/response client (netperf TCP_RR-like): one request of
/// `request_bytes` outstanding at a time; the transaction time runs from the
/// request's write call to the end of reading the whole response, then the
/// next request follows after `think` (closed loop).
pub struct RpcClient {
    pub conn: u16,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub think: Nanos,
    phase: RpcPhase,
    started: SimTime,
    pub transactions: u64,
    pub latency: crate::metrics::LatencyHist,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RpcPhase {
    Idle,
    Exchange(Exchange),
    Think,
}

impl RpcClient {
    pub fn new(conn: u16, request_bytes: u64, response_bytes: u64, think: Nanos) -> Self {
        RpcClient {
            conn,
            request_bytes,
            response_bytes,
            think,
            phase: RpcPhase::Idle,
            started: SimTime::ZERO,
            transactions: 0,
            latency: crate::metrics::LatencyHist::new(),
        }
    }

    /// The next request's write call is at `t`.
    fn start(&mut self, t: SimTime) {
        self.started = t;
        self.phase = RpcPhase::Exchange(Exchange::new(self.request_bytes, self.response_bytes));
    }

    /// One slice. Returns the wait, and `Some(t)` when the client sleeps
    /// until `t` (think time) instead of waiting for the socket.
    pub fn run<I: TcpIo>(
        &mut self,
        calls: &mut Calls<I>,
        mut cost: Nanos,
    ) -> (Nanos, Wait, Option<SimTime>) {
        let now = calls.now;
        loop {
            match self.phase {
                RpcPhase::Idle | RpcPhase::Think => self.start(now + cost),
                RpcPhase::Exchange(mut x) => {
                    let blocked = x.run(calls, &mut cost, self.conn);
                    self.phase = RpcPhase::Exchange(x);
                    if let Some(wait) = blocked {
                        return (cost, wait, None);
                    }
                    self.transactions += 1;
                    self.latency.record(((now + cost) - self.started).as_ns());
                    if !self.think.is_zero() {
                        self.phase = RpcPhase::Think;
                        return (cost, Wait::Readable, Some(now + cost + self.think));
                    }
                    self.start(now + cost);
                }
            }
        }
    }
}

/// epoll busy polling of a server (EPIOCSPARAMS); the world runs the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusyPoll {
    /// `busy_poll_usecs`: how long one epoll_wait spins before sleeping.
    pub spin: Nanos,
    /// `busy_poll_budget` [packets per poll].
    pub budget: u32,
    /// `prefer_busy_poll`.
    pub prefer: bool,
}

/// Request/response server: read a whole request, compute for `think`
/// (CPU time), write the response.
pub struct RpcServer {
    pub conn: u16,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// CPU time per request between reading it and writing the response.
    pub think: Nanos,
    /// epoll busy polling instead of sleeping (None: sleep).
    pub busy: Option<BusyPoll>,
    read_left: u64,
    write_left: u64,
}

impl RpcServer {
    pub fn new(conn: u16, request_bytes: u64, response_bytes: u64) -> Self {
        RpcServer {
            conn,
            request_bytes,
            response_bytes,
            think: Nanos::ZERO,
            busy: None,
            read_left: request_bytes,
            write_left: 0,
        }
    }

    pub fn run<I: TcpIo>(&mut self, calls: &mut Calls<I>, mut cost: Nanos) -> (Nanos, Wait) {
        loop {
            if self.write_left > 0 {
                if !calls.write_rest(&mut cost, self.conn, 1, &mut self.write_left) {
                    return (cost, Wait::Writable);
                }
                self.read_left = self.request_bytes;
            }
            let n = calls.read(&mut cost, self.conn, 1, self.read_left);
            self.read_left -= n;
            if self.read_left > 0 {
                return (cost, Wait::Readable);
            }
            cost += self.think;
            self.write_left = self.response_bytes;
        }
    }
}

/// iperf-like bulk sender over one or more connections.
pub struct IperfClient {
    pub conns: Vec<u16>,
    pub write_bytes: u64,
    pub written: u64,
}

impl IperfClient {
    pub fn run<I: TcpIo>(&mut self, calls: &mut Calls<I>, mut cost: Nanos) -> (Nanos, Wait) {
        let write = self.write_bytes;
        self.written += until_idle(&self.conns, |c| calls.write(&mut cost, c, 0, write));
        (cost, Wait::Writable)
    }
}

/// Round-robin over `conns`, calling `call` (one socket call, returning the
/// bytes it moved) on each in turn until a whole round moves nothing, as
/// iperf's streams share one process; returns the bytes moved.
fn until_idle(conns: &[u16], mut call: impl FnMut(u16) -> u64) -> u64 {
    let mut total = 0;
    loop {
        let mut progress = false;
        for &c in conns {
            let n = call(c);
            total += n;
            progress |= n > 0;
        }
        if !progress {
            return total;
        }
    }
}

/// iperf-like receiver.
pub struct IperfServer {
    pub conns: Vec<u16>,
    pub read_bytes: u64,
}

impl IperfServer {
    pub fn run<I: TcpIo>(&mut self, calls: &mut Calls<I>, mut cost: Nanos) -> (Nanos, Wait) {
        self.read_bytes += until_idle(&self.conns, |c| calls.read(&mut cost, c, 1, u64::MAX));
        (cost, Wait::Readable)
    }
}
