//! Units: simulated time, durations, register encodings, rates and sizes.
//!
//! Models: time as integer nanoseconds. `SimTime` is an instant since the
//! start of the run, `Nanos` a duration. There is no floating-point time in
//! the core; `f64` appears only in derived metrics (rates, percentages).
//!
//! Register encodings keep their hardware unit in the name:
//! - ITR / 82574-82575 EITR interval: 256 ns units (`itr_256ns`);
//! - RDTR, RADV, TIDV, TADV: 1.024 us "ticks" (`ticks_1024ns`);
//! - 82576/I350/I210 EITR interval field: 1 us (`eitr_us`).
//!
//! Sources: 8254x SDM §13.4.18 (ITR), §13.4.30/31 (RDTR/RADV), §13.4.41/44
//! (TIDV/TADV); I210 datasheet §8.8.14 (EITR). See `docs/models/nic.md`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time [ns since the start of the run].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimTime(pub u64);

/// A duration of simulated time [ns].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Nanos(pub u64);

impl SimTime {
    /// The instant `ps` picoseconds after time zero, rounded down to the
    /// nanosecond. Exactly `ps / 1000`; below 2^64 ps (213 days) the
    /// division is done in 64 bits, which is several times cheaper than a
    /// 128-bit one.
    #[inline]
    pub fn from_ps_floor(ps: u128) -> SimTime {
        match u64::try_from(ps) {
            Ok(p) => SimTime(p / 1000),
            Err(_) => SimTime((ps / 1000) as u64),
        }
    }

    pub const ZERO: SimTime = SimTime(0);
    pub const NEVER: SimTime = SimTime(u64::MAX);
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Duration since `earlier`, zero if `earlier` is later (saturating).
    #[inline]
    pub fn since(self, earlier: SimTime) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    #[inline]
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    #[inline]
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Derived metric only: the duration in microseconds as a float.
    #[inline]
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    #[inline]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `self - o`, zero if `o` is larger.
    #[inline]
    pub const fn saturating_sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(o.0))
    }
}

impl Add<Nanos> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: Nanos) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Nanos> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: Nanos) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = Nanos;
    /// `a - b` for `a >= b`; saturates at zero (time never runs backwards).
    #[inline]
    fn sub(self, b: SimTime) -> Nanos {
        Nanos(self.0.saturating_sub(b.0))
    }
}
impl Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, o: Nanos) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(o.0))
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

/// ITR (and 82574/82575 EITR) interval register value [256 ns units] to a duration.
#[inline]
pub const fn itr_256ns_to_nanos(itr_256ns: u32) -> Nanos {
    Nanos(itr_256ns as u64 * 256)
}

/// The register value a driver writes for a target interrupt rate:
/// `1e9 / (rate * 256)` with C integer division (Linux e1000, FreeBSD
/// `EM_INTS_TO_ITR`). Rate 0 means "off" and gives 0.
#[inline]
pub const fn ints_per_s_to_itr_256ns(rate_per_s: u32) -> u32 {
    if rate_per_s == 0 {
        0
    } else {
        (1_000_000_000u64 / (rate_per_s as u64 * 256)) as u32
    }
}

/// RDTR/RADV/TIDV/TADV value [1.024 us ticks] to a duration.
#[inline]
pub const fn ticks_1024ns_to_nanos(ticks_1024ns: u32) -> Nanos {
    Nanos(ticks_1024ns as u64 * 1024)
}

/// 82576/I350/I210 EITR interval field [1 us] to a duration.
#[inline]
pub const fn eitr_us_to_nanos(eitr_us: u32) -> Nanos {
    Nanos(eitr_us as u64 * 1_000)
}

/// A link or line rate [bit/s].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    pub const GIGABIT: BitsPerSec = BitsPerSec(1_000_000_000);
}

/// Ethernet preamble + SFD [bytes].
pub const PREAMBLE_SFD_BYTES: u32 = 8;
/// Minimum inter-frame gap [bytes] (96 bit times).
pub const IFG_BYTES: u32 = 12;
/// Minimum frame, destination address to FCS [bytes].
pub const MIN_FRAME_BYTES: u32 = 64;
/// Ethernet header (14) + FCS (4) around an L3 payload [bytes].
pub const ETH_OVERHEAD_BYTES: u32 = 18;

/// Line occupancy of one frame of `frame_bytes` (destination address to FCS)
/// [bytes]: `max(len, 64) + 8 + 12` (IEEE 802.3 preamble/SFD and IFG).
#[inline]
pub const fn wire_bytes(frame_bytes: u32) -> u32 {
    let len = if frame_bytes < MIN_FRAME_BYTES {
        MIN_FRAME_BYTES
    } else {
        frame_bytes
    };
    len + PREAMBLE_SFD_BYTES + IFG_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itr_conversion_matches_sdm_table() {
        // 8254x SDM §13.4.18; drivers write reg = 1e9 / (rate * 256), integer
        // (Linux e1000 `e1000_configure_rx`).
        for (rate, reg) in [
            (100, 39062),
            (2000, 1953),
            (3000, 1302),
            (4000, 976),
            (8000, 488),
            (20000, 195),
            (70000, 55),
            (100000, 39),
        ] {
            assert_eq!(ints_per_s_to_itr_256ns(rate), reg, "rate {rate}");
        }
        // SDM worked example: INTERVAL 500 -> 128 us.
        assert_eq!(itr_256ns_to_nanos(500), Nanos::from_us(128));
    }

    #[test]
    fn wire_occupancy_follows_802_3() {
        assert_eq!(wire_bytes(64), 84);
        assert_eq!(wire_bytes(60), 84);
        assert_eq!(wire_bytes(1518), 1538);
    }

    #[test]
    fn time_arithmetic_saturates() {
        assert_eq!(SimTime(5) - SimTime(9), Nanos(0));
        assert_eq!(SimTime(5) + Nanos(7), SimTime(12));
        assert_eq!(ticks_1024ns_to_nanos(64), Nanos(65_536));
    }
}
