//! Moderation: the algorithm attached to each vector, the per-interrupt and
//! per-poll calls, and the periodic (driver watchdog) calls. An algorithm
//! sees only a `Sample` (counter deltas since its previous call) and returns
//! register settings, which are written to the NIC here.
//!
//! Units: times [ns].

use super::{Ev, World};
use crate::error::Error;
use crate::host::profile::HostProfile;
use crate::moderation::dim::{Dim, DimProfile};
use crate::moderation::e1000_itr::{Driver as ItrDriver, E1000Itr};
use crate::moderation::freebsd_aim::{AimConfig, AimTarget, FreebsdAim};
use crate::moderation::igb::Igb;
use crate::moderation::ixl::{Ixl, IxlRings, IXL_ITR_4K, IXL_ITR_8K};
use crate::moderation::{
    E1000Legacy, Invocation, ModerationParams, Moderator, Sample, StaticModerator,
};
use crate::nic::chip::{self, ChipProfile};
use crate::scenario::config::{parse_rate, ModerationCfg, NicCfg};
use crate::units::ints_per_s_to_itr_256ns;
use crate::units::{Nanos, SimTime};

/// A moderation algorithm attached to one port.
pub enum AnyModerator {
    Static(StaticModerator),
    E1000Legacy(E1000Legacy),
    E1000Itr(E1000Itr),
    Igb(Igb),
    Ixl(Ixl),
    FreebsdAim(FreebsdAim),
    Dim(Dim),
    /// Supplied by the caller (e.g. a Python class through the bindings).
    External(Box<dyn Moderator>),
}

/// Builds externally supplied algorithms: (class, params, "host.nic", vector).
pub type ExternalFactory<'a> = dyn FnMut(
        &str,
        &std::collections::BTreeMap<String, serde_json::Value>,
        &str,
        u16,
    ) -> Result<Box<dyn Moderator>, String>
    + 'a;

impl AnyModerator {
    pub fn get(&self) -> &dyn Moderator {
        match self {
            AnyModerator::Static(m) => m,
            AnyModerator::E1000Legacy(m) => m,
            AnyModerator::E1000Itr(m) => m,
            AnyModerator::Igb(m) => m,
            AnyModerator::Ixl(m) => m,
            AnyModerator::FreebsdAim(m) => m,
            AnyModerator::Dim(m) => m,
            AnyModerator::External(m) => m.as_ref(),
        }
    }
    pub fn get_mut(&mut self) -> &mut dyn Moderator {
        match self {
            AnyModerator::Static(m) => m,
            AnyModerator::E1000Legacy(m) => m,
            AnyModerator::E1000Itr(m) => m,
            AnyModerator::Igb(m) => m,
            AnyModerator::Ixl(m) => m,
            AnyModerator::FreebsdAim(m) => m,
            AnyModerator::Dim(m) => m,
            AnyModerator::External(m) => m.as_mut(),
        }
    }
    pub fn initial(&self) -> ModerationParams {
        self.get().initial()
    }
    pub fn name(&self) -> &str {
        self.get().name()
    }
    /// The Linux e1000 watchdog also writes ICS = RXDMT0 every run.
    fn watchdog_ics_rxdmt0(&self) -> bool {
        matches!(
            self,
            AnyModerator::E1000Legacy(_) | AnyModerator::E1000Itr(_)
        )
    }
}

