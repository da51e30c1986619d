//! The sending side: application writes, segment output, ACK processing
//! (congestion control, loss recovery, RTT estimate) and the timers. See the
//! module doc of `stack::tcp` for what is modelled.
//!
//! Units: sequence numbers and sizes [bytes], cwnd [segments], times [ns].

use super::{unwrap_seq, Segment, TcpEndpoint, TcpOut};
use crate::units::{Nanos, SimTime};

impl TcpEndpoint {
    // ------------------------------------------------------------ application

    /// The application writes up to `bytes`; returns how many were accepted.
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut TcpOut) -> u64 {
        let n = if self.cfg.linux26_sender {
            self.linux26_write_room(bytes)
        } else {
            bytes.min(self.send_space() as u64)
        };
        self.write_seq += n;
        self.try_send(now, out);
        n
    }

    // ------------------------------------------------------------ sending

    pub(super) fn push_seg(&mut self, now: SimTime, seq: u64, len: u32, out: &mut TcpOut) {
        let mut wnd = self.adv_window();
        if self.linux_rules() {
            // tcp_select_window: never shrink the window already offered.
            let cur = self.rcv_adv_edge.saturating_sub(self.rcv_nxt) as u32;
            wnd = wnd.max(cur);
            self.rcv_wnd = wnd;
        }
        out.segs.push(Segment {
            seq: seq as u32,
            len,
            ack: self.rcv_nxt as u32,
            wnd,
        });
        self.rcv_wup = self.rcv_nxt;
        self.rcv_adv_edge = self.rcv_adv_edge.max(self.rcv_nxt + wnd as u64);
        self.delack_deadline = None;
        self.stats.segs_out += 1;
        if len == 0 {
            self.stats.acks_out += 1;
        } else {
            // tcp_event_data_sent: data sent within the ACK timeout of the
            // last data received makes the connection interactive.
            if self
                .last_data_rcv
                .is_some_and(|t| now - t < self.cfg.delack)
            {
                self.pingpong = true;
            }
            self.stats.data_segs_out += 1;
            if self.cfg.linux26_sender {
                self.linux26_data_sent(now);
            }
            self.tsq_charge(len);
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now + self.rto);
            }
        }
    }

    /// Send what the windows allow.
    pub fn try_send(&mut self, now: SimTime, out: &mut TcpOut) {
        let sent_before = self.snd_nxt;
        self.send_what_fits(now, out);
        if self.cfg.linux26_sender && self.snd_nxt > sent_before {
            self.cwnd_validate(now);
        }
    }

    fn send_what_fits(&mut self, now: SimTime, out: &mut TcpOut) {
        let mss = self.cfg.mss as u64;
        loop {
            let unsent = self.write_seq - self.snd_nxt;
            if unsent == 0 {
                return;
            }
            let mut cwnd_bytes = self.cwnd as u64 * mss;
            if self.recover.is_some() {
                cwnd_bytes += self.dupacks.saturating_sub(3) as u64 * mss;
            }
            let wnd = cwnd_bytes.min(self.rwnd as u64);
            let room = wnd.saturating_sub(self.in_flight());
            let len = unsent.min(mss).min(room);
            if len == 0 {
                return;
            }
            if len < mss && len < unsent {
                // Window-limited short segment: wait (sender-side SWS avoidance).
                return;
            }
            if len < mss && !self.cfg.nodelay && self.in_flight() > 0 {
                return; // Nagle
            }
            let seq = self.snd_nxt;
            if self.tsq_holds(seq < self.snd_max) {
                return; // TCP Small Queues: wait for a TX completion
            }
            if seq < self.snd_max {
                self.stats.retransmits += 1;
            } else if self.rtt_probe.is_none() {
                self.rtt_probe = Some((seq + len, now));
            }
            self.push_seg(now, seq, len as u32, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }

    pub(super) fn send_ack(&mut self, now: SimTime, out: &mut TcpOut) {
        self.push_seg(now, self.snd_nxt, 0, out);
    }

    pub(super) fn retransmit_head(&mut self, now: SimTime, out: &mut TcpOut) {
        let len = (self.snd_max - self.snd_una).min(self.cfg.mss as u64) as u32;
        if len == 0 {
            return;
        }
        self.rtt_probe = None; // Karn
        self.stats.retransmits += 1;
        self.push_seg(now, self.snd_una, len, out);
        self.snd_nxt = self.snd_nxt.max(self.snd_una + len as u64);
    }

    pub(super) fn on_ack(&mut self, now: SimTime, seg: &Segment, out: &mut TcpOut) {
        let ack = unwrap_seq(self.snd_una, seg.ack);
        let prior_in_flight = self.packets_out();
        let window_changed = seg.wnd != self.rwnd;
        self.rwnd = seg.wnd;
        if ack > self.snd_max {
            return; // acknowledges data never sent: ignore
        }
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.stats.bytes_acked += acked;
            self.backoff = 0;
            if let Some((probe, sent)) = self.rtt_probe {
                if ack >= probe {
                    self.rtt_sample(now - sent);
                    self.rtt_probe = None;
                }
            }
            match self.recover {
                Some(rec) if ack < rec => {
                    // NewReno partial ACK: retransmit the next hole, stay in recovery.
                    self.dupacks = 3;
                    self.retransmit_head(now, out);
                }
                Some(_) => {
                    self.recover = None;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh.max(1);
                }
                None if self.cfg.linux26_sender && !self.linux26_may_grow(prior_in_flight) => {
                    self.dupacks = 0;
                }
                None => {
                    self.dupacks = 0;
                    self.cwnd_stamp = now;
                    if self.cwnd < self.ssthresh {
                        self.cwnd += 1;
                    } else {
                        self.cwnd_cnt += 1;
                        if self.cwnd_cnt >= self.cwnd {
                            self.cwnd += 1;
                            self.cwnd_cnt = 0;
                        }
                    }
                }
            }
            self.rto_deadline = (self.snd_una < self.snd_nxt).then(|| now + self.rto);
            if self.cfg.linux26_sender {
                out.writable |= self.linux26_new_space(now);
            } else {
                // tcp_new_space: the send buffer follows cwnd.
                let want = (2 * self.cwnd as u64 * self.cfg.mss as u64)
                    .min(self.cfg.sndbuf_max as u64) as u32;
                self.sndbuf = self.sndbuf.max(want);
                out.writable = true;
            }
        } else if ack == self.snd_una
            && seg.len == 0
            && !window_changed
            && self.snd_una < self.snd_nxt
        {
            self.dupacks += 1;
            if self.dupacks == 3 && self.recover.is_none() {
                self.stats.fast_retransmits += 1;
                let flight = (self.in_flight() / self.cfg.mss as u64) as u32;
                self.ssthresh = (flight / 2).max(2);
                self.cwnd = self.ssthresh;
                self.recover = Some(self.snd_max);
                self.retransmit_head(now, out);
            }
        }
    }

    pub(super) fn rtt_sample(&mut self, r: Nanos) {
        // RFC 2988 with alpha 1/8, beta 1/4, K = 4; Linux min RTO 200 ms.
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Nanos(r.as_ns() / 2);
            }
            Some(s) => {
                let diff = s.as_ns().abs_diff(r.as_ns());
                self.rttvar = Nanos((3 * self.rttvar.as_ns() + diff) / 4);
                self.srtt = Some(Nanos((7 * s.as_ns() + r.as_ns()) / 8));
            }
        }
        let srtt = self.srtt.expect("set").as_ns();
        self.rto = Nanos(srtt + 4 * self.rttvar.as_ns()).max(self.cfg.rto_min);
    }

    // ------------------------------------------------------------ timers

    /// A timer may have expired at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut TcpOut) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.stats.delayed_acks += 1;
            // tcp_delack_timer: a delayed ACK that had to be sent on its own
            // ends interactive mode.
            self.pingpong = false;
            self.send_ack(now, out);
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.rto_deadline = None;
            if self.snd_una < self.snd_max {
                self.stats.timeouts += 1;
                let flight = ((self.snd_max - self.snd_una) / self.cfg.mss as u64) as u32;
                self.ssthresh = (flight / 2).max(2);
                self.cwnd = 1;
                self.cwnd_cnt = 0;
                self.recover = None;
                self.dupacks = 0;
                self.backoff += 1;
                self.rto = Nanos((self.rto.as_ns() * 2).min(120_000_000_000));
                self.snd_nxt = self.snd_una; // go back N
                self.rtt_probe = None;
                self.retransmit_head(now, out);
                self.try_send(now, out);
            }
        }
    }
}
