//! Host: cores that run work in priority classes, CPU accounting per class,
//! interrupt lines, and the driver architectures (`driver`: their
//! configuration and the pure NAPI decisions; `drivers`: one file per
//! architecture, each owning its interrupt path).
//!
//! Models: each core runs one piece of work at a time. Work belongs to a
//! class: hard IRQ (highest), softirq/taskqueue, application (lowest). Work
//! is executed as *segments*: a segment applies its effects and keeps the
//! core busy for its cost (from the host's `HostProfile`). A hard IRQ
//! preempts a running softirq or application segment at once; the preempted
//! segment resumes with its remaining time when the IRQ returns. Pending
//! softirq work runs before an application resumes (as on irq_exit). CPU time
//! is charged to the class that ran; the rest is idle.
//!
//! Interrupt lines: MSI/MSI-X messages are edges (a message arriving while
//! the handler runs is replayed once after it); legacy INTx is a level line
//! that may be shared by several ports: it is re-delivered at EOI while any
//! port on it still asserts.
//!
//! Simplifies: the effects of a segment happen at its start, except that
//! per-packet delivery times inside a batch are exact and interrupt unmask
//! (IMS) happens at the segment's end; preemption delays the end of a
//! segment but not the timestamps already computed inside it. A busy-poll
//! spin (an application segment) is cut short when a packet lands on the
//! ring it polls (`Core::shorten`). No caches, no
//! frequency scaling; inter-core contention only through the driver locks
//! of the drivers that model them (`lock`).
//!
//! Units: times [ns].

pub mod dql;
pub mod driver;
pub mod drivers;
pub mod kernel;
pub mod lock;
pub mod profile;
pub mod variance;

use crate::units::{Nanos, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// Priority class of work on a core (lower value = higher priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    HardIrq = 0,
    Softirq = 1,
    App = 2,
    /// Accounting only: the time slices of CPU-bound processes
    /// (`hosts[].load.cpu_hogs`), which run at application priority.
    Hog = 3,
    /// Accounting only: a woken thread waiting out its wake-up latency
    /// (`variance`); not CPU time, charged to no class.
    Wait = 4,
}

/// A unit of work a core can run; the step state of multi-segment work
/// lives in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// An interrupt handler: `handler` indexes the handlers sharing the line,
    /// `iter` is the driver's loop counter.
    Irq { irq: u16, handler: u8, iter: u8 },
    /// One softirq (net_rx_action) step; `thread` = run by ksoftirqd at
    /// application priority after the softirq restart limit was hit.
    Softirq { thread: bool },
    /// An application step.
    App { app: u16 },
}

impl Work {
    /// The class CPU time is charged to: softirq work run by ksoftirqd still
    /// counts as softirq time (as Linux's irq-time accounting does).
    pub fn acct_class(&self) -> Class {
        match self {
            Work::Softirq { .. } | Work::App { app: SWI_NET } => Class::Softirq,
            Work::App { app: HOG } => Class::Hog,
            w => w.class(),
        }
    }

    /// The scheduling class.
    pub fn class(&self) -> Class {
        match self {
            Work::Irq { .. } => Class::HardIrq,
            Work::Softirq { thread: false } => Class::Softirq,
            Work::Softirq { thread: true } => Class::App,
            Work::App { .. } => Class::App,
        }
    }
}

/// Application-queue id of the per-core ksoftirqd thread.
pub const KSOFTIRQD: u16 = u16::MAX;

/// Application-queue id of FreeBSD's `swi:net` thread (netisr): it runs
/// below interrupt and taskqueue threads, like application work, and its
/// CPU time counts as softirq.
pub const SWI_NET: u16 = u16::MAX - 1;

/// Application id of a time slice of the core's CPU-bound processes
/// (`hosts[].load.cpu_hogs`).
pub const HOG: u16 = u16::MAX - 2;

/// A woken application preempts the CPU-bound processes unless it is ahead
/// of its fair share by more than this [ns]: Linux CFS
/// `sysctl_sched_wakeup_granularity` (1 ms base value).
pub const HOG_GRANULARITY_NS: u64 = 1_000_000;
/// Most credit a sleeping application keeps against the CPU-bound
/// processes [ns]: CFS places a woken task at `min_vruntime -
/// sysctl_sched_latency / 2` (6 ms / 2).
pub const HOG_SLEEPER_CREDIT_NS: u64 = 3_000_000;

