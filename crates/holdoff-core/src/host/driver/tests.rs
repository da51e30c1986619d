//! Unit tests of the driver model (`host::driver`).

use super::*;

fn cfg(defer: u32, gro_ns: u64, suspend_ns: u64) -> NapiConfig {
    NapiConfig {
        defer_hard_irqs: defer,
        gro_flush_timeout_ns: gro_ns,
        irq_suspend_timeout_ns: suspend_ns,
        ..NapiConfig::default()
    }
}

fn defer_t(ns: u64) -> Option<NapiTimerStart> {
    Some(NapiTimerStart {
        kind: NapiTimerKind::Defer,
        after: Nanos(ns),
    })
}

fn suspend_t(ns: u64) -> Option<NapiTimerStart> {
    Some(NapiTimerStart {
        kind: NapiTimerKind::Suspend,
        after: Nanos(ns),
    })
}

#[test]
fn napi_complete_done_follows_the_6_13_pseudo_code() {
    const MS20: u64 = 20_000_000;
    // (`napi_complete_done` line followed, config (defer, gro ns, suspend ns), input,
    //  expected (unmask, timer, defer_count after, completed)).
    #[allow(clippy::type_complexity)]
        let rows: [(&str, NapiConfig, CompleteIn, (bool, Option<NapiTimerStart>, u32, bool)); 11] = [
            (
                "if n is owned by netpoll or busy-poll: return false",
                cfg(2, 10_000, MS20),
                CompleteIn { work_done: 3, defer_count: 1, busy_polled: true, prefer_busy_poll: true, ..Default::default() },
                (false, None, 1, false),
            ),
            (
                "both default to 0: NIC hard irqs rearmed as before",
                cfg(0, 0, 0),
                CompleteIn { work_done: 5, ..Default::default() },
                (true, None, 0, true),
            ),
            (
                "n.defer_count = napi_defer_hard_irqs (re-armed after real work), then -= 1; timeout = gro_flush_timeout; ret = false",
                cfg(3, 50_000, 0),
                CompleteIn { work_done: 1, defer_count: 0, ..Default::default() },
                (false, defer_t(50_000), 2, true),
            ),
            (
                "empty poll: no re-arm; defer_count -= 1, timer, IRQ stays masked",
                cfg(3, 50_000, 0),
                CompleteIn { work_done: 0, defer_count: 1, ..Default::default() },
                (false, defer_t(50_000), 0, true),
            ),
            (
                "IRQ re-enabled after N consecutive empty completions (count 0)",
                cfg(3, 50_000, 0),
                CompleteIn { work_done: 0, defer_count: 0, ..Default::default() },
                (true, None, 0, true),
            ),
            (
                "With T = 0 deferral does nothing",
                cfg(3, 0, 0),
                CompleteIn { work_done: 4, ..Default::default() },
                (true, None, 2, true),
            ),
            (
                "if prefer_busy_poll is set on n: timeout = irq_suspend_timeout; if timeout: ret = false",
                cfg(2, 10_000, MS20),
                CompleteIn { work_done: 1, defer_count: 0, prefer_busy_poll: true, ..Default::default() },
                (false, suspend_t(MS20), 2, true),
            ),
            (
                "prefer_busy_poll without irq_suspend_timeout: 'if ret and n.defer_count > 0' defer path",
                cfg(2, 10_000, 0),
                CompleteIn { work_done: 0, defer_count: 2, prefer_busy_poll: true, ..Default::default() },
                (false, defer_t(10_000), 1, true),
            ),
            (
                "prefer_busy_poll, no suspend, no deferral: return true (unmask)",
                cfg(0, 10_000, 0),
                CompleteIn { work_done: 0, prefer_busy_poll: true, ..Default::default() },
                (true, None, 0, true),
            ),
            (
                "if GRO holds packets: timeout = gro_flush_timeout (IRQ still unmasked without deferral)",
                cfg(0, 10_000, 0),
                CompleteIn { work_done: 2, gro_held: true, ..Default::default() },
                (true, defer_t(10_000), 0, true),
            ),
            (
                "irq_suspend_timeout alone does nothing without prefer_busy_poll",
                cfg(0, 0, MS20),
                CompleteIn { work_done: 2, ..Default::default() },
                (true, None, 0, true),
            ),
        ];
    for (line, c, inp, (unmask, timer, count, completed)) in rows {
        let got = napi_complete_done(&c, inp);
        assert_eq!(
            got,
            CompleteOut {
                unmask,
                timer,
                defer_count: count,
                completed
            },
            "{line}"
        );
    }
}

