//! NetPIPE 3.x `NPtcp` measurement driver as a state machine: which message
//! sizes are measured, how many ping-pong round trips each trial makes, how
//! the reported time is derived, when the run stops, and the console line it
//! prints. It knows nothing about the network: the simulator asks for the
//! next point, runs `nrepeat` round trips of `bytes` per trial, reports each
//! trial's elapsed time, and prints the result.
//!
//! Models (transmitter side of a default ping-pong run, `NPtcp -h host`):
//! - Size schedule. Sizes start at `start` (1 B) with increment `inc` (1, or
//!   `start/2` when `start > 1`; the step counter `nq` then starts at 1
//!   instead of 0). Before each new size, once `nq > 2`, `inc` doubles on odd
//!   `nq`, which gives 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, ... Each size is
//!   run at `len-p, len, len+p` when `p > 0` and `inc > p + 1` (p = 3 by
//!   default), otherwise at `len` only. A new size is started only while the
//!   point index is below NSAMP-3, the last point's time is below STOPTM and
//!   `len <= end`; the bound applies to `len`, not to `len + p`, and is checked
//!   per size, so the perturbed points of a size always complete.
//! - Repeats. `nrepeat = max(RUNTM / (prev / (prev - inc + 1) * tlast),
//!   TRIALS)` truncated to an integer, where `prev` is the size of the
//!   *previous* point (NetPIPE computes it before updating its buffer length),
//!   `inc` the current increment and `tlast` the previous point's time. The
//!   first size instead uses either the fixed 20 us guess
//!   `RUNTM / (0.000020 + start/(8*1000))` (C integer division inside) or, in
//!   NetPIPE 3.6.x, a measured `tlast` (see [`NetpipeConfig::first_tlast`]).
//! - Timing. Each of TRIALS trials runs `nrepeat` round trips; its time is
//!   `(elapsed / nrepeat) / 2` (half a round trip). A point reports the
//!   minimum over its trials (a zero minimum becomes 1 us, as in NetPIPE), and
//!   that minimum is `tlast` for the next point and for the stop check.
//! - Units. `Mbps = bytes * 8 / (t[s] * 1024 * 1024)`: NetPIPE's "Mbps" is
//!   2^20 bit/s, not 10^6.
//! - Output. One console line per point, `"%3d: %7d bytes %6d times --> "`
//!   followed by `" %8.2lf Mbps in %10.2lf usec"`.
//!
//! Floating point. NetPIPE computes `nrepeat` in C `double` expressions. The
//! 2004-era i386 builds evaluate them on the x87 FPU with 64-bit significands
//! (FLT_EVAL_METHOD 2) before truncating to `int`, and that is visible in the
//! 2004 post's log (see Sources): 0.1 / 0.000020 is 4999.99999999999987 for
//! the two doubles, which rounds to 5000.0 in IEEE double but stays below
//! 5000 in x87 extended precision, hence "4999 times". [`FloatEval`] selects
//! x87 extended (default, emulated exactly in software below) or plain double
//! (x86-64 / SSE2 builds, which print 5000). Elsewhere time is integer ns;
//! f64 appears only in that emulation and in the derived Mbps.
//!
//! Simplifies: transmitter only; no streaming (`-s`), bidirectional (`-2`),
//! constant-repeat (`-n`), cache-invalidation (`-I`) or integrity (`-i`)
//! modes; the per-trial time is truncated to whole ns (NetPIPE's clock is
//! gettimeofday, 1 us); no `np.out` file, only the console lines.
//!
//! Units: durations [ns] (`Nanos`), sizes [bytes], rates [NetPIPE Mbps =
//! 2^20 bit/s].
//!
//! Sources: NetPIPE 3.6.x `src/netpipe.c` (main loop, repeat formula,
//! trial timing, output format) and `src/netpipe.h` (TRIALS 3 and RUNTM 0.10
//! for non-FINAL builds, NSAMP 8000, DEFPERT 3, STOPTM 1.0, MAXINT 10000000
//! as the default upper bound, CHARSIZE 8). In 3.6.x the 20 us first-point
//! guess is commented out and replaced by a 100-round-trip pre-test; the
//! build in the linux-kernel post "abysmal e1000 performance (DITR)" (NPtcp,
//! 25 May 2004; "the 2004 post" below) still used the guess, as its
//! "4999 times" shows. That post's log gives the reported lines used in
//! the tests.