/// Something to do when a segment ends (not at its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndAction {
    None,
    /// Write IMS for (port, vector): re-enable the interrupt.
    Unmask {
        port: u16,
        vector: u16,
    },
    /// End of an interrupt handler: EOI of this line.
    IrqDone {
        irq: u16,
    },
    /// Unmask this line in the I/O APIC (FreeBSD interrupt thread done).
    ApicUnmask {
        irq: u16,
    },
}

/// The segment a core is running.
#[derive(Clone, Copy, Debug)]
pub struct Running {
    pub class: Class,
    /// Class charged for the CPU time.
    pub acct: Class,
    pub end: SimTime,
    /// Work to continue with when this segment ends.
    pub next: Option<Work>,
    pub on_end: EndAction,
    /// The segment's identity: the generation it began with (kept when it
    /// is preempted and resumed).
    pub seg: u32,
}

/// A segment interrupted by higher-priority work, or a continuation waiting.
#[derive(Clone, Copy, Debug)]
struct Suspended {
    class: Class,
    acct: Class,
    remaining: Nanos,
    next: Option<Work>,
    on_end: EndAction,
    seg: u32,
}

/// One CPU core.
#[derive(Debug)]
pub struct Core {
    pub running: Option<Running>,
    /// Generation of the segment-end event (lazy cancellation).
    pub gen: u32,
    suspended: Vec<Suspended>,
    irq_queue: VecDeque<u16>,
    pub softirq_pending: bool,
    app_queue: VecDeque<u16>,
    /// CPU time per class [ns], indexed by `Class as usize` (the last,
    /// `Class::Hog`, is the CPU-bound processes' time slices).
    pub busy_ns: [u64; 4],
    /// CPU-bound processes at application priority on this core [count].
    pub hogs: u32,
    /// How far the CPU-bound processes' virtual time is held back (the
    /// sleeper-credit cap) [ns].
    hog_base: u64,
    last_acct: SimTime,
    /// The last `pick` took new work from a queue (not a continuation).
    pub fresh: bool,
    /// The last `pick` resumed a preempted segment: (its `seg`, the instant
    /// it was preempted). Taken by the caller.
    pub resumed: Option<u32>,
    /// The last `preempt` suspended this segment (its `seg`). Taken by the
    /// caller.
    pub preempted: Option<u32>,
}

/// What the core should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Idle,
    /// Start a new segment of this work.
    Start(Work),
    /// A resumed segment is running again until `Running.end`; nothing to compute.
    Resumed,
}

impl Default for Core {
    fn default() -> Self {
        Self::new()
    }
}

impl Core {
    pub fn new() -> Self {
        Core {
            running: None,
            gen: 0,
            suspended: Vec::new(),
            irq_queue: VecDeque::new(),
            softirq_pending: false,
            app_queue: VecDeque::new(),
            busy_ns: [0; 4],
            hogs: 0,
            hog_base: 0,
            last_acct: SimTime::ZERO,
            fresh: false,
            resumed: None,
            preempted: None,
        }
    }

    /// Charge the time since the last accounting to the running class.
    pub fn account(&mut self, now: SimTime) {
        if let Some(r) = &self.running {
            if r.acct != Class::Wait {
                self.busy_ns[r.acct as usize] += (now - self.last_acct).as_ns();
            }
        }
        self.last_acct = now;
    }

    pub fn queue_irq(&mut self, irq: u16) {
        self.irq_queue.push_back(irq);
    }

    /// Queue the per-core ksoftirqd thread (application class).
    pub fn queue_ksoftirqd(&mut self) {
        self.app_queue.push_back(KSOFTIRQD);
    }

    pub fn queue_app(&mut self, app: u16) {
        self.app_queue.push_back(app);
    }

    /// A segment of this core was preempted and has not finished.
    pub fn has_preempted(&self) -> bool {
        self.suspended.iter().any(|s| !s.remaining.is_zero())
    }

