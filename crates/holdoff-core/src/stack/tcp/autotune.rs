//! Receive-buffer autotuning (Linux `net/ipv4/tcp_input.c`
//! `tcp_rcv_rtt_measure`, `tcp_rcv_space_adjust`, `tcp_init_buffer_space`;
//! since 2.6.7, on while `tcp_moderate_rcvbuf` = 1): the receiver measures
//! how many bytes the application read in the last round trip and grows the
//! socket's receive buffer, and with it the window clamp, so that the
//! window can follow a sender that is not limited by it.
//!
//! Models (Linux 6.12):
//! - the receiver's RTT estimate without timestamps (`tcp_rcv_rtt_measure`,
//!   the window-dependent rule): the time to receive one window of data
//!   from the moment it was offered, keeping the minimum of the samples;
//! - at each read, once an RTT has passed since the last measure: with
//!   `copied` the bytes read since then and `space` the last round's
//!   figure, if copied > space, rcvwin = 2 x copied + 16 x MSS, plus twice
//!   rcvwin x (copied - space) / space for a sender still speeding up; the
//!   buffer grows to the space that backs rcvwin (`tcp_space_from_win`, the
//!   inverse of the adv_win_scale rule) up to tcp_rmem[2], and the window
//!   clamp to the window it backs; space becomes copied;
//! - the first round's space is min(rcv_ssthresh, the initial window,
//!   10 x MSS) (041a14d26715, "tcp: start receiver buffer autotuning
//!   sooner").
//!
//! Simplifies: no timestamp-based RTT samples (`tcp_rcv_rtt_measure_ts`),
//! so the estimate is the window-dependent one, an upper bound of the RTT;
//! the buffer-to-window rule stays `tcp_adv_win_scale` (6.5+ measures a
//! scaling ratio from the buffers received); no memory pressure.
//!
//! Units: bytes, times [ns].

use super::{win_from_space, SimTime, TcpConfig, TcpEndpoint};
use crate::units::Nanos;

/// `TCP_INIT_CWND`: the first round's space is at most this many MSS.
const INIT_SPACE_SEGS: u32 = 10;

/// The first round's `rcvq_space.space` [bytes].
pub(super) fn initial_space(cfg: &TcpConfig, rcv_wnd: u32) -> u32 {
    rcv_wnd.min(INIT_SPACE_SEGS * cfg.mss).max(1)
}

/// `tcp_space_from_win`: the buffer space that backs a window of `win`
/// bytes under `adv_win_scale` (the inverse of `win_from_space`) [bytes].
pub fn space_from_win(win: u64, adv_win_scale: u32) -> u64 {
    let d = 1u64 << adv_win_scale;
    (win * d).div_ceil(d - 1)
}

impl TcpEndpoint {
    /// The receiver's RTT estimate [ns], once measured.
    pub fn rcv_rtt(&self) -> Option<Nanos> {
        self.rcv_rtt
    }

    /// `tcp_rcv_rtt_measure`, after in-order data arrived at `now`.
    pub(super) fn rcv_rtt_measure(&mut self, now: SimTime) {
        if !self.cfg.moderate_rcvbuf {
            return;
        }
        self.rcvq_time.get_or_insert(now);
        if let Some((end, since)) = self.rcv_rtt_mark {
            if self.rcv_nxt < end {
                return;
            }
            let d = (now - since).max(Nanos(1));
            self.rcv_rtt = Some(self.rcv_rtt.map_or(d, |r| r.min(d)));
        }
        let wnd = self.rcv_adv_edge.saturating_sub(self.rcv_wup);
        self.rcv_rtt_mark = Some((self.rcv_nxt + wnd, now));
    }

    /// `tcp_rcv_space_adjust`, after the application read at `now`.
    pub(super) fn rcv_space_adjust(&mut self, now: SimTime) {
        if !self.cfg.moderate_rcvbuf {
            return;
        }
        let (Some(rtt), Some(since)) = (self.rcv_rtt, self.rcvq_time) else {
            return;
        };
        if now - since < rtt {
            return;
        }
        let copied_seq = self.rcv_nxt - self.rcv_queued as u64;
        let copied = copied_seq - self.rcvq_seq;
        let space = self.rcvq_space as u64;
        if copied > space {
            let mss = self.cfg.mss as u64;
            let mut rcvwin = 2 * copied + 16 * mss;
            rcvwin += 2 * (rcvwin * (copied - space) / space);
            let scale = self.cfg.adv_win_scale;
            let rcvbuf = space_from_win(rcvwin, scale).min(self.cfg.rmem_max as u64) as u32;
            if rcvbuf > self.rcvbuf {
                self.rcvbuf = rcvbuf;
                self.window_clamp = win_from_space(rcvbuf, scale);
            }
            self.rcvq_space = copied.min(u32::MAX as u64) as u32;
        }
        self.rcvq_seq = copied_seq;
        self.rcvq_time = Some(now);
    }
}