#[test]
fn busy_poll_stop_follows_the_6_13_code() {
    const MS20: u64 = 20_000_000;
    // (`busy_poll_stop` clause, config, prefer, defer_count in,
    //  expected (timer, skip_schedule, defer_count out)).
    #[allow(clippy::type_complexity)]
        let rows: [(&str, NapiConfig, bool, u32, (Option<NapiTimerStart>, bool, u32)); 5] = [
            (
                "only with prefer_busy_poll: otherwise reschedule normally",
                cfg(2, 10_000, MS20),
                false,
                1,
                (None, false, 1),
            ),
            (
                "timeout = irq_suspend_timeout; timeout != 0 -> start the hrtimer, skip re-scheduling",
                cfg(2, 10_000, MS20),
                true,
                1,
                (suspend_t(MS20), true, 1),
            ),
            (
                "if 0: defer_count = napi_defer_hard_irqs and, if non-zero, timeout = gro_flush_timeout",
                cfg(2, 10_000, 0),
                true,
                0,
                (defer_t(10_000), true, 2),
            ),
            (
                "defer_count non-zero but gro_flush_timeout 0: timeout 0 -> reschedule normally",
                cfg(2, 0, 0),
                true,
                0,
                (None, false, 2),
            ),
            (
                "napi_defer_hard_irqs 0: no timer, reschedule normally",
                cfg(0, 10_000, 0),
                true,
                3,
                (None, false, 0),
            ),
        ];
    for (line, c, prefer, count, (timer, skip, count_out)) in rows {
        let got = busy_poll_stop(&c, prefer, count);
        assert_eq!(
            got,
            BusyPollStopOut {
                timer,
                skip_schedule: skip,
                defer_count: count_out
            },
            "{line}"
        );
    }
}

#[test]
fn epoll_suspends_on_events_and_resumes_before_sleeping() {
    const MS20: u64 = 20_000_000;
    // (commit 8a6de2627fd3 IRQ-suspension sentence, config, prefer, events found, expected)
    let rows: [(&str, NapiConfig, bool, bool, EpollIrq); 5] = [
        (
            "events reported with prefer_busy_poll: napi_suspend_irqs re-arms the timer",
            cfg(0, 0, MS20),
            true,
            true,
            EpollIrq::Suspend(Nanos(MS20)),
        ),
        (
            "no events and ep_poll would sleep: napi_resume_irqs schedules the NAPI",
            cfg(0, 0, MS20),
            true,
            false,
            EpollIrq::Resume,
        ),
        (
            "without prefer_busy_poll epoll leaves IRQs alone",
            cfg(0, 0, MS20),
            false,
            true,
            EpollIrq::Nothing,
        ),
        (
            "irq_suspend_timeout 0: suspend does nothing",
            cfg(2, 10_000, 0),
            true,
            true,
            EpollIrq::Nothing,
        ),
        (
            "irq_suspend_timeout 0: resume does nothing",
            cfg(2, 10_000, 0),
            true,
            false,
            EpollIrq::Nothing,
        ),
    ];
    for (line, c, prefer, found, want) in rows {
        assert_eq!(epoll_irq_action(&c, prefer, found), want, "{line}");
    }
}