    /// Whether work of `class` waiting now should preempt the running segment.
    pub fn should_preempt(&self, class: Class) -> bool {
        matches!(&self.running, Some(r) if class == Class::HardIrq && r.class > Class::HardIrq)
    }

    /// Suspend the running segment (call `account` first).
    pub fn preempt(&mut self, now: SimTime) {
        if let Some(r) = self.running.take() {
            self.suspended.push(Suspended {
                class: r.class,
                acct: r.acct,
                remaining: r.end - now,
                next: r.next,
                on_end: r.on_end,
                seg: r.seg,
            });
            self.preempted = Some(r.seg);
            self.gen = self.gen.wrapping_add(1);
        }
    }

    /// The running segment ended: keep its continuation, return its end action.
    pub fn finish(&mut self) -> EndAction {
        let r = self
            .running
            .take()
            .expect("finish without a running segment");
        if let Some(w) = r.next {
            self.suspended.push(Suspended {
                class: r.class,
                acct: r.acct,
                remaining: Nanos::ZERO,
                next: Some(w),
                on_end: EndAction::None,
                seg: r.seg,
            });
        }
        r.on_end
    }

    /// Pick the highest-priority work. Ties go to suspended work (it was first).
    pub fn pick(&mut self, now: SimTime) -> Next {
        debug_assert!(self.running.is_none());
        self.fresh = false;
        let susp = self.suspended.last().map(|s| s.class);
        let best_new = if !self.irq_queue.is_empty() {
            Some(Class::HardIrq)
        } else if self.softirq_pending {
            Some(Class::Softirq)
        } else if !self.app_queue.is_empty() {
            Some(Class::App)
        } else {
            None
        };
        let resume = match (susp, best_new) {
            (Some(s), Some(n)) => s <= n,
            (Some(_), None) => true,
            _ => false,
        };
        if resume {
            let s = self.suspended.pop().expect("checked");
            if s.remaining.is_zero() && s.on_end == EndAction::None {
                return match s.next {
                    Some(w) => Next::Start(w),
                    None => self.pick(now),
                };
            }
            self.running = Some(Running {
                class: s.class,
                acct: s.acct,
                end: now + s.remaining,
                next: s.next,
                on_end: s.on_end,
                seg: s.seg,
            });
            self.resumed = Some(s.seg);
            return Next::Resumed;
        }
        self.fresh = true;
        match best_new {
            Some(Class::HardIrq) => {
                let irq = self.irq_queue.pop_front().expect("checked");
                Next::Start(Work::Irq {
                    irq,
                    handler: 0,
                    iter: 0,
                })
            }
            Some(Class::Softirq) => {
                self.softirq_pending = false;
                Next::Start(Work::Softirq { thread: false })
            }
            Some(Class::App) if !self.hog_owed(now).is_zero() => {
                // The queued application is ahead of its fair share: the
                // CPU-bound processes run their slice first (it stays queued).
                Next::Start(Work::App { app: HOG })
            }
            Some(Class::App) => match self.app_queue.pop_front().expect("checked") {
                KSOFTIRQD => Next::Start(Work::Softirq { thread: true }),
                app => Next::Start(Work::App { app }),
            },
            // `Class::Hog` and `Class::Wait` only account; no queue holds them.
            None | Some(Class::Hog) | Some(Class::Wait) => Next::Idle,
        }
    }

    /// CPU time the CPU-bound processes of this core are owed before an
    /// application may run at `now` (a fair-share rule after Linux CFS):
    /// with k processes, their virtual time is what neither interrupts,
    /// softirqs nor applications used (idle time included) less the
    /// sleeper-credit hold-back; the applications' is their CPU time x k.
    /// Zero unless the applications are ahead by more than k x the wake-up
    /// granularity. Call after `account(now)`.
    pub fn hog_owed(&mut self, now: SimTime) -> Nanos {
        if self.hogs == 0 {
            return Nanos::ZERO;
        }
        let k = self.hogs as u64;
        let others = self.busy_ns[Class::HardIrq as usize] + self.busy_ns[Class::Softirq as usize];
        let app = self.busy_ns[Class::App as usize] * k;
        let hog_vt = now
            .as_ns()
            .saturating_sub(others + self.busy_ns[Class::App as usize]);
        // A sleeping application keeps at most HOG_SLEEPER_CREDIT_NS.
        let lead = hog_vt.saturating_sub(self.hog_base).saturating_sub(app);
        if lead > k * HOG_SLEEPER_CREDIT_NS {
            self.hog_base += lead - k * HOG_SLEEPER_CREDIT_NS;
        }
        let owed = app.saturating_sub(hog_vt.saturating_sub(self.hog_base));
        if owed > k * HOG_GRANULARITY_NS {
            Nanos(owed)
        } else {
            Nanos::ZERO
        }
    }