use crate::units::Nanos;

/// Trials per point (netpipe.h, non-FINAL build).
pub const TRIALS: u32 = 3;
/// Target duration of one trial (netpipe.h RUNTM 0.10 s, non-FINAL build).
pub const RUNTM: Nanos = Nanos(100_000_000);
/// The run stops once a point takes at least this long (netpipe.h STOPTM 1.0 s).
pub const STOPTM: Nanos = Nanos(1_000_000_000);
/// Default perturbation [bytes] (netpipe.h DEFPERT).
pub const DEFPERT: u64 = 3;
/// Size of NetPIPE's result array; a new size starts only while the point
/// index is below `NSAMP - 3` (netpipe.h NSAMP).
pub const NSAMP: u32 = 8000;
/// Default first size [bytes] (netpipe.c `start = 1`).
pub const DEFAULT_START: u64 = 1;
/// Default upper bound on the unperturbed size [bytes] (netpipe.h MAXINT,
/// 10,000,000 in 3.6.x). With the default schedule the last size run is
/// 8,388,608 (the next one, 12,582,912, is above the bound), so an 8 MiB
/// bound gives the same run.
pub const DEFAULT_END: u64 = 10_000_000;
/// First-point time guess [s] of the pre-3.6 first-point formula.
pub const FIRST_GUESS_S: f64 = 0.000020;
/// Bits per byte (netpipe.h CHARSIZE).
const CHARSIZE: u64 = 8;
/// A zero point time is replaced by 1 us (netpipe.c guard against streaming
/// artefacts).
const MIN_T: Nanos = Nanos(1_000);

/// How NetPIPE's C floating-point expressions for `nrepeat` are evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FloatEval {
    /// x87 FPU, 64-bit significand intermediates (i386 gcc builds of the
    /// era; reproduces the 2004 post's "4999 times").
    #[default]
    X87Extended,
    /// IEEE double throughout (x86-64 / SSE2 builds; the first point gets 5000).
    Double,
}

/// NPtcp run parameters. `Default` gives a plain `NPtcp -h host` run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetpipeConfig {
    /// First size [bytes] (`-l`), >= 1.
    pub start_bytes: u64,
    /// Upper bound on the unperturbed size [bytes] (`-u`).
    pub end_bytes: u64,
    /// Perturbation [bytes] (`-p`); 0 disables perturbed points.
    pub perturbation: u64,
    /// Trials per point; also the lower bound of `nrepeat`.
    pub trials: u32,
    /// Target trial duration.
    pub runtm: Nanos,
    /// Stop threshold on the last point's time.
    pub stoptm: Nanos,
    /// `None`: the first size uses the fixed 20 us guess (the build in the
    /// 2004 post). `Some(t)`: NetPIPE 3.6.x behaviour, where `t` is half the mean
    /// round trip of 100 ping-pongs of `start_bytes` measured by the caller
    /// before the run; it then feeds the normal repeat formula as `tlast`.
    pub first_tlast: Option<Nanos>,
    /// Floating-point evaluation of the repeat formula.
    pub float_eval: FloatEval,
}

impl Default for NetpipeConfig {
    fn default() -> Self {
        NetpipeConfig {
            start_bytes: DEFAULT_START,
            end_bytes: DEFAULT_END,
            perturbation: DEFPERT,
            trials: TRIALS,
            runtm: RUNTM,
            stoptm: STOPTM,
            first_tlast: None,
            float_eval: FloatEval::X87Extended,
        }
    }
}

/// One point to measure: `nrepeat` round trips of `bytes` per trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// NetPIPE's point index `n` (0-based, printed first on the line).
    pub index: u32,
    /// Message size [bytes].
    pub bytes: u64,
    /// Round trips per trial.
    pub nrepeat: u64,
}