/// Build the moderation algorithm of one vector of a port: the NIC's config
/// (`hosts[hi].nics[ni]`), its chip, the rate of its link, its "host.nic"
/// name and vector count.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_moderator(
    n: &NicCfg,
    c: &ChipProfile,
    link_rate: &str,
    name: &str,
    nvec: usize,
    (hi, ni): (usize, usize),
    vector: u16,
    factory: &mut Option<&mut ExternalFactory>,
) -> Result<AnyModerator, Error> {
    let link_mbps = (parse_rate(link_rate).unwrap_or(1_000_000_000) / 1_000_000) as u32;
    Ok(match &n.moderation {
        ModerationCfg::E1000Itr {
            interrupt_throttle_rate,
            driver,
            rx_int_delay,
            rx_abs_int_delay,
            tx_int_delay,
            tx_abs_int_delay,
        } => {
            let d = if driver == "e1000e" {
                ItrDriver::E1000e
            } else {
                ItrDriver::E1000
            };
            AnyModerator::E1000Itr(
                E1000Itr::new(d, *interrupt_throttle_rate)
                    .with_timers(
                        *rx_int_delay,
                        *rx_abs_int_delay,
                        *tx_int_delay,
                        *tx_abs_int_delay,
                    )
                    .with_link_mbps(link_mbps),
            )
        }
        ModerationCfg::Igb {
            rx_usecs,
            multi_vector,
        } => AnyModerator::Igb(
            Igb::new(*rx_usecs, multi_vector.unwrap_or(nvec > 1)).with_link_mbps(link_mbps),
        ),
        ModerationCfg::FreebsdAim {
            enable_aim,
            max_interrupt_rate,
        } => {
            let target = if c.throttle == chip::ThrottleKind::Itr256ns {
                AimTarget::EmItr
            } else {
                AimTarget::IgbEitr
            };
            AnyModerator::FreebsdAim(FreebsdAim::with_config(
                target,
                AimConfig {
                    enable_aim: *enable_aim,
                    max_interrupt_rate: *max_interrupt_rate,
                    link_speed_mbps: link_mbps,
                    pba_kb: c.rx_fifo_bytes / 1024,
                    ..AimConfig::default()
                },
            ))
        }
        ModerationCfg::Dim {
            profile,
            start_index,
        } => {
            let p = match profile.as_str() {
                "rx-cqe" => DimProfile::RxCqe,
                "tx-eqe" => DimProfile::TxEqe,
                "tx-cqe" => DimProfile::TxCqe,
                _ => DimProfile::RxEqe,
            };
            AnyModerator::Dim(Dim::new(p, *start_index as u8))
        }
        ModerationCfg::Ixl {
            dynamic,
            rings,
            rx_itr,
            tx_itr,
        } => {
            let r = match rings.as_str() {
                "rx" => IxlRings::Rx,
                "tx" => IxlRings::Tx,
                _ => IxlRings::Both,
            };
            let m = Ixl::new(*dynamic, r)
                .with_itr(rx_itr.unwrap_or(IXL_ITR_8K), tx_itr.unwrap_or(IXL_ITR_4K));
            AnyModerator::Ixl(m)
        }
        ModerationCfg::Python { class, params } => {
            let field = format!("hosts[{hi}].nics[{ni}].moderation.class");
            let Some(f) = factory.as_deref_mut() else {
                return Err(Error::Config {
                field,
                message: format!(
                    "{class:?} is a Python moderator: run this scenario from Python (holdoff.run) so the class can be loaded"
                ),
            });
            };
            let m = f(class, params, name, vector)
                .map_err(|message| Error::Config { field, message })?;
            AnyModerator::External(m)
        }
        ModerationCfg::E1000_5x {
            interrupt_throttle_rate,
            rx_int_delay,
            rx_abs_int_delay,
            tx_int_delay,
            tx_abs_int_delay,
        } => AnyModerator::E1000Legacy(E1000Legacy::new(
            *interrupt_throttle_rate,
            *rx_int_delay,
            *rx_abs_int_delay,
            *tx_int_delay,
            *tx_abs_int_delay,
        )),
        ModerationCfg::Static {
            itr_per_s,
            itr_256ns,
            eitr_us,
            rdtr_1024ns,
            radv_1024ns,
            tidv_1024ns,
            tadv_1024ns,
        } => {
            let (itr, eitr) = match (itr_per_s, itr_256ns, eitr_us) {
                (Some(r), _, _) => match c.throttle {
                    chip::ThrottleKind::Eitr1us => {
                        (None, Some(1_000_000u32.checked_div(*r).unwrap_or(0)))
                    }
                    _ => (Some(ints_per_s_to_itr_256ns(*r)), None),
                },
                (None, Some(v), _) => (Some(*v), None),
                (None, None, Some(v)) => (None, Some(*v)),
                (None, None, None) => (Some(0), None),
            };
            AnyModerator::Static(StaticModerator::new(ModerationParams {
                itr_256ns: itr,
                eitr_us: eitr,
                rdtr_1024ns: Some(*rdtr_1024ns),
                radv_1024ns: Some(*radv_1024ns),
                tidv_1024ns: Some(*tidv_1024ns),
                tadv_1024ns: Some(*tadv_1024ns),
            }))
        }
    })
}

/// Counters at the previous moderation sample of a port.
#[derive(Clone, Copy, Default)]
pub(super) struct ModPrev {
    pub(super) rx_packets: u64,
    pub(super) rx_bytes: u64,
    pub(super) tx_packets: u64,
    pub(super) tx_bytes: u64,
    pub(super) interrupts: u64,
}

impl World {
    /// If the algorithm of (port, vector) failed, stop the run now.
    pub(super) fn check_failure(&mut self, now: SimTime, port: u16, vector: u16) -> bool {
        let m = self.moderators[port as usize][vector as usize].get();
        let Some(why) = m.failure() else {
            return false;
        };
        if self.aborted.is_none() {
            let msg = format!(
                "moderation algorithm {:?} on {} vector {} failed at {} ns: {}",
                m.name(),
                self.port_names[port as usize],
                vector,
                now.as_ns(),
                why
            );
            self.aborted = Some((now, msg));
            self.end = self.end.min(now);
        }
        true
    }