    /// Begin a segment of `class` lasting `cost`; returns the generation its
    /// end event must carry.
    pub fn begin(
        &mut self,
        now: SimTime,
        work: Work,
        cost: Nanos,
        next: Option<Work>,
        on_end: EndAction,
    ) -> u32 {
        debug_assert!(self.running.is_none());
        self.running = Some(Running {
            class: work.class(),
            acct: work.acct_class(),
            end: now + cost,
            next,
            on_end,
            seg: self.gen.wrapping_add(1),
        });
        self.gen = self.gen.wrapping_add(1);
        self.gen
    }

    /// Hold the core for `work`'s wake-up latency `delay`: the work starts
    /// when this wait ends (as the continuation of a zero-cost segment);
    /// an interrupt preempts the wait like any thread segment. Returns the
    /// generation its end event must carry.
    pub fn begin_wait(&mut self, now: SimTime, work: Work, delay: Nanos) -> u32 {
        debug_assert!(self.running.is_none());
        self.running = Some(Running {
            class: work.class(),
            acct: Class::Wait,
            end: now + delay,
            next: Some(work),
            on_end: EndAction::None,
            seg: self.gen.wrapping_add(1),
        });
        self.gen = self.gen.wrapping_add(1);
        self.gen
    }

    pub fn is_idle(&self) -> bool {
        self.running.is_none()
    }

    /// The application segment whose continuation is `cont` (a busy-poll
    /// spin) should end at `at`: if it is running and would end later, it
    /// now ends at `at` (returns the generation its new end event must
    /// carry); if it is preempted, it keeps at most `within` of its
    /// remaining time.
    pub fn shorten(&mut self, cont: Work, at: SimTime, within: Nanos) -> Option<u32> {
        if let Some(r) = &mut self.running {
            if r.class == Class::App && r.next == Some(cont) {
                if at < r.end {
                    r.end = at;
                    self.gen = self.gen.wrapping_add(1);
                    return Some(self.gen);
                }
                return None;
            }
        }
        if let Some(s) = self
            .suspended
            .iter_mut()
            .rev()
            .find(|s| s.class == Class::App && s.next == Some(cont))
        {
            s.remaining = s.remaining.min(within);
        }
        None
    }

    /// The running segment is application work (not a hard IRQ or softirq).
    pub fn runs_app(&self) -> bool {
        matches!(&self.running, Some(r) if r.class == Class::App)
    }
}

/// Per-line interrupt bookkeeping on the host side.
#[derive(Clone, Debug, Default)]
pub struct IrqLine {
    /// (port index in the world, vector) of every handler on this line.
    pub handlers: Vec<(u16, u16)>,
    pub core: u16,
    /// Level-triggered (INTx) rather than message (MSI/MSI-X).
    pub level: bool,
    pub in_service: bool,
    pub queued: bool,
    /// Masked in the I/O APIC (FreeBSD interrupt-thread model).
    pub apic_masked: bool,
    pub replay: bool,
    /// Deliveries of this line to a core.
    pub delivered: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Start an application-0 segment of `cost_ns` at `t_ns`, nothing after it.
    fn begin_app0(c: &mut Core, t_ns: u64, cost_ns: u64) {
        c.begin(
            SimTime(t_ns),
            Work::App { app: 0 },
            Nanos(cost_ns),
            None,
            EndAction::None,
        );
    }