/// A measured point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointResult {
    pub index: u32,
    /// Message size [bytes].
    pub bytes: u64,
    /// Round trips per trial.
    pub nrepeat: u64,
    /// Minimum over the trials of (elapsed / nrepeat) / 2, i.e. half a round trip.
    pub t: Nanos,
    /// Throughput [NetPIPE Mbps = 2^20 bit/s].
    pub mbps: f64,
}

/// The NPtcp transmitter's measurement loop.
#[derive(Clone, Debug)]
pub struct Netpipe {
    cfg: NetpipeConfig,
    /// Unperturbed size of the current size step.
    len: u64,
    /// Size increment.
    inc: u64,
    /// Size step counter (drives the doubling of `inc`).
    nq: u64,
    /// Inside the perturbation loop of `len`.
    in_len: bool,
    /// Next perturbation of `len` to run.
    pert: i64,
    /// Index of the next point.
    n: u32,
    /// Size of the previous point (NetPIPE's buffer length when it computes
    /// the next `nrepeat`).
    prev_bytes: u64,
    /// Time of the previous point (or the pre-test / zero before the first).
    tlast: Nanos,
    /// The point being measured, its completed trials and best time so far.
    current: Option<Point>,
    trials_done: u32,
    best: Nanos,
    finished: bool,
    results: Vec<PointResult>,
}

impl Netpipe {
    /// # Panics
    /// If `start_bytes` is 0, `start_bytes > end_bytes` (NetPIPE refuses
    /// both) or `trials` is 0.
    pub fn new(cfg: NetpipeConfig) -> Self {
        assert!(cfg.start_bytes >= 1, "NetPIPE needs a starting size >= 1");
        assert!(
            cfg.start_bytes <= cfg.end_bytes,
            "NetPIPE start must not exceed end"
        );
        assert!(cfg.trials >= 1, "at least one trial per point");
        let (inc, nq) = if cfg.start_bytes > 1 {
            (cfg.start_bytes / 2, 1)
        } else {
            (1, 0)
        };
        Netpipe {
            cfg,
            len: cfg.start_bytes,
            inc,
            nq,
            in_len: false,
            pert: 0,
            n: 0,
            prev_bytes: cfg.start_bytes,
            tlast: cfg.first_tlast.unwrap_or(Nanos::ZERO),
            current: None,
            trials_done: 0,
            best: Nanos(u64::MAX),
            finished: false,
            results: Vec::new(),
        }
    }

    pub fn config(&self) -> &NetpipeConfig {
        &self.cfg
    }

    /// The next point to measure, or `None` when the run is over. While a
    /// point's trials are still outstanding this returns that same point.
    pub fn next_point(&mut self) -> Option<Point> {
        if let Some(p) = self.current {
            return Some(p);
        }
        if self.finished {
            return None;
        }
        let p = self.cfg.perturbation as i64;
        loop {
            if !self.in_len {
                // Condition of NetPIPE's outer (size) loop.
                if !(self.n < NSAMP - 3
                    && self.tlast < self.cfg.stoptm
                    && self.len <= self.cfg.end_bytes)
                {
                    self.finished = true;
                    return None;
                }
                if self.nq > 2 && self.nq % 2 == 1 {
                    self.inc += self.inc;
                }
                self.pert = if self.perturbed() { -p } else { 0 };
                self.in_len = true;
            }
            if self.pert > p {
                self.in_len = false;
                self.len += self.inc;
                self.nq += 1;
                continue;
            }
            let bytes = self.len as i64 + self.pert;
            assert!(bytes > 0, "perturbed size below 1 byte");
            self.pert += if self.perturbed() { p } else { p + 1 };
            let point = Point {
                index: self.n,
                bytes: bytes as u64,
                nrepeat: self.nrepeat(),
            };
            self.current = Some(point);
            self.trials_done = 0;
            self.best = Nanos(u64::MAX);
            return Some(point);
        }
    }

