//! Linux generic DIM ("dynamic interrupt moderation", `net_dim`): a hill
//! climber over five `{usec, pkts}` coalescing profiles, run from the NAPI
//! poll routine.
//!
//! Models (Linux `include/linux/dim.h`,
//! `lib/dim/net_dim.c`, `lib/dim/dim.c`): the driver keeps running counters
//! (events u16, packets u32, bytes u32, all wrapping) and calls `net_dim`
//! with them at the end of every poll. A measurement starts at one call and
//! ends at the first call at least `DIM_NEVENTS` = 64 events later; its
//! statistics are rates over the elapsed time (`dim_calc_stats`, integer,
//! rounding up):
//!
//! ```text
//! delta_us = (t_end - t_start) in us, truncated to u32; 0 -> no decision
//! ppms = ceil(npkts  * 1000 / delta_us)        packets per ms
//! bpms = ceil(nbytes * 1000 / delta_us)        bytes per ms
//! epms = ceil(64     * 1000 / delta_us)        events per ms (always 64 events)
//! ```
//!
//! `compare(curr, prev)` prefers more bytes/ms, then more packets/ms, then
//! fewer events/ms; a difference counts only if
//! `100 * |curr - prev| / prev > 10` (integer, "more than 10 %"). The tuner
//! walks the profile index (right = more moderation) with the states
//! parking-on-top, parking-tired, going-right, going-left; each step
//! increments `tired`, and at `tired == 10` (2 x 5 profiles) it parks for as
//! many measurements as it is tired. See `DimCore::decision`,
//! `DimCore::step` and `lib/dim/net_dim.c` for the rules. A changed index moves the
//! measurement to "apply new profile"; the driver's work item programs the
//! profile and restarts the measurement.
//!
//! Adaptation to this simulator:
//! - Invoked per NAPI poll (`Invocation::PerPoll`). `Sample.interrupts` (the
//!   vector's interrupts since the previous call) advances the event
//!   counter; the traffic counters are RX packets/bytes for the RX profile
//!   sets and TX packets/bytes for the TX sets.
//! - Output (`DimOut`): on the EITR chips `eitr_us` = the profile's `usec`
//!   (a holdoff period, which is what EITR is); the profile's `pkts`
//!   (completions coalesced before an interrupt) has no e1000/igb
//!   equivalent and is not applied (it appears in the trace). On the
//!   completion-queue chips (kinds `mlx5`, `ena`) the profile is the CQ's
//!   period and, where the chip holds one, its count.
//! - The apply path is the driver's work item: a changed index leaves the
//!   measurement in "apply new profile" and the driver queues its work
//!   (`schedule_work(&dim->work)` from the poll; mlx5
//!   `mlx5e_rx_dim_work`/`mlx5e_tx_dim_work`, ENA `ena_dim_work`). The work
//!   runs `BuildCtx::work_delay` later (the host's worker wake-up and
//!   context switch), writes the profile and sets "start measure"
//!   (`dim->state = DIM_START_MEASURE`); `net_dim` calls in between return
//!   at once (their samples are ignored), and the first call after the
//!   work starts the next measurement. Both the decision and the work are
//!   rows of the moderation trace (`work` = 1 queued, 2 ran).
//! - Current kernels: `IS_SIGNIFICANT_DIFF` is false for a zero reference,
//!   and a zero `delta_us` ends the call without a decision (older kernels
//!   used uninitialised statistics there).
//!
//! Integer widths follow the C: the counters wrap in 16/32 bits and gaps
//! are taken modulo 2^bits (`BIT_GAP`); `npkts * USEC_PER_MSEC` is computed
//! in 64 bits (`USEC_PER_MSEC` is a `long`) and stored in an `int`.
//!
//! Units: time [ns in, us inside], rates [per ms], `usec` [1 us].

use crate::units::{Nanos, SimTime};

