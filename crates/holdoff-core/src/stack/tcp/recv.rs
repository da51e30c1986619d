//! The receiving side: segments arriving, in-order and out-of-order data,
//! ACK decisions, and application reads. See the module doc of `stack::tcp`
//! for what is modelled.
//!
//! Units: sequence numbers and sizes [bytes], times [ns].

use super::{unwrap_seq, window_from_space, Segment, TcpEndpoint, TcpOut, GROW_MIN_LEN};
use crate::units::SimTime;

impl TcpEndpoint {
    // ------------------------------------------------------------ receiving

    /// A segment arrived from the peer.
    pub fn on_segment(&mut self, now: SimTime, seg: Segment, out: &mut TcpOut) {
        self.on_ack(now, &seg, out);
        if seg.len > 0 {
            self.on_data(now, &seg, out);
        }
        self.try_send(now, out);
    }

    /// The application reads up to `max` bytes; returns how many it got.
    pub fn app_read(&mut self, now: SimTime, max: u64, out: &mut TcpOut) -> u64 {
        let n = (self.rcv_queued as u64).min(max);
        if n == 0 {
            return 0;
        }
        self.rcv_queued -= n as u32;
        if self.linux_rules() {
            // Free each buffer once it has been read completely.
            let mut left = n as u32;
            while left > 0 {
                let head = self
                    .rcv_segs
                    .front_mut()
                    .expect("queued bytes have segments");
                let take = (*head).min(left);
                *head -= take;
                left -= take;
                if *head == 0 {
                    self.rcv_segs.pop_front();
                    self.rmem -= self.cfg.skb_truesize;
                }
            }
        }
        self.rcv_space_adjust(now);
        if self.linux26_read_acks() {
            self.send_ack(now, out);
            return n;
        }
        // tcp_cleanup_rbuf: announce a window that at least doubled.
        let now_wnd = self.rcv_adv_edge.saturating_sub(self.rcv_nxt);
        let new_wnd = self.adv_window() as u64;
        let clamp = if self.linux_rules() {
            self.window_clamp as u64
        } else {
            window_from_space(self.rcvbuf, self.cfg.adv_win_scale, self.cfg.mss) as u64
        };
        if 2 * now_wnd <= clamp && new_wnd >= 2 * now_wnd.max(1) {
            self.send_ack(now, out);
        }
        n
    }

    pub(super) fn on_data(&mut self, now: SimTime, seg: &Segment, out: &mut TcpOut) {
        let seq = unwrap_seq(self.rcv_nxt, seg.seq);
        // Room for the segment: payload against the free buffer, or (Linux
        // rules) the charged memory not yet above rcvbuf (tcp_data_queue).
        let room = if self.linux_rules() {
            // Inside the window already offered Linux makes room by
            // collapsing the queue (tcp_prune_queue); beyond it, only while
            // the charged memory is not above rcvbuf.
            self.rmem <= self.rcvbuf || seq + seg.len as u64 <= self.rcv_adv_edge
        } else {
            seg.len
                <= self
                    .rcvbuf
                    .saturating_sub(self.rcv_queued + self.ooo_bytes())
        };
        if seq == self.rcv_nxt {
            if !room {
                self.send_ack(now, out); // no room: drop, re-announce the window
                return;
            }
            self.rcv_nxt += seg.len as u64;
            self.rcv_queued += seg.len;
            self.stats.bytes_received += seg.len as u64;
            if self.linux_rules() {
                self.rmem += self.cfg.skb_truesize;
                self.rcv_segs.push_back(seg.len);
            }
            let had_ooo = !self.ooo.is_empty();
            // Pull in queued out-of-order data that is now contiguous.
            while let Some(&(s, l)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(0);
                let end = s + l as u64;
                if end > self.rcv_nxt {
                    let add = (end - self.rcv_nxt) as u32;
                    self.rcv_nxt = end;
                    self.rcv_queued += add;
                    self.stats.bytes_received += add as u64;
                    if self.linux_rules() {
                        self.rcv_segs.push_back(add);
                    }
                } else if self.linux_rules() {
                    self.rmem -= self.cfg.skb_truesize; // wholly duplicate: freed
                }
            }
            if self.linux_rules() && seg.len >= GROW_MIN_LEN {
                self.grow_window(seg.len);
            }
            self.rcv_rtt_measure(now);
            out.readable = true;
            self.last_data_rcv = Some(now);
            let full_since_ack = self.rcv_nxt - self.rcv_wup > self.cfg.mss as u64;
            let quick = self.quickack > 0 && !self.pingpong;
            if self.linux26_eaten(had_ooo) && !quick {
                // Copied to the reader: a delayed ACK, sent by the read.
                if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.cfg.delack);
                }
            } else if had_ooo || quick || full_since_ack {
                if quick {
                    self.quickack -= 1;
                }
                self.send_ack(now, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.cfg.delack);
            }
        } else if seq > self.rcv_nxt {
            // Out of order: keep it if there is room; duplicate ACK at once.
            if room && !self.ooo.iter().any(|&(s, _)| s == seq) {
                let pos = self.ooo.partition_point(|&(s, _)| s < seq);
                self.ooo.insert(pos, (seq, seg.len));
                if self.linux_rules() {
                    self.rmem += self.cfg.skb_truesize;
                }
            }
            self.send_ack(now, out);
        } else {
            // Old data (a retransmission we already have): ACK at once.
            self.send_ack(now, out);
        }
    }
}