    /// Report one trial of the current point: the total elapsed time of its
    /// `nrepeat` round trips. Returns the result after the last trial.
    ///
    /// # Panics
    /// If no point is being measured (call [`Netpipe::next_point`] first).
    pub fn trial_done(&mut self, elapsed: Nanos) -> Option<PointResult> {
        let point = self.current.expect("trial_done without a current point");
        // (elapsed / nrepeat) / 2, truncated to whole ns.
        let t = Nanos(elapsed.0 / point.nrepeat.max(1) / 2);
        self.best = self.best.min(t);
        self.trials_done += 1;
        if self.trials_done < self.cfg.trials {
            return None;
        }
        let t = if self.best.is_zero() {
            MIN_T
        } else {
            self.best
        };
        let result = PointResult {
            index: point.index,
            bytes: point.bytes,
            nrepeat: point.nrepeat,
            t,
            mbps: netpipe_mbps(point.bytes, t),
        };
        self.tlast = t;
        self.prev_bytes = point.bytes;
        self.n += 1;
        self.current = None;
        self.results.push(result);
        Some(result)
    }

    /// Completed points, in order.
    pub fn results(&self) -> &[PointResult] {
        &self.results
    }

    /// True once [`Netpipe::next_point`] has returned `None`.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn perturbed(&self) -> bool {
        self.cfg.perturbation > 0 && self.inc > self.cfg.perturbation + 1
    }

    fn nrepeat(&self) -> u64 {
        let runtm_s = self.cfg.runtm.0 as f64 / 1e9;
        let trials = u64::from(self.cfg.trials);
        if self.len == self.cfg.start_bytes && self.cfg.first_tlast.is_none() {
            first_guess_repeats(runtm_s, self.cfg.start_bytes, trials, self.cfg.float_eval)
        } else {
            repeats(
                runtm_s,
                self.prev_bytes,
                self.inc,
                self.tlast.0 as f64 / 1e9,
                trials,
                self.cfg.float_eval,
            )
        }
    }
}

/// NetPIPE throughput [Mbps = 2^20 bit/s] of `bytes` moved one way in `t`.
pub fn netpipe_mbps(bytes: u64, t: Nanos) -> f64 {
    let bits = (bytes * CHARSIZE) as f64;
    bits / ((t.0 as f64 / 1e9) * 1024.0 * 1024.0)
}

/// The NPtcp console line of a point (without the newline), e.g.
/// `"  0:       1 bytes   4999 times -->      0.03 Mbps in     250.03 usec"`.
pub fn format_line(r: &PointResult) -> String {
    // NetPIPE prints "%3d: %7d bytes %6d times --> " before the trials and
    // " %8.2lf Mbps in %10.2lf usec" after them, hence two spaces after "-->".
    format!(
        "{:3}: {:7} bytes {:6} times -->  {:8.2} Mbps in {:10.2} usec",
        r.index,
        r.bytes,
        r.nrepeat,
        r.mbps,
        r.t.0 as f64 / 1_000.0
    )
}

/// Repeats of the first size without a pre-test:
/// `max(RUNTM / (0.000020 + start/(8*1000)), TRIALS)` with C integer
/// division for `start/(8*1000)`.
fn first_guess_repeats(runtm_s: f64, start: u64, trials: u64, eval: FloatEval) -> u64 {
    let whole = start / (8 * 1000);
    let x = match eval {
        FloatEval::Double => trunc_f64(runtm_s / (FIRST_GUESS_S + whole as f64)),
        FloatEval::X87Extended => {
            // For start >= 8000 the sum is rounded to double here rather than
            // to 64 bits; with RUNTM < 1 s the quotient is below 1 either way.
            let den = Ext::from_f64(FIRST_GUESS_S + whole as f64);
            Ext::from_f64(runtm_s).div(den).trunc()
        }
    };
    x.max(trials)
}