use super::{
    check_range, BuildCtx, FieldError, Invocation, ModerationParams, Moderator, ModeratorConfig,
    PortCaps, Sample, Throttle, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `NET_DIM_PARAMS_NUM_PROFILES`.
pub const NUM_PROFILES: usize = 5;
/// `DIM_NEVENTS` (`NET_DIM_NEVENTS`): events per measurement.
pub const DIM_NEVENTS: u16 = 64;
/// `NET_DIM_DEF_PROFILE_EQE`.
pub const DEF_PROFILE_EQE: u8 = 1;
/// `NET_DIM_DEF_PROFILE_CQE`.
pub const DEF_PROFILE_CQE: u8 = 1;
/// `tired` limit: `NUM_PROFILES * 2`.
pub const TIRED_LIMIT: u8 = (NUM_PROFILES * 2) as u8;

/// One coalescing profile (`struct dim_cq_moder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqModer {
    /// Maximum delay before an interrupt [us].
    pub usec: u16,
    /// Maximum completions coalesced into one interrupt.
    pub pkts: u16,
}

const fn m(usec: u16, pkts: u16) -> CqModer {
    CqModer { usec, pkts }
}

/// RX, period restarting at each event (`NET_DIM_RX_EQE_PROFILES`).
pub const RX_EQE: [CqModer; NUM_PROFILES] =
    [m(1, 256), m(8, 256), m(64, 256), m(128, 256), m(256, 256)];
/// RX, period restarting at each completion (`NET_DIM_RX_CQE_PROFILES`).
pub const RX_CQE: [CqModer; NUM_PROFILES] = [m(2, 256), m(8, 128), m(16, 64), m(32, 64), m(64, 64)];
/// TX, EQE-based (`NET_DIM_TX_EQE_PROFILES`).
pub const TX_EQE: [CqModer; NUM_PROFILES] =
    [m(1, 128), m(8, 128), m(32, 128), m(64, 128), m(128, 128)];
/// TX, CQE-based (`NET_DIM_TX_CQE_PROFILES`).
pub const TX_CQE: [CqModer; NUM_PROFILES] = [m(5, 128), m(8, 64), m(16, 32), m(32, 32), m(64, 32)];

/// The profile set (direction and CQ period mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DimProfile {
    #[default]
    RxEqe,
    RxCqe,
    TxEqe,
    TxCqe,
}

impl DimProfile {
    pub const fn table(self) -> &'static [CqModer; NUM_PROFILES] {
        match self {
            DimProfile::RxEqe => &RX_EQE,
            DimProfile::RxCqe => &RX_CQE,
            DimProfile::TxEqe => &TX_EQE,
            DimProfile::TxCqe => &TX_CQE,
        }
    }
    /// The kernel's default start index for this CQ period mode.
    pub const fn default_index(self) -> u8 {
        match self {
            DimProfile::RxEqe | DimProfile::TxEqe => DEF_PROFILE_EQE,
            DimProfile::RxCqe | DimProfile::TxCqe => DEF_PROFILE_CQE,
        }
    }
    const fn is_rx(self) -> bool {
        matches!(self, DimProfile::RxEqe | DimProfile::RxCqe)
    }
}

/// Measurement state (`DIM_START_MEASURE` ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasureState {
    StartMeasure = 0,
    MeasureInProgress = 1,
    ApplyNewProfile = 2,
}

/// Tuner state (`DIM_PARKING_ON_TOP` ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneState {
    ParkingOnTop = 0,
    ParkingTired = 1,
    GoingRight = 2,
    GoingLeft = 3,
}

/// Result of `compare` (`DIM_STATS_WORSE` ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsCmp {
    Worse = 0,
    Same = 1,
    Better = 2,
}

/// Result of `step` (`DIM_STEPPED` ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepResult {
    Stepped = 0,
    TooTired = 1,
    OnEdge = 2,
}

