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
mod tests {
    use super::*;

    /// Drive a whole run; `t_of(index)` gives the half round trip every trial
    /// of that point should measure. Returns all points handed out.
    fn drive(cfg: NetpipeConfig, mut t_of: impl FnMut(u32) -> Nanos) -> (Netpipe, Vec<Point>) {
        let mut np = Netpipe::new(cfg);
        let mut points = Vec::new();
        while let Some(p) = np.next_point() {
            points.push(p);
            let elapsed = Nanos(t_of(p.index).0 * 2 * p.nrepeat);
            let mut out = None;
            for _ in 0..cfg.trials {
                out = np.trial_done(elapsed);
            }
            assert!(out.is_some());
            assert!(points.len() < 10_000, "runaway schedule");
        }
        (np, points)
    }

    fn fast(_: u32) -> Nanos {
        Nanos::from_us(10)
    }

    #[test]
    fn default_size_schedule() {
        let (np, points) = drive(NetpipeConfig::default(), fast);
        let sizes: Vec<(u32, u64)> = points.iter().map(|p| (p.index, p.bytes)).collect();
        // inc: 1 for nq = 0..2, then doubled on odd nq (2 at nq 3, 4 at nq 5,
        // 8 at nq 7, ...). Single points while inc <= DEFPERT + 1 = 4:
        // 1, 2, 3 (inc 1), 4, 6 (inc 2), 8, 12 (inc 4). From len 16 (inc 8 > 4)
        // every size is run at len-3, len, len+3: 16 (inc 8), 24 (8), 32 (16),
        // 48 (16), 64 (32).
        let head = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 6),
            (5, 8),
            (6, 12),
            (7, 13),
            (8, 16),
            (9, 19),
            (10, 21),
            (11, 24),
            (12, 27),
            (13, 29),
            (14, 32),
            (15, 35),
            (16, 45),
            (17, 48),
            (18, 51),
            (19, 61),
            (20, 64),
            (21, 67),
        ];
        assert_eq!(&sizes[..head.len()], &head);
        // The 2004 post's lines 70-81 and 121-123.
        let seed = [
            (70, 24573),
            (71, 24576),
            (72, 24579),
            (73, 32765),
            (74, 32768),
            (75, 32771),
            (76, 49149),
            (77, 49152),
            (78, 49155),
            (79, 65533),
            (80, 65536),
            (81, 65539),
        ];
        assert_eq!(&sizes[70..82], &seed);
        // Last size 8388608 = 2^23 with inc 2^22: the next len 12582912 is
        // above MAXINT 10000000, so the run ends at index 123 (the 2004 post).
        assert_eq!(
            &sizes[sizes.len() - 3..],
            &[(121, 8388605), (122, 8388608), (123, 8388611)]
        );
        assert_eq!(points.len(), 124);
        assert_eq!(np.results().len(), 124);
        assert!(np.is_finished());
    }

    #[test]
    fn eight_mib_end_gives_the_same_run() {
        let cfg = NetpipeConfig {
            end_bytes: 8_388_608,
            ..NetpipeConfig::default()
        };
        let (_, a) = drive(cfg, fast);
        let (_, b) = drive(NetpipeConfig::default(), fast);
        let sizes = |v: &[Point]| v.iter().map(|p| p.bytes).collect::<Vec<_>>();
        assert_eq!(sizes(&a), sizes(&b));
    }

    #[test]
    fn first_point_uses_the_20us_guess() {
        // RUNTM / (0.000020 + 1/8000) with 1/8000 == 0 in C: the exact
        // quotient of the doubles 0.1 and 0.000020 is 4999.99999999999987,
        // below 5000 by 1.3e-13. x87 keeps that (its ulp near 5000 is 2^-51,
        // 4.4e-16) and truncates to 4999, as the 2004 post prints; IEEE double
        // rounds it to 5000.0 (ulp 2^-40, 9.1e-13).
        let mut np = Netpipe::new(NetpipeConfig::default());
        assert_eq!(
            np.next_point(),
            Some(Point {
                index: 0,
                bytes: 1,
                nrepeat: 4999
            })
        );
        let mut np = Netpipe::new(NetpipeConfig {
            float_eval: FloatEval::Double,
            ..NetpipeConfig::default()
        });
        assert_eq!(np.next_point().unwrap().nrepeat, 5000);
        // start >= 8000: start/8000 >= 1 s of guess, 0.1/1.00002 < 1 -> TRIALS.
        let mut np = Netpipe::new(NetpipeConfig {
            start_bytes: 8000,
            ..NetpipeConfig::default()
        });
        assert_eq!(np.next_point().unwrap().nrepeat, 3);
    }

    #[test]
    fn first_point_with_a_pretest_uses_the_formula() {
        // NetPIPE 3.6.x: tlast from the pre-test, prev = start = 1, inc = 1:
        // 0.1 / (1/1 * 300 us) = 333.3 -> 333.
        let mut np = Netpipe::new(NetpipeConfig {
            first_tlast: Some(Nanos::from_us(300)),
            ..NetpipeConfig::default()
        });
        assert_eq!(np.next_point().unwrap().nrepeat, 333);
        // A pre-test at or above STOPTM ends the run before it starts.
        let mut np = Netpipe::new(NetpipeConfig {
            first_tlast: Some(STOPTM),
            ..NetpipeConfig::default()
        });
        assert_eq!(np.next_point(), None);
    }

    #[test]
    fn repeats_follow_the_seed_log() {
        // The 2004 post, DITR run. Points 1 and 2 follow t = 250.03 and 250.02 us
        // with prev/(prev-inc+1) = 1/1 and 2/2: 0.1/250.03e-6 = 399.95 and
        // 0.1/250.02e-6 = 399.97 -> 399.
        // Later points: prev is the previous point's size, inc the current one.
        //  71: prev 24573, inc 8192:  24573/16382 = 1.50000; 0.1/(1.5*492.85e-6) = 135.27 -> 135
        //  72: prev 24576, inc 8192:  24576/16385 = 1.49991; 0.1/(1.49991*492.86e-6) = 135.28 -> 135
        //  73: prev 24579, inc 16384: 24579/8196 = 2.99890;  0.1/(2.99890*492.84e-6) = 67.66 -> 67
        //  74: prev 32765, inc 16384: 32765/16382 = 2.00006; 0.1/(2.00006*732.39e-6) = 68.27 -> 68
        //  75: prev 32768: 32768/16385 = 1.99988; 0.1/(1.99988*732.35e-6) = 68.28 -> 68
        //  76: prev 32771: 32771/16388 = 1.99969; 0.1/(1.99969*732.33e-6) = 68.28 -> 68
        //  77: prev 49149: 49149/32766 = 1.50000; 0.1/(1.5*858.04e-6) = 77.70 -> 77
        //  78: prev 49152: 49152/32769 = 1.49989; 0.1/(1.49989*830.77e-6) = 80.25 -> 80
        //  79: prev 49155, inc 32768: 49155/16388 = 2.99945; 0.1/(2.99945*750.69e-6) = 44.41 -> 44
        //  80: prev 65533: 65533/32766 = 2.00003; 0.1/(2.00003*1221.00e-6) = 40.95 -> 40
        //  81: prev 65536: 65536/32769 = 1.99997; 0.1/(1.99997*1221.24e-6) = 40.94 -> 40
        let cases: [(u64, u64, f64, u64); 13] = [
            (1, 1, 250.03e-6, 399),
            (2, 1, 250.02e-6, 399),
            (24573, 8192, 492.85e-6, 135),
            (24576, 8192, 492.86e-6, 135),
            (24579, 16384, 492.84e-6, 67),
            (32765, 16384, 732.39e-6, 68),
            (32768, 16384, 732.35e-6, 68),
            (32771, 16384, 732.33e-6, 68),
            (49149, 16384, 858.04e-6, 77),
            (49152, 16384, 830.77e-6, 80),
            (49155, 32768, 750.69e-6, 44),
            (65533, 32768, 1221.00e-6, 40),
            (65536, 32768, 1221.24e-6, 40),
        ];
        for (prev, inc, tlast, want) in cases {
            for eval in [FloatEval::X87Extended, FloatEval::Double] {
                assert_eq!(repeats(0.1, prev, inc, tlast, 3, eval), want, "prev {prev}");
            }
        }
        // Using the current size instead of the previous one would give a
        // different count at 73: 32765/16382 * 492.84e-6 -> 0.1/9.857e-4 = 101.
        assert_eq!(
            repeats(0.1, 32765, 16384, 492.84e-6, 3, FloatEval::Double),
            101
        );
        // ITR=8000 run, 120 and 121: prev 6291456 / 6291459, inc 2097152,
        // ratio 1.5; 0.1/(1.5*0.05385183) = 1.24 < TRIALS -> 3.
        assert_eq!(
            repeats(0.1, 6291456, 2097152, 0.05385183, 3, FloatEval::X87Extended),
            3
        );
        assert_eq!(
            repeats(0.1, 6291459, 2097152, 0.05385135, 3, FloatEval::X87Extended),
            3
        );
    }

    #[test]
    fn state_machine_chains_repeats_from_measured_times() {
        // The 2004 post's times [ns] for points 0-2 and 70-80; others fast.
        let seed_t = |i: u32| -> Option<u64> {
            Some(match i {
                0 => 250_030,
                1 | 2 => 250_020,
                70 => 492_850,
                71 => 492_860,
                72 => 492_840,
                73 => 732_390,
                74 => 732_350,
                75 => 732_330,
                76 => 858_040,
                77 => 830_770,
                78 => 750_690,
                79 => 1_221_000,
                80 => 1_221_240,
                _ => return None,
            })
        };
        let (np, points) = drive(NetpipeConfig::default(), |i| {
            seed_t(i).map_or(Nanos::from_us(10), Nanos)
        });
        // nrepeat printed in the 2004 post for points 0-2 and 71-81.
        let want = [
            (0, 4999),
            (1, 399),
            (2, 399),
            (71, 135),
            (72, 135),
            (73, 67),
            (74, 68),
            (75, 68),
            (76, 68),
            (77, 77),
            (78, 80),
            (79, 44),
            (80, 40),
            (81, 40),
        ];
        for (i, n) in want {
            assert_eq!(points[i].nrepeat, n, "point {i}");
        }
        assert_eq!(np.results()[70].t, Nanos(492_850));
    }

    #[test]
    fn point_keeps_the_minimum_over_trials() {
        let mut np = Netpipe::new(NetpipeConfig::default());
        let p = np.next_point().unwrap();
        assert_eq!(p.nrepeat, 4999);
        // Half round trips 300, 250.03, 280 us -> elapsed = 2 * 4999 * t.
        assert_eq!(np.trial_done(Nanos(2 * 4999 * 300_000)), None);
        // Still the same point while trials are outstanding.
        assert_eq!(np.next_point(), Some(p));
        assert_eq!(np.trial_done(Nanos(2 * 4999 * 250_030)), None);
        let r = np.trial_done(Nanos(2 * 4999 * 280_000)).unwrap();
        assert_eq!(r.t, Nanos(250_030));
        // tlast = that minimum: next count 0.1/250.03e-6 = 399.95 -> 399.
        assert_eq!(np.next_point().unwrap().nrepeat, 399);
    }

    #[test]
    fn zero_time_becomes_one_microsecond() {
        let mut np = Netpipe::new(NetpipeConfig::default());
        np.next_point().unwrap();
        let mut r = None;
        for _ in 0..TRIALS {
            r = np.trial_done(Nanos::ZERO);
        }
        assert_eq!(r.unwrap().t, Nanos::from_us(1));
    }

    #[test]
    fn stop_rule_checks_the_last_point_of_a_size() {
        // Indexes 10-12 are 21/24/27 and 13-15 are 29/32/35 (see the schedule
        // test). A slow point in the middle of a size does not stop the run
        // when the size's last point is fast; the check happens before each new
        // size and uses the last point's time, and stops when tlast >= STOPTM.
        let (np, points) = drive(NetpipeConfig::default(), |i| match i {
            10 => Nanos::from_ms(1_500),
            14 => Nanos::from_ms(2_000),
            15 => STOPTM,
            _ => Nanos::from_us(10),
        });
        assert_eq!(points.last().unwrap().index, 15);
        assert_eq!(points.len(), 16);
        assert!(np.is_finished());
        // A time just below STOPTM does not stop.
        let (_, points) = drive(NetpipeConfig::default(), |i| match i {
            15 => Nanos(STOPTM.0 - 1),
            _ => Nanos::from_us(10),
        });
        assert_eq!(points.len(), 124);
    }

    #[test]
    fn mbps_is_two_to_the_twenty_bits_per_second() {
        // The 2004 post, ITR=8000: 6291456 bytes in 53851.83 us.
        // 6291456 * 8 = 50331648 bits; 0.05385183 s * 1048576 = 56467.74;
        // 50331648 / 56467.74 = 891.3346 -> printed 891.33.
        let m = netpipe_mbps(6_291_456, Nanos(53_851_830));
        assert!((m - 891.335).abs() < 0.005, "{m}");
        assert_eq!(format!("{m:.2}"), "891.33");
        // 1 byte in 250.03 us: 8 / (250.03e-6 * 1048576) = 0.0305 -> 0.03.
        assert_eq!(format!("{:.2}", netpipe_mbps(1, Nanos(250_030))), "0.03");
    }

    #[test]
    fn line_format_matches_nptcp() {
        // C: "%3d: %7d bytes %6d times --> " then " %8.2lf Mbps in %10.2lf usec".
        let r = PointResult {
            index: 0,
            bytes: 1,
            nrepeat: 4999,
            t: Nanos(250_030),
            mbps: netpipe_mbps(1, Nanos(250_030)),
        };
        assert_eq!(
            format_line(&r),
            "  0:       1 bytes   4999 times -->      0.03 Mbps in     250.03 usec"
        );
        // The 2004 post's lines (its whitespace is collapsed, so compare word by word);
        // index, bytes, nrepeat and usec are taken from each line, Mbps is
        // recomputed from bytes and time.
        let seed = "\
0: 1 bytes 4999 times --> 0.03 Mbps in 250.03 usec
1: 2 bytes 399 times --> 0.06 Mbps in 250.02 usec
2: 3 bytes 399 times --> 0.09 Mbps in 250.02 usec
70: 24573 bytes 121 times --> 380.39 Mbps in 492.85 usec
71: 24576 bytes 135 times --> 380.43 Mbps in 492.86 usec
72: 24579 bytes 135 times --> 380.49 Mbps in 492.84 usec
73: 32765 bytes 67 times --> 341.32 Mbps in 732.39 usec
74: 32768 bytes 68 times --> 341.37 Mbps in 732.35 usec
75: 32771 bytes 68 times --> 341.41 Mbps in 732.33 usec
76: 49149 bytes 68 times --> 437.02 Mbps in 858.04 usec
77: 49152 bytes 77 times --> 451.39 Mbps in 830.77 usec
78: 49155 bytes 80 times --> 499.57 Mbps in 750.69 usec
79: 65533 bytes 44 times --> 409.48 Mbps in 1221.00 usec
80: 65536 bytes 40 times --> 409.42 Mbps in 1221.24 usec
81: 65539 bytes 40 times --> 409.43 Mbps in 1221.28 usec
121: 8388605 bytes 3 times --> 379.88 Mbps in 168474.49 usec
122: 8388608 bytes 3 times --> 411.24 Mbps in 155625.68 usec
123: 8388611 bytes 3 times --> 395.81 Mbps in 161693.50 usec
119: 6291456 bytes 3 times --> 891.33 Mbps in 53851.83 usec
120: 6291459 bytes 3 times --> 891.34 Mbps in 53851.35 usec
121: 8388605 bytes 3 times --> 895.99 Mbps in 71429.49 usec
122: 8388608 bytes 3 times --> 881.12 Mbps in 72634.50 usec
123: 8388611 bytes 3 times --> 885.65 Mbps in 72263.48 usec";
        for line in seed.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let usec = w[9];
            let (whole, frac) = usec.split_once('.').unwrap();
            let t =
                Nanos(whole.parse::<u64>().unwrap() * 1_000 + frac.parse::<u64>().unwrap() * 10);
            let bytes = w[1].parse().unwrap();
            let r = PointResult {
                index: w[0].trim_end_matches(':').parse().unwrap(),
                bytes,
                nrepeat: w[3].parse().unwrap(),
                t,
                mbps: netpipe_mbps(bytes, t),
            };
            let ours = format_line(&r);
            assert_eq!(ours.split_whitespace().collect::<Vec<_>>(), w, "{line}");
        }
    }

    #[test]
    fn x87_emulation_rounds_like_extended_precision() {
        // 1/3 to 64 bits: significand 0xAAAA_AAAA_AAAA_AAAB (rounded up), 2^-65.
        let third = Ext::from_u64(1).div(Ext::from_u64(3));
        assert_eq!(
            third,
            Ext {
                sig: 0xAAAA_AAAA_AAAA_AAAB,
                exp: -65
            }
        );
        // Exact products and quotients stay exact.
        let six = Ext::from_u64(2).mul(Ext::from_u64(3));
        assert_eq!(six.trunc(), 6);
        assert_eq!(Ext::from_u64(12).div(Ext::from_u64(4)).trunc(), 3);
        assert_eq!(Ext::from_f64(0.5).trunc(), 0);
        assert_eq!(Ext::from_f64(4999.75).trunc(), 4999);
        // The 2004 post's first point.
        assert_eq!(
            Ext::from_f64(0.1).div(Ext::from_f64(0.000020)).trunc(),
            4999
        );
    }
}
