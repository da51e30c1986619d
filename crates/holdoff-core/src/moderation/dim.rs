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
//! - Output: `eitr_us` = the profile's `usec` (a holdoff period, which is
//!   what EITR is). The profile's `pkts` (completions coalesced before an
//!   interrupt) has no e1000/igb equivalent and is not applied; it appears
//!   in the trace.
//! - The driver's work item is assumed to run before the next poll: after a
//!   profile change the next call starts a new measurement.
//! - Current kernels: `IS_SIGNIFICANT_DIFF` is false for a zero reference,
//!   and a zero `delta_us` ends the call without a decision (older kernels
//!   used uninitialised statistics there).
//!
//! Integer widths follow the C: the counters wrap in 16/32 bits and gaps
//! are taken modulo 2^bits (`BIT_GAP`); `npkts * USEC_PER_MSEC` is computed
//! in 64 bits (`USEC_PER_MSEC` is a `long`) and stored in an `int`.
//!
//! Units: time [ns in, us inside], rates [per ms], `usec` [1 us].

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

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Moderator> {
        Box::new(Dim::new(self.profile, self.start_index as u8))
    }
}

/// DIM for one vector: the kernel state plus the driver's running counters.
#[derive(Clone, Debug)]
pub struct Dim {
    pub profile: DimProfile,
    pub core: DimCore,
    counters: DimSample,
    last: Option<TraceRow>,
}

