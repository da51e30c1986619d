//! The receive window: the free buffer space and the window offered from
//! it (Linux `tcp_space`, `__tcp_select_window`, `tcp_grow_window`), and the
//! buffer-to-window rules shared by both sides. See the module doc of
//! `stack::tcp` for what is modelled.
//!
//! Units: sizes [bytes].

use super::{TcpConfig, TcpEndpoint};

impl TcpEndpoint {
    pub(super) fn linux_rules(&self) -> bool {
        self.cfg.skb_truesize > 0
    }

    /// `tcp_space`: the window the free receive memory could back [bytes].
    pub(super) fn tcp_space(&self) -> u32 {
        let used = if self.linux_rules() {
            self.rmem
        } else {
            self.rcv_queued + self.ooo_bytes()
        };
        win_from_space(self.rcvbuf.saturating_sub(used), self.cfg.adv_win_scale)
    }

    /// The window to offer now, before the never-shrink rule.
    pub(super) fn adv_window(&self) -> u32 {
        let mss = self.cfg.mss;
        let free = self.tcp_space();
        if !self.linux_rules() {
            return (free / mss) * mss;
        }
        // __tcp_select_window
        let full = self
            .window_clamp
            .min(win_from_space(self.rcvbuf, self.cfg.adv_win_scale));
        let mss = mss.min(full);
        if free < full / 2 && free < mss {
            return 0;
        }
        let free = free.min(self.rcv_ssthresh);
        let w = self.rcv_wnd;
        if w + mss <= free || w > free {
            (free / mss) * mss
        } else {
            w
        }
    }

    /// `tcp_grow_window` for an in-order segment of `len` payload bytes.
    pub(super) fn grow_window(&mut self, len: u32) {
        let ts = self.cfg.skb_truesize;
        let scale = self.cfg.adv_win_scale;
        if self.rcv_ssthresh >= self.window_clamp || self.rcv_ssthresh >= self.tcp_space() {
            return;
        }
        let incr = if win_from_space(ts, scale) <= len {
            2 * self.cfg.mss
        } else {
            // __tcp_grow_window: the window may grow past a fraction of
            // the full space only if a halved truesize still fits the payload.
            let mut truesize = win_from_space(ts, scale) / 2;
            let mut window = win_from_space(self.rcvbuf, scale) / 2;
            let mut incr = 0;
            while self.rcv_ssthresh <= window {
                if truesize <= len {
                    incr = 2 * self.cfg.mss;
                    break;
                }
                truesize >>= 1;
                window >>= 1;
            }
            incr
        };
        if incr > 0 {
            self.rcv_ssthresh = (self.rcv_ssthresh + incr).min(self.window_clamp);
            // tp->ack.quick |= 1
            self.quickack = self.quickack.max(1);
        }
    }

    pub(super) fn ooo_bytes(&self) -> u32 {
        self.ooo.iter().map(|x| x.1).sum()
    }
}

/// Advertised window for `space` free bytes: space - space/2^scale, rounded
/// down to whole MSS (Linux `tcp_win_from_space`, `__tcp_select_window`).
pub fn window_from_space(space: u32, adv_win_scale: u32, mss: u32) -> u32 {
    (win_from_space(space, adv_win_scale) / mss) * mss
}

/// Linux `tcp_win_from_space`: the part of `space` bytes of buffer memory
/// that may be offered as window (the rest is overhead) [bytes].
pub fn win_from_space(space: u32, adv_win_scale: u32) -> u32 {
    space - (space >> adv_win_scale)
}

/// The window of the first segment (the SYN's): with the Linux rules,
/// `tcp_select_initial_window` offers at most 4 x MSS (RFC 1414 note in
/// 2.6.6; 3 x or 2 x for larger MSS); without them the whole window.
pub fn initial_rcv_wnd(cfg: &TcpConfig) -> u32 {
    let full = window_from_space(cfg.rcvbuf, cfg.adv_win_scale, cfg.mss);
    if cfg.skb_truesize == 0 {
        return full;
    }
    let init_segs = match cfg.mss {
        m if m > 1460 * 3 => 2,
        m if m > 1460 => 3,
        _ => 4,
    };
    full.min(init_segs * cfg.mss)
}

/// `tcp_init_buffer_space` with `tcp_app_win` 31: the clamp is the full
/// space, less one MSS reserved when the full space would leave none [bytes].
pub fn linux_window_clamp(cfg: &TcpConfig) -> u32 {
    let maxwin = win_from_space(cfg.rcvbuf, cfg.adv_win_scale);
    if maxwin > 2 * cfg.mss {
        maxwin.saturating_sub(cfg.mss).max(2 * cfg.mss)
    } else {
        maxwin
    }
}