    /// A per-interrupt or per-poll moderation call for one vector: sample
    /// its queues' counters since the previous call, let the algorithm
    /// decide, write the register. Returns the CPU cost of the write.
    pub(super) fn moderate(
        &mut self,
        now: SimTime,
        port: u16,
        vector: u16,
        when: Invocation,
        prof: &HostProfile,
    ) -> Nanos {
        let m = &self.moderators[port as usize][vector as usize];
        if m.get().invocation() != when {
            return Nanos::ZERO;
        }
        let p = &self.ports[port as usize];
        let (rx_packets, rx_bytes, tx_packets, tx_bytes) = p.vector_counters(vector);
        let cur = ModPrev {
            rx_packets,
            rx_bytes,
            tx_packets,
            tx_bytes,
            interrupts: p.interrupts(vector),
        };
        let Some(params) = self.decide(now, port, vector, cur, true) else {
            return Nanos::ZERO;
        };
        self.ports[port as usize].apply_params(now, &params, Some(vector), &mut self.out);
        self.flush(port);
        prof.mmio_write_ns
    }

    /// One moderation call of the algorithm of (port, vector) on the
    /// counters `cur`: the sample is their change since its previous call.
    /// A decision is traced (with the vector when `per_vector`); returns the
    /// registers to write, or None (no change, or the algorithm failed).
    fn decide(
        &mut self,
        now: SimTime,
        port: u16,
        vector: u16,
        cur: ModPrev,
        per_vector: bool,
    ) -> Option<ModerationParams> {
        let (p, v) = (port as usize, vector as usize);
        let prev = std::mem::replace(&mut self.mod_prev[p][v], cur);
        let sample = Sample {
            now,
            rx_packets: cur.rx_packets - prev.rx_packets,
            rx_bytes: cur.rx_bytes - prev.rx_bytes,
            tx_packets: cur.tx_packets - prev.tx_packets,
            tx_bytes: cur.tx_bytes - prev.tx_bytes,
            interrupts: cur.interrupts - prev.interrupts,
        };
        let params = self.moderators[p][v].get_mut().on_sample(&sample);
        if self.check_failure(now, port, vector) {
            return None;
        }
        let params = params?;
        if let Some(row) = self.moderators[p][v].get().last_decision() {
            let mut row = row.clone();
            if per_vector {
                row.values.push(("vector", vector as i64));
            }
            self.traces[p].push(row);
        }
        Some(params)
    }

    /// The driver watchdog of a port, if it has one: the algorithm's own
    /// period, or the Linux e1000 2-s watchdog (which runs in every
    /// `InterruptThrottleRate` mode for its software interrupt).
    pub(super) fn watchdog_period(&self, port: usize) -> Option<(Nanos, bool)> {
        let m = &self.moderators[port][0];
        match m.get().invocation() {
            Invocation::Periodic { period, at_start } => Some((period, at_start)),
            _ if m.watchdog_ics_rxdmt0() => Some((crate::moderation::e1000_5x::WATCHDOG, true)),
            _ => None,
        }
    }

    /// A periodic moderation call: sample the port's counters, let the
    /// algorithm decide, write its registers.
    pub(super) fn watchdog(&mut self, now: SimTime, port: u16) {
        let (period, _) = self
            .watchdog_period(port as usize)
            .expect("scheduled only with a watchdog");
        let periodic = matches!(
            self.moderators[port as usize][0].get().invocation(),
            Invocation::Periodic { .. }
        );
        if periodic {
            self.watchdog_sample(now, port);
            if self.aborted.is_some() {
                return;
            }
        }
        if self.moderators[port as usize][0].watchdog_ics_rxdmt0() {
            // "Cause software interrupt to ensure rx ring is cleaned".
            self.ports[port as usize].raise(now, 0, crate::nic::ICR_RXDMT0, &mut self.out);
        }
        self.flush(port);
        let next = now + period;
        if next <= self.end {
            self.q.schedule(next, Ev::Watchdog { port });
        }
    }

    /// The periodic call's sample: the whole port's counters.
    fn watchdog_sample(&mut self, now: SimTime, port: u16) {
        let p = &self.ports[port as usize];
        let interrupts: u64 = (0..p.num_vectors() as u16).map(|v| p.interrupts(v)).sum();
        let cur = ModPrev {
            rx_packets: p.stats.rx_packets,
            rx_bytes: p.stats.rx_bytes,
            tx_packets: p.stats.tx_packets,
            tx_bytes: p.stats.tx_bytes,
            interrupts,
        };
        if let Some(params) = self.decide(now, port, 0, cur, false) {
            self.ports[port as usize].apply_params(now, &params, None, &mut self.out);
        }
    }
}
