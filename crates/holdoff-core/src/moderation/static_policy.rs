//! Static moderation: register values set once at interface up and never
//! changed (Linux e1000 `InterruptThrottleRate=N`, FreeBSD `enable_aim=0`,
//! OpenBSD em, ethtool -C with adaptive off).
//!
//! Parameters: any ITR/EITR value and any RDTR/RADV/TIDV/TADV values, in
//! hardware units. Source: algorithms.md §1.2-1.4.

use super::{Invocation, ModerationParams, Moderator, Sample};

/// Fixed settings, written once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticModerator {
    pub params: ModerationParams,
}

impl StaticModerator {
    pub fn new(params: ModerationParams) -> Self {
        StaticModerator { params }
    }
}

impl Moderator for StaticModerator {
    fn name(&self) -> &'static str {
        "static"
    }
    fn initial(&self) -> ModerationParams {
        self.params
    }
    fn invocation(&self) -> Invocation {
        Invocation::Never
    }
    fn on_sample(&mut self, _sample: &Sample) -> Option<ModerationParams> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_policy_never_changes_its_settings() {
        let p = ModerationParams {
            itr_256ns: Some(488),
            tidv_1024ns: Some(64),
            ..Default::default()
        };
        let mut m = StaticModerator::new(p);
        assert_eq!(m.initial(), p);
        assert_eq!(m.invocation(), Invocation::Never);
        let s = Sample {
            rx_packets: 1_000_000,
            interrupts: 8000,
            ..Default::default()
        };
        assert_eq!(m.on_sample(&s), None);
        assert_eq!(m.initial(), p);
    }
}
