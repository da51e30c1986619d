//! Host service-time variance: what makes a real host not a clock.
//!
//! Models three things, each drawn from one seeded stream per core
//! (`variance/<host>/<core>`, `engine::rng_stream`), so a scenario and seed
//! still give one output:
//!
//! - **Cost dispersion.** Each segment a core starts (an interrupt handler
//!   step, a poll or task pass, an application step) takes its profile cost
//!   times a factor drawn from a log-normal distribution of mean 1 and
//!   coefficient of variation `cost_cv_permille` / 1000 (cache and TLB state,
//!   branch history, bus contention on its MMIO accesses). The factor is
//!   capped at `1 + 10 cv` (a bounded tail keeps every run finite).
//! - **The periodic timer tick.** Each core takes `tick_hz` timer interrupts
//!   a second at a phase drawn once per core; each steals `tick_ns` from the
//!   segment it lands in (the segment ends that much later).
//! - **Thread wake-up latency.** A thread made runnable (an application, a
//!   FreeBSD interrupt thread or taskqueue, `swi:net`, ksoftirqd) starts
//!   `wake_min_ns` + an exponential delay of mean `wake_tail_mean_ns`
//!   (capped at `wake_max_ns`) after the core could run it, when the core
//!   was idle (a core busy until then switches at once: that CPU cost is
//!   the profile's `wakeup_ns` and `context_switch_ns`). The core stays idle
//!   meanwhile (not charged), and an interrupt arriving then runs at once.
//!
//! `Variance::NONE` draws nothing and changes nothing: every cost is the
//! profile's constant, as before this module existed.
//!
//! Simplifies: one factor per segment, not per packet (a segment of n
//! packets has the spread of its sum only if the packets are correlated,
//! which cache state makes them; ASSUMPTION); a tick that lands on an idle
//! core costs nothing and delays nothing; a segment resumed after a
//! preemption is not looked at again for ticks; the tick's time is charged
//! to the class of the segment it lands in; the wake-up distribution does
//! not depend on load or on the core's idle state.
//!
//! Units: times [ns]; dispersion [per mille]; tick rate [Hz].
//!
//! Sources: per profile in `host::profile` and docs/models/host-profiles.md,
//! "Service-time variance".

use crate::engine::{rng_stream, StreamRng};
use crate::units::{Nanos, SimTime};
use rand::RngExt;
use serde::Serialize;

/// Variance parameters of one host profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Variance {
    /// Coefficient of variation of a segment's cost [per mille]; 0: constant.
    pub cost_cv_permille: u32,
    /// Timer interrupts per second per core (HZ) [Hz]; 0: no tick.
    pub tick_hz: u32,
    /// CPU time one timer tick takes from the segment it lands in [ns].
    pub tick_ns: Nanos,
    /// Least thread wake-up latency [ns].
    pub wake_min_ns: Nanos,
    /// Mean of the exponential part of the wake-up latency [ns].
    pub wake_tail_mean_ns: Nanos,
    /// Longest wake-up latency [ns] (the published worst case).
    pub wake_max_ns: Nanos,
}

/// Largest accepted `cost_cv_permille` (a CV of 2).
pub const MAX_COST_CV_PERMILLE: u32 = 2000;
/// Largest accepted `tick_hz`.
pub const MAX_TICK_HZ: u32 = 10_000;
/// Largest accepted time parameter [ns] (10 ms).
pub const MAX_VARIANCE_NS: u64 = 10_000_000;

/// The parameter names of a `variance` table, in field order.
pub const VARIANCE_KEYS: [&str; 6] = [
    "cost_cv_permille",
    "tick_hz",
    "tick_ns",
    "wake_min_ns",
    "wake_tail_mean_ns",
    "wake_max_ns",
];