/// `struct dim_stats` (the RDMA-only fields omitted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DimStats {
    /// Packets per ms.
    pub ppms: i32,
    /// Bytes per ms.
    pub bpms: i32,
    /// Events per ms.
    pub epms: i32,
}

/// `struct dim_sample`: a snapshot of the driver's running counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DimSample {
    pub time_ns: u64,
    pub pkt_ctr: u32,
    pub byte_ctr: u32,
    pub event_ctr: u16,
}

/// `BIT_GAP(16, end, start)`: wrap-safe difference of u16 counters.
pub const fn bit_gap_u16(end: u16, start: u16) -> u16 {
    end.wrapping_sub(start)
}

/// `BIT_GAP(32, end, start)`: wrap-safe difference of u32 counters.
pub const fn bit_gap_u32(end: u32, start: u32) -> u32 {
    end.wrapping_sub(start)
}

/// `IS_SIGNIFICANT_DIFF(val, ref)`: `ref != 0 && 100 * |val - ref| / ref >
/// 10`, with the C types (int difference, `unsigned long` product/quotient).
pub fn is_significant_diff(val: i32, reference: i32) -> bool {
    if reference == 0 {
        return false;
    }
    let diff = val.wrapping_sub(reference).wrapping_abs() as i64 as u64;
    100u64.wrapping_mul(diff) / (reference as i64 as u64) > 10
}

/// `DIV_ROUND_UP(n * USEC_PER_MSEC, delta_us)` stored in an `int`.
fn per_ms(n: u32, delta_us: u32) -> i32 {
    let num = n as i64 * 1000;
    ((num + delta_us as i64 - 1) / delta_us as i64) as i32
}

/// `dim_calc_stats(start, end)`; `None` when less than 1 us elapsed.
pub fn calc_stats(start: &DimSample, end: &DimSample) -> Option<DimStats> {
    // ktime_us_delta (s64 ns / 1000) assigned to a u32.
    let delta_us = ((end.time_ns as i64).wrapping_sub(start.time_ns as i64) / 1000) as u32;
    if delta_us == 0 {
        return None;
    }
    let npkts = bit_gap_u32(end.pkt_ctr, start.pkt_ctr);
    let nbytes = bit_gap_u32(end.byte_ctr, start.byte_ctr);
    Some(DimStats {
        ppms: per_ms(npkts, delta_us),
        bpms: per_ms(nbytes, delta_us),
        epms: per_ms(DIM_NEVENTS as u32, delta_us),
    })
}

/// `net_dim_stats_compare(curr, prev)` (`lib/dim/net_dim.c`).
pub fn stats_compare(curr: &DimStats, prev: &DimStats) -> StatsCmp {
    use StatsCmp::*;
    let better_if = |b: bool| if b { Better } else { Worse };
    if prev.bpms == 0 {
        return if curr.bpms != 0 { Better } else { Same };
    }
    if is_significant_diff(curr.bpms, prev.bpms) {
        return better_if(curr.bpms > prev.bpms);
    }
    if prev.ppms == 0 {
        return if curr.ppms != 0 { Better } else { Same };
    }
    if is_significant_diff(curr.ppms, prev.ppms) {
        return better_if(curr.ppms > prev.ppms);
    }
    if prev.epms == 0 {
        return Same;
    }
    if is_significant_diff(curr.epms, prev.epms) {
        return better_if(curr.epms < prev.epms);
    }
    Same
}

/// `struct dim`: the measurement and tuner state. A zeroed one starts in
/// START_MEASURE / PARKING_ON_TOP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimCore {
    pub state: MeasureState,
    pub prev_stats: DimStats,
    pub start_sample: DimSample,
    pub profile_ix: u8,
    pub tune_state: TuneState,
    pub steps_right: u8,
    pub steps_left: u8,
    pub tired: u8,
}

