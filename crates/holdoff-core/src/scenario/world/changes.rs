//! Changes during a run (`[[at]]`): applying a resolved change to the live
//! world at its instant, and the record of the changes applied.
//!
//! What each kind of change does (the rules and their driver sources are in
//! `scenario::config::at` and in each algorithm's `live_change`):
//! - moderation, `LiveChange::Retune`: the running algorithm of every vector
//!   of the port takes the new setting and keeps its state; a register is
//!   written now only if the driver's handler writes one (e1000-itr), else
//!   when the driver next writes (igb: the next interrupt; freebsd-aim: the
//!   next busy interrupt, and only if the computed word differs);
//! - moderation, `LiveChange::Reprogram` (`static`): a fresh algorithm from
//!   the new config, its initial registers written now;
//! - TCP: `delack_us` and `rto_min_ms` of every connection end on the host,
//!   used from their next use (a timer already armed keeps its deadline; the
//!   minimum RTO bounds the next RTO computed);
//! - generator: a new offered rate (the emission already scheduled keeps
//!   its time, the spacing after it is the new one); switched off, the
//!   generator skips its scheduled emission and stops; switched on, it sends
//!   at once (or at its start time, or in its next "on" window).
//!
//! A change whose kind of algorithm gains or loses a periodic (watchdog)
//! call gets its watchdog started or stopped here.
//!
//! Units: times [ns].

use super::{Ev, World};
use crate::moderation::LiveChange;
use crate::scenario::config::at::Edit;
use crate::scenario::config::moderation::build_ctx;
use crate::scenario::config::parse_rate;
use crate::units::SimTime;

/// A change applied during the run, for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedChange {
    /// When [ns].
    pub t_ns: u64,
    /// The path as written in `[[at]]`, and its value.
    pub path: String,
    pub value: serde_json::Value,
}

impl World {
    /// Rate of the link attached to the port or generator `name` [bits/s].
    fn link_rate_bps(&self, name: &str) -> u64 {
        self.scenario
            .links
            .iter()
            .find(|l| l.a == name || l.b == name)
            .and_then(|l| parse_rate(&l.rate))
            .expect("validated link")
    }

    /// Schedule every change at its instant (called first in `init`, so a
    /// change is the first event of its instant).
    pub(super) fn schedule_changes(&mut self) {
        for (i, st) in self.steps.iter().enumerate() {
            self.q
                .schedule(SimTime(st.t_ms * 1_000_000), Ev::Change { step: i as u16 });
        }
    }

    /// Apply change `step` now.
    pub(super) fn apply_change(&mut self, now: SimTime, step: u16) {
        let st = self.steps[step as usize].clone();
        for e in &st.edits {
            match e {
                Edit::Moderation {
                    host,
                    nic,
                    cfg,
                    how,
                } => self.change_moderation(now, *host, *nic, cfg, *how),
                Edit::Tcp {
                    host,
                    delack_us,
                    rto_min_ms,
                } => {
                    for c in &mut self.conns {
                        for side in 0..2 {
                            if c.host[side] as usize == *host {
                                let cfg = &mut c.ep[side].cfg;
                                cfg.delack = crate::units::Nanos(delack_us * 1000);
                                cfg.rto_min = crate::units::Nanos::from_ms(*rto_min_ms);
                            }
                        }
                    }
                }
                Edit::Generator { gen, cfg } => self.change_generator(now, *gen, cfg),
            }
        }
        self.changes.push(AppliedChange {
            t_ns: now.as_ns(),
            path: st.path,
            value: st.value,
        });
    }

    fn change_moderation(
        &mut self,
        now: SimTime,
        host: usize,
        nic: usize,
        cfg: &crate::scenario::config::ModerationCfg,
        how: LiveChange,
    ) {
        let Ok(algo) = cfg.algo() else {
            unreachable!("validated: Python moderators do not change during a run")
        };
        let p = self.hosts[host].ports[nic] as usize;
        let n = &self.scenario.hosts[host].nics[nic];
        let chip = crate::nic::chip::by_name(&n.chip).expect("validated chip");
        let name = &self.port_names[p];
        let link_bps = self.link_rate_bps(name);
        let nvec = self.ports[p].num_vectors();
        for v in 0..nvec {
            let write = match how {
                LiveChange::Retune => algo.retune(self.moderators[p][v].as_mut()),
                LiveChange::Reprogram => {
                    let hz = self.scenario.hosts[host].hz();
                    let delay = super::moderation::work_delay(self.hosts[host].profile);
                    let ctx = build_ctx(chip, link_bps, hz, delay, nvec as u16, v as u16);
                    let m = algo.build(&ctx);
                    let params = m.initial();
                    self.moderators[p][v] = m;
                    Some(params)
                }
            };
            if let Some(params) = write {
                self.ports[p].apply_params(now, &params, Some(v as u16), &mut self.out);
            }
        }
        self.flush(p as u16);
        if !self.watchdog_pending[p] {
            if let Some((period, _)) = self.watchdog_period(p) {
                let next = now + period;
                if next <= self.end {
                    self.watchdog_pending[p] = true;
                    self.q.schedule(next, Ev::Watchdog { port: p as u16 });
                }
            }
        }
    }

    fn change_generator(
        &mut self,
        now: SimTime,
        gen: usize,
        cfg: &crate::scenario::config::GeneratorCfg,
    ) {
        let name = &self.gen_names[gen];
        let line_bps = self.link_rate_bps(name);
        self.gens[gen].set_rate(cfg, line_bps);
        self.gen_on[gen] = cfg.enabled;
        if cfg.enabled && !self.gen_scheduled[gen] {
            if let Some(t) = self.gens[gen].resume(now) {
                if t <= self.end {
                    self.gen_scheduled[gen] = true;
                    self.q.schedule(t, Ev::GenEmit { gen: gen as u16 });
                }
            }
        }
    }
}