impl Dim {
    /// `start_ix` is clamped to the last profile.
    pub fn new(profile: DimProfile, start_ix: u8) -> Self {
        Dim {
            profile,
            core: DimCore::new(start_ix.min((NUM_PROFILES - 1) as u8)),
            counters: DimSample::default(),
            last: None,
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

    fn params(&self) -> ModerationParams {
        ModerationParams::eitr(self.current().usec as u32)
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
        let cur = self.current();
        let st = o.stats.unwrap_or(DimStats {
            ppms: -1,
            bpms: -1,
            epms: -1,
        });
        self.last = Some(TraceRow {
            t_ns: s.now.as_ns(),
            values: vec![
                ("events", s.interrupts as i64),
                ("packets", pkts as i64),
                ("bytes", bytes as i64),
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
                ("applied", o.changed as i64),
            ],
        });
        if o.changed {
            // The work item: program the profile, restart the measurement.
            self.core.state = MeasureState::StartMeasure;
            Some(self.params())
        } else {
            None
        }
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimTime;
    use StatsCmp::*;
    use TuneState::*;

    fn stats(ppms: i32, bpms: i32, epms: i32) -> DimStats {
        DimStats { ppms, bpms, epms }
    }

    fn core(ix: u8, ts: TuneState, right: u8, left: u8, tired: u8) -> DimCore {
        DimCore {
            tune_state: ts,
            steps_right: right,
            steps_left: left,
            tired,
            ..DimCore::new(ix)
        }
    }

    #[test]
    fn profiles_match_the_kernel_tables() {
        // net_dim.c profile tables, {usec, pkts} per index; default index 1 for both modes.
        let usec = |p: DimProfile| p.table().map(|m| m.usec);
        let pkts = |p: DimProfile| p.table().map(|m| m.pkts);
        assert_eq!(usec(DimProfile::RxEqe), [1, 8, 64, 128, 256]);
        assert_eq!(pkts(DimProfile::RxEqe), [256; 5]);
        assert_eq!(usec(DimProfile::RxCqe), [2, 8, 16, 32, 64]);
        assert_eq!(pkts(DimProfile::RxCqe), [256, 128, 64, 64, 64]);
        assert_eq!(usec(DimProfile::TxEqe), [1, 8, 32, 64, 128]);
        assert_eq!(pkts(DimProfile::TxEqe), [128; 5]);
        assert_eq!(usec(DimProfile::TxCqe), [5, 8, 16, 32, 64]);
        assert_eq!(pkts(DimProfile::TxCqe), [128, 64, 32, 32, 32]);
        for p in [
            DimProfile::RxEqe,
            DimProfile::RxCqe,
            DimProfile::TxEqe,
            DimProfile::TxCqe,
        ] {
            let d = Dim::with_default_start(p);
            assert_eq!(d.core.profile_ix, 1);
            assert_eq!(d.initial().eitr_us, Some(8)); // index 1 is 8 us in all four
            assert_eq!(d.invocation(), Invocation::PerPoll);
        }
        // A start index beyond the table is clamped to the last profile.
        assert_eq!(Dim::new(DimProfile::RxEqe, 9).initial().eitr_us, Some(256));
    }

    #[test]
    fn significance_is_more_than_ten_percent() {
        // IS_SIGNIFICANT_DIFF: (100 * |val - ref|) / ref > 10, integer division.
        let table = [
            (111, 100, true),  // 11 % > 10
            (110, 100, false), // exactly 10 % is not significant
            (89, 100, true),
            (90, 100, false),
            (12, 10, true),  // 100 * 2 / 10 = 20
            (11, 10, false), // 100 * 1 / 10 = 10
            (1, 9, true),    // 100 * 8 / 9 = 88
            (5, 0, false),   // zero reference: never significant
        ];
        for (val, r, want) in table {
            assert_eq!(is_significant_diff(val, r), want, "{val} vs {r}");
        }
    }

    #[test]
    fn counter_gaps_wrap() {
        // dim.h BIT_GAP: ((end - start) + 2^bits) & (2^bits - 1).
        assert_eq!(bit_gap_u16(5, 65530), 11);
        assert_eq!(bit_gap_u32(10, u32::MAX - 9), 20);
        assert_eq!(bit_gap_u16(100, 36), 64);
    }

    #[test]
    fn stats_are_rates_rounded_up() {
        // dim_calc_stats: ceil(n * 1000 / delta_us); epms always from 64 events.
        let s = |t_ns, p, b, e| DimSample {
            time_ns: t_ns,
            pkt_ctr: p,
            byte_ctr: b,
            event_ctr: e,
        };
        // 1 ms, 100 packets, 150000 bytes: 100, 150000, 64 per ms.
        assert_eq!(
            calc_stats(&s(0, 0, 0, 0), &s(1_000_000, 100, 150_000, 64)),
            Some(stats(100, 150_000, 64))
        );
        // 3 us, 1 packet of 98 bytes: ceil(1000 / 3) = 334, ceil(98000 / 3)
        // = 32667, ceil(64000 / 3) = 21334.
        assert_eq!(
            calc_stats(&s(0, 0, 0, 0), &s(3_000, 1, 98, 64)),
            Some(stats(334, 32_667, 21_334))
        );
        // 1999 ns truncates to 1 us; 999 ns to 0 us -> no statistics.
        assert_eq!(
            calc_stats(&s(0, 0, 0, 0), &s(1_999, 1, 1, 64))
                .unwrap()
                .ppms,
            1000
        );
        assert_eq!(calc_stats(&s(0, 0, 0, 0), &s(999, 1, 1, 64)), None);
        // Packet counter wrapping past 2^32: 10 packets in 1 ms.
        assert_eq!(
            calc_stats(&s(0, u32::MAX, 0, 0), &s(1_000_000, 9, 0, 64))
                .unwrap()
                .ppms,
            10
        );
    }

    #[test]
    fn compare_orders_bytes_then_packets_then_events() {
        // (curr, prev, expected) for each rule of net_dim_stats_compare in order.
        let table = [
            // 1. prev.bpms 0: better if curr has bytes, else same.
            (stats(1, 5, 1), stats(0, 0, 0), Better),
            (stats(0, 0, 9), stats(0, 0, 5), Same),
            // 2. significant bpms difference decides.
            (stats(10, 1111, 64), stats(10, 1000, 64), Better),
            (stats(99, 889, 1), stats(10, 1000, 64), Worse),
            // bpms within 10 % -> 3. ppms: prev 0 -> better if curr > 0.
            (stats(1, 1100, 64), stats(0, 1000, 64), Better),
            (stats(0, 1100, 64), stats(0, 1000, 64), Same),
            // 4. significant ppms difference.
            (stats(112, 1000, 64), stats(100, 1000, 64), Better),
            (stats(88, 1000, 64), stats(100, 1000, 64), Worse),
            // 5. prev.epms 0 -> same.
            (stats(100, 1000, 9), stats(100, 1000, 0), Same),
            // 6. fewer events per ms is better: 64 -> 50 is 21 %.
            (stats(100, 1000, 50), stats(100, 1000, 64), Better),
            (stats(100, 1000, 80), stats(100, 1000, 64), Worse),
            // 7. 64 -> 70 is 9 % (and bytes, packets 5 %): same.
            (stats(105, 1050, 70), stats(100, 1000, 64), Same),
        ];
        for (i, (c, p, want)) in table.into_iter().enumerate() {
            assert_eq!(stats_compare(&c, &p), want, "row {i}");
        }
    }

    #[test]
    fn step_table() {
        // net_dim step(): (before, result, after).
        let table = [
            // tired == 10 -> TOO_TIRED, nothing changes.
            (
                core(2, GoingRight, 1, 0, 10),
                StepResult::TooTired,
                core(2, GoingRight, 1, 0, 10),
            ),
            // right edge.
            (
                core(4, GoingRight, 1, 0, 3),
                StepResult::OnEdge,
                core(4, GoingRight, 1, 0, 3),
            ),
            (
                core(1, GoingRight, 0, 0, 0),
                StepResult::Stepped,
                core(2, GoingRight, 1, 0, 1),
            ),
            // left edge.
            (
                core(0, GoingLeft, 0, 1, 3),
                StepResult::OnEdge,
                core(0, GoingLeft, 0, 1, 3),
            ),
            (
                core(2, GoingLeft, 2, 0, 2),
                StepResult::Stepped,
                core(1, GoingLeft, 2, 1, 3),
            ),
            // parked: no move, but tired still increments.
            (
                core(3, ParkingOnTop, 0, 0, 0),
                StepResult::Stepped,
                core(3, ParkingOnTop, 0, 0, 1),
            ),
        ];
        for (i, (mut before, want, after)) in table.into_iter().enumerate() {
            assert_eq!(before.step(), want, "row {i}");
            assert_eq!(before, after, "row {i}");
        }
    }

    #[test]
    fn on_top_turn_and_park_helpers() {
        // dim.c on-top, turn and park helpers.
        let table = [
            (core(2, ParkingOnTop, 0, 0, 0), true),
            (core(2, ParkingTired, 0, 0, 5), true),
            (core(2, GoingRight, 1, 2, 0), true), // left > 1 and right == 1
            (core(2, GoingRight, 2, 2, 0), false),
            (core(2, GoingRight, 1, 1, 0), false),
            (core(2, GoingLeft, 2, 1, 0), true), // right > 1 and left == 1
            (core(2, GoingLeft, 1, 1, 0), false),
        ];
        for (i, (c, want)) in table.into_iter().enumerate() {
            assert_eq!(c.on_top(), want, "row {i}");
        }
        let mut c = core(2, GoingRight, 3, 2, 4);
        c.turn();
        assert_eq!(c, core(2, GoingLeft, 3, 0, 4));
        c.turn();
        assert_eq!(c, core(2, GoingRight, 0, 0, 4));
        let mut c = core(2, ParkingTired, 3, 2, 4);
        c.turn();
        assert_eq!(c.tune_state, ParkingTired);
        let mut c = core(2, GoingLeft, 3, 2, 4);
        c.park_tired();
        assert_eq!(c, core(2, ParkingTired, 0, 0, 4));
        c.park_on_top();
        assert_eq!(c, core(2, ParkingOnTop, 0, 0, 0));
        // exit_parking: left from a non-zero index, right from index 0.
        let mut c = core(2, ParkingOnTop, 0, 0, 0);
        c.exit_parking();
        assert_eq!(c, core(1, GoingLeft, 0, 1, 1));
        let mut c = core(0, ParkingTired, 0, 0, 0);
        c.exit_parking();
        assert_eq!(c, core(1, GoingRight, 1, 0, 1));
    }

    #[test]
    fn decision_transitions() {
        // net_dim decision(): (before, curr, changed, after, prev_stats after),
        // every case starting from the reference p.
        let p = stats(100, 1000, 64);
        let same = stats(100, 1000, 64);
        let better = stats(100, 2000, 64);
        let worse = stats(100, 500, 64);
        let table = [
            // Parked on top, same -> stays; reference frozen.
            (
                core(1, ParkingOnTop, 0, 0, 0),
                same,
                false,
                core(1, ParkingOnTop, 0, 0, 0),
                p,
            ),
            // Parked on top, better at ix 1 -> exit: going left, ix 0.
            (
                core(1, ParkingOnTop, 0, 0, 0),
                better,
                true,
                core(0, GoingLeft, 0, 1, 1),
                better,
            ),
            // Parked on top, worse at ix 0 -> exit: going right, ix 1.
            (
                core(0, ParkingOnTop, 0, 0, 0),
                worse,
                true,
                core(1, GoingRight, 1, 0, 1),
                worse,
            ),
            // Parked tired: count down; still tired -> no move, reference updated.
            (
                core(2, ParkingTired, 0, 0, 3),
                worse,
                false,
                core(2, ParkingTired, 0, 0, 2),
                worse,
            ),
            // Last tired measurement -> exit parking (left from ix 2).
            (
                core(2, ParkingTired, 0, 0, 1),
                same,
                true,
                core(1, GoingLeft, 0, 1, 1),
                same,
            ),
            // Going right and better -> keep going.
            (
                core(2, GoingRight, 1, 0, 1),
                better,
                true,
                core(3, GoingRight, 2, 0, 2),
                better,
            ),
            // Going right and worse -> turn (steps_left := 0), not on top, step left.
            (
                core(3, GoingRight, 2, 0, 2),
                worse,
                true,
                core(2, GoingLeft, 2, 1, 3),
                worse,
            ),
            // Going right and same counts as not better -> turn as well.
            (
                core(3, GoingRight, 2, 0, 2),
                same,
                true,
                core(2, GoingLeft, 2, 1, 3),
                same,
            ),
            // Going right, better, left 2 / right 1 -> on top -> park (no move).
            (
                core(2, GoingRight, 1, 2, 3),
                better,
                false,
                core(2, ParkingOnTop, 0, 0, 0),
                better,
            ),
            // Going left, worse, right 2 / left 1: turn right (right := 0), step.
            (
                core(1, GoingLeft, 2, 1, 3),
                worse,
                true,
                core(2, GoingRight, 1, 1, 4),
                worse,
            ),
            // Going right at the right edge, better -> on edge -> park on top.
            (
                core(4, GoingRight, 3, 0, 3),
                better,
                false,
                core(4, ParkingOnTop, 0, 0, 0),
                better,
            ),
            // Going left at index 0, better -> on edge -> park on top.
            (
                core(0, GoingLeft, 0, 1, 1),
                better,
                false,
                core(0, ParkingOnTop, 0, 0, 0),
                better,
            ),
            // Tired 10 -> too tired -> park tired, tired kept.
            (
                core(2, GoingRight, 1, 0, 10),
                better,
                false,
                core(2, ParkingTired, 0, 0, 10),
                better,
            ),
        ];
        for (i, (mut c, curr, changed, after, prev_after)) in table.into_iter().enumerate() {
            c.prev_stats = p;
            let mut want = after;
            want.prev_stats = prev_after;
            assert_eq!(c.decision(&curr).0, changed, "row {i}");
            assert_eq!(c, want, "row {i}");
        }
    }

    #[test]
    fn measurement_needs_64_events_and_wraps() {
        // net_dim(): START -> start sample; < 64 events -> nothing.
        let mut c = DimCore::new(1);
        let s = |t_ns, e| DimSample {
            time_ns: t_ns,
            pkt_ctr: 0,
            byte_ctr: 0,
            event_ctr: e,
        };
        let o = c.net_dim(&s(0, 65_500));
        assert!(o.restarted && c.state == MeasureState::MeasureInProgress);
        // 63 events (across the u16 wrap): no decision.
        let o = c.net_dim(&s(1_000_000, 65_500u16.wrapping_add(63)));
        assert_eq!((o.nevents, o.stats), (Some(63), None));
        // 64 events after 2 ms with no traffic: epms ceil(64000 / 2000) = 32;
        // prev all zero -> same -> stays parked, no change, and a new
        // measurement starts here.
        let o = c.net_dim(&s(2_000_000, 65_500u16.wrapping_add(64)));
        assert_eq!(o.stats, Some(stats(0, 0, 32)));
        assert_eq!((o.cmp, o.changed, o.restarted), (Some(Same), false, true));
        assert_eq!(c.start_sample.time_ns, 2_000_000);
        // APPLY_NEW_PROFILE ignores samples.
        c.state = MeasureState::ApplyNewProfile;
        assert_eq!(c.net_dim(&s(9_000_000, 0)), NetDimOutcome::default());
    }

    /// Feeds `n` identical polls `dt_ns` apart; returns (poll, eitr_us) writes.
    fn feed(d: &mut Dim, t: &mut u64, n: usize, dt_ns: u64, s: Sample) -> Vec<(usize, u32)> {
        let mut writes = vec![];
        for i in 0..n {
            *t += dt_ns;
            let out = d.on_sample(&Sample {
                now: SimTime(*t),
                ..s
            });
            if let Some(p) = out {
                writes.push((i, p.eitr_us.unwrap()));
            }
        }
        writes
    }

    #[test]
    fn sequence_idle_ping_bulk() {
        // Hand-derived from the net_dim rules for the RX CQE profiles (usec 2, 8, 16, 32,
        // 64), default index 1 (8 us).
        let mut d = Dim::with_default_start(DimProfile::RxCqe);
        assert_eq!(d.initial().eitr_us, Some(8));
        let mut t = 0u64;
        // Idle: the first poll starts a measurement at t = 1 s; 10 idle
        // polls carry no events -> nothing.
        assert!(feed(&mut d, &mut t, 10, 1_000_000_000, Sample::default()).is_empty());
        assert_eq!(d.core.start_sample.time_ns, 1_000_000_000);
        // Ping: one interrupt, one 98-byte packet per second. The 64th ping
        // (t = 74 s, 73 s after the start) completes the measurement:
        // delta 73e6 us; ppms = ceil(64000 / 73e6) = 1, bpms =
        // ceil(6272000 / 73e6) = 1, epms = 1. Parked on top with a zero
        // reference -> better -> exit parking left: index 0 (2 us).
        let ping = Sample {
            rx_packets: 1,
            rx_bytes: 98,
            interrupts: 1,
            ..Default::default()
        };
        assert_eq!(feed(&mut d, &mut t, 64, 1_000_000_000, ping), vec![(63, 2)]);
        assert_eq!((d.core.tune_state, d.core.tired), (GoingLeft, 1));
        assert_eq!(d.core.prev_stats, stats(1, 1, 1));
        // The next ping restarts the measurement; 64 pings later the same
        // stats -> same, not better -> turn right, not on top (steps_left
        // 1), step to index 1 (8 us), tired 2.
        assert_eq!(feed(&mut d, &mut t, 65, 1_000_000_000, ping), vec![(64, 8)]);
        assert_eq!((d.core.tune_state, d.core.tired), (GoingRight, 2));
        // And back: turn left, step to index 0 (2 us), tired 3.
        assert_eq!(feed(&mut d, &mut t, 65, 1_000_000_000, ping), vec![(64, 2)]);
        assert_eq!((d.core.tune_state, d.core.profile_ix), (GoingLeft, 0));
        assert_eq!(
            (d.core.steps_right, d.core.steps_left, d.core.tired),
            (1, 1, 3)
        );
        // Bulk: a poll every 100 us with one interrupt and 8 x 1514 bytes.
        // The first bulk poll restarts; 64 polls later: delta 6400 us,
        // 512 packets, 775168 bytes -> ppms 80, bpms 121120, epms 10.
        // Versus (1, 1, 1): better -> keep going left, but index 0 is the
        // edge -> park on top, no change (no write).
        let bulk = Sample {
            rx_packets: 8,
            rx_bytes: 12_112,
            interrupts: 1,
            ..Default::default()
        };
        assert!(feed(&mut d, &mut t, 65, 100_000, bulk).is_empty());
        assert_eq!(d.core.tune_state, ParkingOnTop);
        assert_eq!(d.core.prev_stats, stats(80, 121_120, 10));
        assert_eq!(d.core.tired, 0);
        // Steady bulk: the same stats -> same -> stays parked (reference frozen).
        assert!(feed(&mut d, &mut t, 128, 100_000, bulk).is_empty());
        assert_eq!(d.core.tune_state, ParkingOnTop);
        // Twice the bytes per poll: bpms 242240 vs 121120 -> better -> exit
        // parking; index 0 -> going right -> index 1 (8 us), after 64 polls.
        let bulk2 = Sample {
            rx_packets: 16,
            rx_bytes: 24_224,
            ..bulk
        };
        assert_eq!(feed(&mut d, &mut t, 64, 100_000, bulk2), vec![(63, 8)]);
        assert_eq!(d.current(), CqModer { usec: 8, pkts: 128 });
        let row = d.last_decision().unwrap();
        let get = |k: &str| row.values.iter().find(|(n, _)| *n == k).unwrap().1;
        assert_eq!(get("bpms"), 242_240);
        assert_eq!(get("cmp"), Better as i64);
        assert_eq!(get("eitr_us"), 8);
        assert_eq!(get("pkts"), 128);
        assert_eq!(get("applied"), 1);
    }

    #[test]
    fn tx_profiles_use_tx_counters() {
        // TX sets measure TX traffic; RX packets do not count.
        let mut d = Dim::with_default_start(DimProfile::TxEqe);
        let mut t = 0;
        let s = Sample {
            rx_packets: 10,
            rx_bytes: 15_140,
            tx_packets: 2,
            tx_bytes: 132,
            interrupts: 1,
            ..Default::default()
        };
        // First poll starts; 64 polls 10 us apart later: 640 us, 128 TX
        // packets, 8448 bytes -> ppms ceil(128000/640) = 200, bpms 13200,
        // epms 100. Better than zero -> left from index 1 -> index 0 (1 us).
        assert_eq!(feed(&mut d, &mut t, 65, 10_000, s), vec![(64, 1)]);
        assert_eq!(d.core.prev_stats, stats(200, 13_200, 100));
        assert_eq!(d.current().usec, 1);
        assert_eq!(d.name(), "dim");
    }
}