/// `max(RUNTM / ((double)prev / (prev - inc + 1.0) * tlast), TRIALS)`,
/// truncated as C's conversion to int.
fn repeats(runtm_s: f64, prev: u64, inc: u64, tlast_s: f64, trials: u64, eval: FloatEval) -> u64 {
    // prev - inc is C int arithmetic; a non-positive denominator makes the
    // quotient 0 or negative, so MAX picks TRIALS.
    let den = prev as i64 - inc as i64 + 1;
    if den <= 0 || tlast_s <= 0.0 {
        return trials;
    }
    let x = match eval {
        FloatEval::Double => trunc_f64(runtm_s / (prev as f64 / den as f64 * tlast_s)),
        FloatEval::X87Extended => {
            let ratio = Ext::from_u64(prev).div(Ext::from_u64(den as u64));
            let denom = ratio.mul(Ext::from_f64(tlast_s));
            Ext::from_f64(runtm_s).div(denom).trunc()
        }
    };
    x.max(trials)
}

/// C conversion of a non-negative double to an integer (toward zero),
/// saturating instead of undefined behaviour.
fn trunc_f64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x as u64
    }
}

/// A positive x87 extended-precision value `sig * 2^exp` with a normalised
/// 64-bit significand (top bit set). Only what the repeat formula needs:
/// exact conversion in, multiply and divide rounded to nearest-even, and
/// truncation to an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ext {
    sig: u64,
    exp: i32,
}

impl Ext {
    /// Exact conversion of a positive finite double.
    fn from_f64(x: f64) -> Ext {
        debug_assert!(x.is_finite() && x > 0.0);
        let bits = x.to_bits();
        let raw_exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if raw_exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), raw_exp - 1075)
        };
        let lz = m.leading_zeros();
        Ext {
            sig: m << lz,
            exp: e - lz as i32,
        }
    }

    /// Exact conversion of a positive integer.
    fn from_u64(n: u64) -> Ext {
        debug_assert!(n > 0);
        let lz = n.leading_zeros();
        Ext {
            sig: n << lz,
            exp: -(lz as i32),
        }
    }

    /// Round `sig` (64 kept bits) up when the dropped part is above half, or
    /// exactly half and `sig` is odd.
    fn round(sig: u64, exp: i32, above_half: bool, exactly_half: bool) -> Ext {
        if above_half || (exactly_half && sig & 1 == 1) {
            match sig.checked_add(1) {
                Some(s) => Ext { sig: s, exp },
                None => Ext {
                    sig: 1 << 63,
                    exp: exp + 1,
                },
            }
        } else {
            Ext { sig, exp }
        }
    }

    fn mul(self, o: Ext) -> Ext {
        let p = u128::from(self.sig) * u128::from(o.sig); // in [2^126, 2^128)
        let lz = p.leading_zeros(); // 0 or 1
        let p = p << lz;
        let sig = (p >> 64) as u64;
        let rest = p as u64;
        let half = 1u64 << 63;
        Ext::round(
            sig,
            self.exp + o.exp + 64 - lz as i32,
            rest > half,
            rest == half,
        )
    }

    fn div(self, o: Ext) -> Ext {
        let num = u128::from(self.sig) << 64;
        let d = u128::from(o.sig);
        let q = num / d; // in (2^63, 2^65)
        let r = num % d;
        let exp = self.exp - o.exp - 64;
        if q >> 64 != 0 {
            // 65 bits: drop the lowest; it and the remainder decide rounding.
            let guard = q & 1 == 1;
            Ext::round((q >> 1) as u64, exp + 1, guard && r != 0, guard && r == 0)
        } else {
            // 64 bits: the remainder alone decides (compare 2r with d).
            let twice = r << 1;
            Ext::round(q as u64, exp, twice > d, twice == d)
        }
    }

    /// Truncation toward zero, saturating at `u64::MAX`.
    fn trunc(self) -> u64 {
        if self.exp > 0 {
            u64::MAX
        } else if self.exp <= -64 {
            0
        } else {
            self.sig >> (-self.exp) as u32
        }
    }
}

#[cfg(test)]
mod tests;