impl DimCore {
    pub fn new(profile_ix: u8) -> Self {
        DimCore {
            state: MeasureState::StartMeasure,
            prev_stats: DimStats::default(),
            start_sample: DimSample::default(),
            profile_ix,
            tune_state: TuneState::ParkingOnTop,
            steps_right: 0,
            steps_left: 0,
            tired: 0,
        }
    }

    /// `net_dim_step`.
    pub fn step(&mut self) -> StepResult {
        if self.tired == TIRED_LIMIT {
            return StepResult::TooTired;
        }
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                if self.profile_ix as usize == NUM_PROFILES - 1 {
                    return StepResult::OnEdge;
                }
                self.profile_ix += 1;
                self.steps_right = self.steps_right.wrapping_add(1);
            }
            TuneState::GoingLeft => {
                if self.profile_ix == 0 {
                    return StepResult::OnEdge;
                }
                self.profile_ix -= 1;
                self.steps_left = self.steps_left.wrapping_add(1);
            }
        }
        self.tired = self.tired.wrapping_add(1);
        StepResult::Stepped
    }

    /// `net_dim_exit_parking`: head left unless already at index 0, and step.
    pub fn exit_parking(&mut self) {
        self.tune_state = if self.profile_ix != 0 {
            TuneState::GoingLeft
        } else {
            TuneState::GoingRight
        };
        self.step();
    }

    /// `dim_on_top`.
    pub fn on_top(&self) -> bool {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => true,
            TuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            TuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    /// `dim_turn`.
    pub fn turn(&mut self) {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                self.tune_state = TuneState::GoingLeft;
                self.steps_left = 0;
            }
            TuneState::GoingLeft => {
                self.tune_state = TuneState::GoingRight;
                self.steps_right = 0;
            }
        }
    }

    /// `dim_park_on_top`.
    pub fn park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune_state = TuneState::ParkingOnTop;
    }

    /// `dim_park_tired` (keeps `tired`).
    pub fn park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune_state = TuneState::ParkingTired;
    }

    /// `net_dim_decision`: returns (profile index changed, the comparison
    /// made if any).
    pub fn decision(&mut self, curr: &DimStats) -> (bool, Option<StatsCmp>) {
        let prev_state = self.tune_state;
        let prev_ix = self.profile_ix;
        let mut cmp = None;
        match self.tune_state {
            TuneState::ParkingOnTop => {
                let c = stats_compare(curr, &self.prev_stats);
                cmp = Some(c);
                if c != StatsCmp::Same {
                    self.exit_parking();
                }
            }
            TuneState::ParkingTired => {
                self.tired = self.tired.wrapping_sub(1);
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            TuneState::GoingRight | TuneState::GoingLeft => {
                let c = stats_compare(curr, &self.prev_stats);
                cmp = Some(c);
                if c != StatsCmp::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park_on_top();
                } else {
                    match self.step() {
                        StepResult::OnEdge => self.park_on_top(),
                        StepResult::TooTired => self.park_tired(),
                        StepResult::Stepped => {}
                    }
                }
            }
        }
        // The reference is frozen while parked on top.
        if prev_state != TuneState::ParkingOnTop || self.tune_state != TuneState::ParkingOnTop {
            self.prev_stats = *curr;
        }
        (self.profile_ix != prev_ix, cmp)
    }

    /// `net_dim(dim, end_sample)`. Returns what the call did.
    pub fn net_dim(&mut self, end: &DimSample) -> NetDimOutcome {
        let mut out = NetDimOutcome::default();
        match self.state {
            MeasureState::ApplyNewProfile => return out,
            MeasureState::MeasureInProgress => {
                let nevents = bit_gap_u16(end.event_ctr, self.start_sample.event_ctr);
                out.nevents = Some(nevents);
                if nevents < DIM_NEVENTS {
                    return out;
                }
                let Some(stats) = calc_stats(&self.start_sample, end) else {
                    return out;
                };
                out.stats = Some(stats);
                let (changed, cmp) = self.decision(&stats);
                out.cmp = cmp;
                if changed {
                    self.state = MeasureState::ApplyNewProfile;
                    out.changed = true;
                    return out;
                }
            }
            MeasureState::StartMeasure => {}
        }
        // START_MEASURE (also reached by falling through).
        self.start_sample = *end;
        self.state = MeasureState::MeasureInProgress;
        out.restarted = true;
        out
    }
}