impl Variance {
    /// No variance: every cost constant, no tick, no wake-up latency.
    pub const NONE: Variance = Variance {
        cost_cv_permille: 0,
        tick_hz: 0,
        tick_ns: Nanos(0),
        wake_min_ns: Nanos(0),
        wake_tail_mean_ns: Nanos(0),
        wake_max_ns: Nanos(0),
    };

    /// Nothing varies.
    pub fn is_none(&self) -> bool {
        self.cost_cv_permille == 0
            && (self.tick_hz == 0 || self.tick_ns.is_zero())
            && self.wake_max_ns.is_zero()
    }

    /// Set parameter `key` to `v`; the error names the key and the range.
    pub fn set(&mut self, key: &str, v: u64) -> Result<(), String> {
        let (max, unit) = match key {
            "cost_cv_permille" => (MAX_COST_CV_PERMILLE as u64, "per mille"),
            "tick_hz" => (MAX_TICK_HZ as u64, "Hz"),
            _ => (MAX_VARIANCE_NS, "ns"),
        };
        if v > max {
            return Err(format!(
                "`variance.{key}` = {v} is out of range; allowed: 0 to {max} [{unit}]"
            ));
        }
        match key {
            "cost_cv_permille" => self.cost_cv_permille = v as u32,
            "tick_hz" => self.tick_hz = v as u32,
            "tick_ns" => self.tick_ns = Nanos(v),
            "wake_min_ns" => self.wake_min_ns = Nanos(v),
            "wake_tail_mean_ns" => self.wake_tail_mean_ns = Nanos(v),
            "wake_max_ns" => self.wake_max_ns = Nanos(v),
            _ => {
                return Err(format!(
                    "`variance.{key}` is not a variance parameter; allowed: {}",
                    VARIANCE_KEYS.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// The parameters are consistent (a tick shorter than its period, the
    /// wake-up bounds in order); the error names the field and the fix.
    pub fn check(&self) -> Result<(), String> {
        if self.tick_hz > 0 && self.tick_ns.as_ns() >= 1_000_000_000 / self.tick_hz as u64 {
            return Err(format!(
                "`variance.tick_ns` = {} is not shorter than the tick period of {} Hz",
                self.tick_ns.as_ns(),
                self.tick_hz
            ));
        }
        if self.wake_max_ns < self.wake_min_ns {
            return Err(format!(
                "`variance.wake_max_ns` = {} is below `wake_min_ns` = {}; give max >= min",
                self.wake_max_ns.as_ns(),
                self.wake_min_ns.as_ns()
            ));
        }
        Ok(())
    }
}

// The presets' variance. Sources for HZ are the kernels' own defaults; no
// published per-packet cost spread or interrupt-latency distribution was
// found for these machine classes, so the spreads and wake-up latencies are
// ASSUMPTIONs, each with its reasoning (docs/models/host-profiles.md,
// "Service-time variance"). One table per machine, used by every experiment
// on it.

/// 2004 NetBurst Xeon, Linux 2.6.6 (`p4-xeon-2004`).
pub const P4_XEON_2004: Variance = Variance {
    // ASSUMPTION: 15 % spread of a segment's cost: cache and TLB state of a
    // 512 KB-L2 NetBurst core whose working set (rings, skbs, socket) is
    // refetched after other work; uncached MMIO reads that wait behind DMA
    // bursts on PCI-X (8254x SDM section 13.3).
    cost_cv_permille: 150,
    // Linux 2.6 i386 include/asm-i386/param.h: HZ 1000 (periodic tick, no
    // dynticks before 2.6.21).
    tick_hz: 1000,
    // ASSUMPTION: 3 us per tick (timer interrupt entry/exit as
    // irq_entry_exit_ns 1.5 us, do_timer, update_process_times,
    // scheduler_tick).
    tick_ns: Nanos(3_000),
    // ASSUMPTION: a stock non-preemptible 2.6 kernel: at least 3 us from
    // wake-up to running (C-state exit, schedule), an exponential tail of
    // mean 4 us, worst case 100 us (a non-preemptible kernel section).
    wake_min_ns: Nanos(3_000),
    wake_tail_mean_ns: Nanos(4_000),
    wake_max_ns: Nanos(100_000),
};

/// 2006 dual-core Opteron, FreeBSD 6 (`opteron-2006`).
pub const OPTERON_2006: Variance = Variance {
    // ASSUMPTION: as p4-xeon-2004 (same class of cache and bus effects).
    cost_cv_permille: 150,
    // FreeBSD sys/kern/subr_param.c: HZ 1000 on i386/amd64 since 5.3.
    tick_hz: 1000,
    // ASSUMPTION: 2 us per tick (hardclock and statclock work on a 2.2 GHz K8).
    tick_ns: Nanos(2_000),
    // ASSUMPTION: FreeBSD 6 sched_4bsd/ULE wake-up of an interrupt thread
    // or taskqueue (sched_add, then the switch): at least 2 us, tail mean
    // 3 us, worst case 80 us.
    wake_min_ns: Nanos(2_000),
    wake_tail_mean_ns: Nanos(3_000),
    wake_max_ns: Nanos(80_000),
};

/// PC Engines APU2 (AMD GX-412TC 1 GHz), OpenBSD (`apu2`). Not yet the
/// preset's: its fitted costs are refitted when it is switched on.
pub const APU2: Variance = Variance {
    // ASSUMPTION: as the other presets.
    cost_cv_permille: 150,
    // OpenBSD sys/conf/param.c: HZ 100.
    tick_hz: 100,
    // ASSUMPTION: 5 us per tick at 1 GHz (hardclock, statclock,
    // scheduler and timeout processing).
    tick_ns: Nanos(5_000),
    // ASSUMPTION: a 1 GHz low-power core with deep C-states: at least 5 us,
    // tail mean 5 us, worst case 150 us.
    wake_min_ns: Nanos(5_000),
    wake_tail_mean_ns: Nanos(5_000),
    wake_max_ns: Nanos(150_000),
};

/// Modern Xeon server, Linux 6.x (`xeon-modern`).
pub const XEON_MODERN: Variance = Variance {
    // ASSUMPTION: 10 %: large caches, but the same cold-start effects.
    cost_cv_permille: 100,
    // ASSUMPTION: CONFIG_HZ 1000 with NO_HZ_IDLE (a busy core takes the
    // tick; an idle one does not, as the model has it); distributions ship
    // 250 to 1000.
    tick_hz: 1000,
    // ASSUMPTION: 1 us per tick.
    tick_ns: Nanos(1_000),
    // ASSUMPTION: at least 1 us (schedule on an awake core; deep C-state
    // exits are longer), tail mean 2 us, worst case 50 us.
    wake_min_ns: Nanos(1_000),
    wake_tail_mean_ns: Nanos(2_000),
    wake_max_ns: Nanos(50_000),
};

/// The variance state of one core: its stream, its tick phase and the
/// thread it ran last.
pub struct CoreVariance {
    v: Variance,
    rng: StreamRng,
    /// First tick instant [ns], in [0, period).
    tick_phase_ns: u64,
    /// The end of the last segment started on this core.
    last: Option<SimTime>,
}

impl CoreVariance {
    /// The state of core `core` of host `host`, or `None` when nothing
    /// varies (then no stream is drawn from).
    pub fn new(v: Variance, seed: u64, host: &str, core: u32) -> Option<CoreVariance> {
        if v.is_none() {
            return None;
        }
        let mut rng = rng_stream(seed, &format!("variance/{host}/{core}"));
        let tick_phase_ns = match v.tick_hz {
            0 => 0,
            hz => rng.random_range(0..1_000_000_000 / hz as u64),
        };
        Some(CoreVariance {
            v,
            rng,
            tick_phase_ns,
            last: None,
        })
    }

    /// The duration of a segment of profile cost `cost` starting at
    /// `start`: the cost times its dispersion factor, then stretched by
    /// every timer tick that lands in it.
    pub fn segment(&mut self, start: SimTime, cost: Nanos) -> Nanos {
        let mut d = cost;
        if self.v.cost_cv_permille > 0 && !cost.is_zero() {
            let f = self.factor();
            d = Nanos(((cost.as_ns() as f64) * f).round().max(1.0) as u64);
        }
        if self.v.tick_hz > 0 && !self.v.tick_ns.is_zero() {
            d = self.stretch(start, d);
        }
        self.last = Some(start + d);
        d
    }

    /// The wake-up latency of thread `key` started at `now` on this core:
    /// zero if the core was busy until `now`, else a fresh draw.
    pub fn wake_delay(&mut self, now: SimTime) -> Nanos {
        // A core busy until now switches to the thread at once (its CPU
        // cost is the profile's wakeup_ns and context_switch_ns); only an
        // idle core pays the latency.
        let busy = matches!(self.last, Some(end) if end >= now);
        if self.v.wake_max_ns.is_zero() || busy {
            return Nanos::ZERO;
        }
        let min = self.v.wake_min_ns.as_ns();
        let tail = self.v.wake_tail_mean_ns.as_ns() as f64;
        let u: f64 = self.rng.random();
        let x = min as f64 - tail * (1.0 - u).ln();
        Nanos((x.round() as u64).min(self.v.wake_max_ns.as_ns()))
    }

    /// A log-normal factor of mean 1 and CV `cost_cv_permille` / 1000,
    /// capped at 1 + 10 CV.
    fn factor(&mut self) -> f64 {
        let cv = self.v.cost_cv_permille as f64 / 1000.0;
        let s2 = (1.0 + cv * cv).ln();
        let s = s2.sqrt();
        // Box-Muller: one standard normal from two uniforms in (0, 1].
        let u1: f64 = 1.0 - self.rng.random::<f64>();
        let u2: f64 = self.rng.random();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        (s * z - s2 / 2.0).exp().min(1.0 + 10.0 * cv)
    }

    /// `d` stretched by `tick_ns` for every tick in [start, start + d),
    /// counting the ticks that land in the stretch too.
    fn stretch(&self, start: SimTime, d: Nanos) -> Nanos {
        let period = 1_000_000_000 / self.v.tick_hz as u64;
        let phase = self.tick_phase_ns;
        // Ticks at phase + k * period (k >= 0) before instant x.
        let before = |x: u64| {
            if x <= phase {
                0
            } else {
                (x - phase - 1) / period + 1
            }
        };
        let s = start.as_ns();
        let mut counted = 0;
        let mut d = d.as_ns();
        loop {
            let n = before(s + d) - before(s);
            if n == counted {
                return Nanos(d);
            }
            d += (n - counted) * self.v.tick_ns.as_ns();
            counted = n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOME: Variance = Variance {
        cost_cv_permille: 300,
        tick_hz: 1000,
        tick_ns: Nanos(5_000),
        wake_min_ns: Nanos(2_000),
        wake_tail_mean_ns: Nanos(3_000),
        wake_max_ns: Nanos(40_000),
    };

    #[test]
    fn none_draws_nothing() {
        assert!(Variance::NONE.is_none());
        assert!(CoreVariance::new(Variance::NONE, 1, "h", 0).is_none());
    }

    #[test]
    fn the_cost_factor_has_mean_one_and_the_stated_spread() {
        // Closed form: a log-normal with sigma^2 = ln(1 + cv^2) and
        // mu = -sigma^2/2 has mean 1 and CV cv (the cap at 1 + 10 cv cuts
        // off less than 1e-9 of the mass at cv = 0.3).
        let v = Variance {
            tick_hz: 0,
            wake_max_ns: Nanos(0),
            wake_min_ns: Nanos(0),
            ..SOME
        };
        let mut c = CoreVariance::new(v, 7, "h", 0).unwrap();
        let n = 200_000;
        let xs: Vec<f64> = (0..n)
            .map(|i| c.segment(SimTime(i * 10_000), Nanos(10_000)).as_ns() as f64 / 1e4)
            .collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard error of the mean: 0.3 / sqrt(2e5) = 0.00067.
        assert!((mean - 1.0).abs() < 0.003, "mean {mean}");
        assert!((var.sqrt() - 0.3).abs() < 0.01, "sd {}", var.sqrt());
    }

    #[test]
    fn a_tick_stretches_the_segment_it_lands_in() {
        let v = Variance {
            cost_cv_permille: 0,
            wake_max_ns: Nanos(0),
            wake_min_ns: Nanos(0),
            ..SOME
        };
        let mut c = CoreVariance::new(v, 3, "h", 0).unwrap();
        let phase = c.tick_phase_ns;
        assert!(phase < 1_000_000);
        // A segment ending before the tick is untouched.
        if phase > 10 {
            assert_eq!(c.segment(SimTime(0), Nanos(phase - 1)), Nanos(phase - 1));
        }
        // One that covers the tick takes its 5 us more.
        let s = SimTime(phase + 1_000_000 - 100);
        assert_eq!(c.segment(s, Nanos(200)), Nanos(5_200));
        // One that is stretched onto the next tick takes that one too.
        // (996 us of work from 100 ns before a tick ends 900 ns before the
        // next one; its first stretch carries it over that one.)
        let s = SimTime(phase + 2_000_000 - 100);
        assert_eq!(c.segment(s, Nanos(990_000)), Nanos(995_000));
        assert_eq!(c.segment(s, Nanos(996_000)), Nanos(1_006_000));
        // 3 ms of work starting on a tick: that tick and the two inside
        // it, and the fourth, which the 15 us stretch reaches.
        let s = SimTime(phase + 3_000_000);
        assert_eq!(c.segment(s, Nanos(3_000_000)), Nanos(3_020_000));
    }

    #[test]
    fn wake_delays_follow_the_stated_distribution_and_skip_a_continuing_thread() {
        let v = Variance {
            cost_cv_permille: 0,
            tick_hz: 0,
            ..SOME
        };
        let mut c = CoreVariance::new(v, 5, "h", 1).unwrap();
        let n = 100_000;
        let mut sum = 0.0;
        for i in 0..n {
            let d = c.wake_delay(SimTime(i * 1_000_000)).as_ns();
            assert!((2_000..=40_000).contains(&d), "{d}");
            sum += d as f64;
        }
        // min + exponential tail (the cap at 40 us removes e^-12.7 of it).
        let mean = sum / n as f64;
        assert!((mean - 5_000.0).abs() < 60.0, "mean {mean}");
        // A core whose last segment ends now switches without a wait; one
        // idle since then waits.
        let end = SimTime(500_000_000_000);
        let d = c.segment(SimTime(499_999_999_900), Nanos(100));
        assert_eq!(d, Nanos(100));
        assert_eq!(c.wake_delay(end), Nanos::ZERO);
        assert!(c.wake_delay(end + Nanos(1)) >= Nanos(2_000));
    }

    #[test]
    fn bad_parameters_name_the_key_and_the_fix() {
        let mut v = Variance::NONE;
        assert!(v
            .set("tick_hz", 20_000)
            .unwrap_err()
            .contains("variance.tick_hz"));
        assert!(v.set("tick_hzz", 1).unwrap_err().contains("allowed"));
        v.set("tick_hz", 1000).unwrap();
        v.set("tick_ns", 1_000_000).unwrap();
        assert!(v.check().unwrap_err().contains("tick period"));
        let mut v = Variance::NONE;
        v.set("wake_min_ns", 10).unwrap();
        assert!(v.check().unwrap_err().contains("wake_max_ns"));
    }
}