    #[test]
    fn hard_irq_preempts_app_and_app_resumes_with_remaining_time() {
        let mut c = Core::new();
        c.queue_app(0);
        assert_eq!(c.pick(SimTime(0)), Next::Start(Work::App { app: 0 }));
        begin_app0(&mut c, 0, 1000);
        c.account(SimTime(300));
        assert!(c.should_preempt(Class::HardIrq));
        c.preempt(SimTime(300));
        c.queue_irq(5);
        assert_eq!(
            c.pick(SimTime(300)),
            Next::Start(Work::Irq {
                irq: 5,
                handler: 0,
                iter: 0
            })
        );
        c.begin(
            SimTime(300),
            Work::Irq {
                irq: 5,
                handler: 0,
                iter: 0,
            },
            Nanos(200),
            None,
            EndAction::IrqDone { irq: 5 },
        );
        c.account(SimTime(500));
        assert_eq!(c.finish(), EndAction::IrqDone { irq: 5 });
        assert_eq!(c.pick(SimTime(500)), Next::Resumed);
        // 700 ns of the application segment were left when it was preempted.
        assert_eq!(c.running.unwrap().end, SimTime(1200));
        c.account(SimTime(1200));
        assert_eq!(c.busy_ns, [200, 0, 1000, 0]);
    }

    #[test]
    fn softirq_runs_before_a_preempted_app_resumes() {
        // irq_exit runs pending softirqs before returning to the task.
        let mut c = Core::new();
        c.queue_app(1);
        let _ = c.pick(SimTime(0));
        begin_app0(&mut c, 0, 1000);
        c.account(SimTime(100));
        c.preempt(SimTime(100));
        c.softirq_pending = true;
        assert_eq!(
            c.pick(SimTime(100)),
            Next::Start(Work::Softirq { thread: false })
        );
    }

    #[test]
    fn hard_irq_does_not_preempt_hard_irq() {
        let mut c = Core::new();
        c.begin(
            SimTime(0),
            Work::Irq {
                irq: 0,
                handler: 0,
                iter: 0,
            },
            Nanos(10),
            None,
            EndAction::None,
        );
        assert!(!c.should_preempt(Class::HardIrq));
    }

    #[test]
    fn cpu_bound_processes_are_owed_the_fair_share_less_the_sleeper_credit() {
        // Table: (hogs, app ns, irq ns, now ns) -> owed ns, on a fresh core.
        // hog virtual time = now - irq - app; owed = k x app - hog time
        // when above k x 1 ms.
        let ms = 1_000_000u64;
        for (hogs, app, irq, now, owed) in [
            (0, 5 * ms, 0, 6 * ms, 0),           // no hogs: nothing owed
            (1, 5 * ms, 0, 6 * ms, 4 * ms),      // 5 ms app vs 1 ms hog
            (1, 3 * ms, 0, 5 * ms, ms),          // 3 vs 2: within 1 ms
            (1, 3 * ms + 1, ms, 6 * ms, ms + 2), // irq time is nobody's
            (2, 5 * ms, 0, 9 * ms, 6 * ms),      // 2 x 5 vs 4
        ] {
            let mut c = Core::new();
            c.hogs = hogs;
            c.busy_ns[Class::App as usize] = app;
            c.busy_ns[Class::HardIrq as usize] = irq;
            let want = if owed > u64::from(hogs) * ms { owed } else { 0 };
            assert_eq!(
                c.hog_owed(SimTime(now)).as_ns(),
                want,
                "{hogs} {app} {irq} {now}"
            );
        }
        // A long sleep banks at most 3 ms: after 1 ms of work in 100 ms the
        // hog leads by 98 ms, held back to 3; 5 ms more work then puts the
        // application 2 ms ahead.
        let mut c = Core::new();
        c.hogs = 1;
        c.busy_ns[Class::App as usize] = ms;
        assert_eq!(c.hog_owed(SimTime(100 * ms)).as_ns(), 0);
        c.busy_ns[Class::App as usize] = 6 * ms;
        c.busy_ns[Class::Hog as usize] = 0;
        assert_eq!(c.hog_owed(SimTime(105 * ms)).as_ns(), 2 * ms);
    }
}
