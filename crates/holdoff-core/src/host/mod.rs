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
}

/// A segment interrupted by higher-priority work, or a continuation waiting.
#[derive(Clone, Copy, Debug)]
struct Suspended {
    class: Class,
    acct: Class,
    remaining: Nanos,
    next: Option<Work>,
    on_end: EndAction,
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
    /// CPU time per class [ns], indexed by `Class as usize`.
    pub busy_ns: [u64; 3],
    last_acct: SimTime,
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
            busy_ns: [0; 3],
            last_acct: SimTime::ZERO,
        }
    }

    /// Charge the time since the last accounting to the running class.
    pub fn account(&mut self, now: SimTime) {
        if let Some(r) = &self.running {
            self.busy_ns[r.acct as usize] += (now - self.last_acct).as_ns();
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
            });
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
            });
        }
        r.on_end
    }

    /// Pick the highest-priority work. Ties go to suspended work (it was first).
    pub fn pick(&mut self, now: SimTime) -> Next {
        debug_assert!(self.running.is_none());
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
            });
            return Next::Resumed;
        }
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
            Some(Class::App) => match self.app_queue.pop_front().expect("checked") {
                KSOFTIRQD => Next::Start(Work::Softirq { thread: true }),
                app => Next::Start(Work::App { app }),
            },
            None => Next::Idle,
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

    #[test]
    fn hard_irq_preempts_app_and_app_resumes_with_remaining_time() {
        let mut c = Core::new();
        c.queue_app(0);
        assert_eq!(c.pick(SimTime(0)), Next::Start(Work::App { app: 0 }));
        c.begin(
            SimTime(0),
            Work::App { app: 0 },
            Nanos(1000),
            None,
            EndAction::None,
        );
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
        assert_eq!(c.busy_ns, [200, 0, 1000]);
    }

    #[test]
    fn softirq_runs_before_a_preempted_app_resumes() {
        // irq_exit runs pending softirqs before returning to the task.
        let mut c = Core::new();
        c.queue_app(1);
        let _ = c.pick(SimTime(0));
        c.begin(
            SimTime(0),
            Work::App { app: 0 },
            Nanos(1000),
            None,
            EndAction::None,
        );
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
}