/// What one `net_dim` call did (for the trace and the tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetDimOutcome {
    /// Events since the measurement start (when measuring).
    pub nevents: Option<u16>,
    /// The statistics of a completed measurement.
    pub stats: Option<DimStats>,
    /// The comparison made by the decision, if any.
    pub cmp: Option<StatsCmp>,
    /// The profile index changed (the driver must apply it).
    pub changed: bool,
    /// A new measurement started at this call.
    pub restarted: bool,
}

/// Scenario config of `kind = "dim"`: Linux generic DIM (net_dim), called
/// at every NAPI poll; the profile's `usec` drives the vector's EITR.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DimCfg {
    /// Profile set: rx-eqe (default), rx-cqe, tx-eqe or tx-cqe.
    #[serde(default)]
    pub profile: DimProfile,
    /// Starting profile index 0..4 (kernel default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 0, max = 4))]
    pub start_index: u32,
}

fn one() -> u32 {
    1
}

impl Default for DimCfg {
    fn default() -> Self {
        DimCfg {
            profile: DimProfile::RxEqe,
            start_index: 1,
        }
    }
}

impl ModeratorConfig for DimCfg {
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        check_range(
            "start_index",
            self.start_index,
            0,
            NUM_PROFILES as u32 - 1,
            "",
        )?;
        if port.throttle == Throttle::Itr256ns {
            return Err(FieldError::new(
                "kind",
                format!("\"dim\" sets a per-vector interval in us; chip {} has only ITR: use an igb-class chip", port.chip),
            ));
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let mut d = Dim::new(self.profile, self.start_index as u8);
        d.work_delay = ctx.work_delay;
        Box::new(d)
    }
}

/// Where the profile goes (the driver's work item writes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimOut {
    /// The vector's EITR [us] (`usec`; `pkts` not held).
    Eitr,
    /// The RX or TX completion queues of a CQ chip (`ModerationParams::
    /// cq_rx` / `cq_tx`): `usec` as the period in units of `resolution_us`
    /// (ENA writes the profile's `usec` into its delay field as is), `pkts`
    /// as the count when the chip holds one, the period mode of the
    /// profile set.
    Cq {
        tx: bool,
        frames: bool,
        resolution_us: u32,
    },
}

/// DIM for one vector: the kernel state plus the driver's running counters.
#[derive(Clone, Debug)]
pub struct Dim {
    pub profile: DimProfile,
    pub core: DimCore,
    /// From queueing the apply work to its run [ns] (0: it runs at the
    /// decision's instant, before the next poll).
    pub work_delay: Nanos,
    /// Where the profile is written.
    pub out: DimOut,
    counters: DimSample,
    last: Option<TraceRow>,
    /// The queued work's run time, until the caller takes it.
    work_at: Option<SimTime>,
}

impl Dim {
    /// `start_ix` is clamped to the last profile.
    pub fn new(profile: DimProfile, start_ix: u8) -> Self {
        Dim {
            profile,
            core: DimCore::new(start_ix.min((NUM_PROFILES - 1) as u8)),
            work_delay: Nanos::ZERO,
            out: DimOut::Eitr,
            counters: DimSample::default(),
            last: None,
            work_at: None,
        }
    }

    /// Starting at the kernel's default index (1).
    pub fn with_default_start(profile: DimProfile) -> Self {
        Self::new(profile, profile.default_index())
    }

    /// The profile in force.
    pub fn current(&self) -> CqModer {
        self.profile.table()[self.core.profile_ix as usize]
    }

    /// The registers the current profile programs.
    pub fn params(&self) -> ModerationParams {
        let cur = self.current();
        match self.out {
            DimOut::Eitr => ModerationParams::eitr(cur.usec as u32),
            DimOut::Cq {
                tx,
                frames,
                resolution_us,
            } => {
                let set = super::CqSetting {
                    usec: cur.usec as u32 * resolution_us,
                    pkts: if frames { cur.pkts as u32 } else { 0 },
                    cqe_mode: matches!(self.profile, DimProfile::RxCqe | DimProfile::TxCqe),
                };
                if tx {
                    ModerationParams::cq(None, Some(set))
                } else {
                    ModerationParams::cq(Some(set), None)
                }
            }
        }
    }

    /// A trace row: this call's inputs and `net_dim`'s outcome, the state
    /// after it, and `work` (0 none, 1 queued here, 2 the work ran).
    fn row(&self, t_ns: u64, input: [i64; 3], o: &NetDimOutcome, work: i64) -> TraceRow {
        let cur = self.current();
        let st = o.stats.unwrap_or(DimStats {
            ppms: -1,
            bpms: -1,
            epms: -1,
        });
        TraceRow {
            t_ns,
            values: vec![
                ("events", input[0]),
                ("packets", input[1]),
                ("bytes", input[2]),
                ("nevents", o.nevents.map_or(-1, |n| n as i64)),
                ("ppms", st.ppms as i64),
                ("bpms", st.bpms as i64),
                ("epms", st.epms as i64),
                ("cmp", o.cmp.map_or(-1, |c| c as i64)),
                ("state", self.core.state as i64),
                ("tune_state", self.core.tune_state as i64),
                ("profile_ix", self.core.profile_ix as i64),
                ("steps_right", self.core.steps_right as i64),
                ("steps_left", self.core.steps_left as i64),
                ("tired", self.core.tired as i64),
                ("eitr_us", cur.usec as i64),
                ("pkts", cur.pkts as i64),
                ("applied", i64::from(work == 2)),
                ("work", work),
            ],
        }
    }
}

impl Moderator for Dim {
    fn name(&self) -> &'static str {
        "dim"
    }

    fn initial(&self) -> ModerationParams {
        self.params()
    }

    fn invocation(&self) -> Invocation {
        Invocation::PerPoll
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let (pkts, bytes) = if self.profile.is_rx() {
            (s.rx_packets, s.rx_bytes)
        } else {
            (s.tx_packets, s.tx_bytes)
        };
        // The driver's counters: u16 events, u32 packets and bytes, wrapping.
        let c = &mut self.counters;
        c.time_ns = s.now.as_ns();
        c.event_ctr = c.event_ctr.wrapping_add(s.interrupts as u16);
        c.pkt_ctr = c.pkt_ctr.wrapping_add(pkts as u32);
        c.byte_ctr = c.byte_ctr.wrapping_add(bytes as u32);
        let end = *c;

        let o = self.core.net_dim(&end);
        let queued = o.changed;
        if queued {
            // `schedule_work`: the profile is written when the work runs.
            self.work_at = Some(s.now + self.work_delay);
        }
        let input = [s.interrupts as i64, pkts as i64, bytes as i64];
        self.last = Some(self.row(s.now.as_ns(), input, &o, i64::from(queued)));
        None
    }

    fn take_work(&mut self) -> Option<SimTime> {
        self.work_at.take()
    }

    fn run_work(&mut self, now: SimTime) -> Option<ModerationParams> {
        if self.core.state != MeasureState::ApplyNewProfile {
            return None;
        }
        // The work item: program the profile, restart the measurement.
        self.core.state = MeasureState::StartMeasure;
        self.last = Some(self.row(now.as_ns(), [0; 3], &NetDimOutcome::default(), 2));
        Some(self.params())
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
