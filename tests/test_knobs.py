"""Driver knobs <-> registers (holdoff.knobs), table-driven both ways.

Every expected register value is derived in the row's comment from the
driver rule it tests (the C arithmetic, truncating), with the source named
in holdoff/knobs/ and docs/knobs.md; none is copied from a run.
"""

from __future__ import annotations

from typing import Any

import pytest

from holdoff import knobs
from holdoff.knobs import KnobError, decode, encode

CNT_IGNR = 0x8000_0000

# (driver, chip, settings, register, value, interval_ns, mode)
KNOB_TO_REGISTER: list[tuple[str, str | None, dict[str, int], str, int, int | None, str]] = [
    # e1000_set_coalesce: itr = 1000000/62 = 16129; ITR = 1e9/(16129*256) = 242 (61952 ns).
    ("linux-e1000", None, {"rx-usecs": 62}, "ITR", 242, 61_952, "static"),
    # rx-usecs 3 is itr_setting 3 (dynamic conservative) with itr 20000: ITR 1e9/(20000*256) = 195.
    ("linux-e1000", None, {"rx-usecs": 3}, "ITR", 195, 49_920, "adaptive"),
    ("linux-e1000", None, {"rx-usecs": 1}, "ITR", 195, 49_920, "adaptive"),
    # rx-usecs 0: itr_setting 0, the driver writes ITR = 0 (no throttle).
    ("linux-e1000", None, {"rx-usecs": 0}, "ITR", 0, 0, "off"),
    # rx-usecs 4: itr = 4, ITR = 1e9/(4*256) = 976562, 16 bits kept: 976562 - 14*65536 = 59058.
    ("linux-e1000", None, {"rx-usecs": 4}, "ITR", 59_058, 59_058 * 256, "adaptive"),
    # rx-usecs 10000: itr 100, ITR 1e9/25600 = 39062.
    ("linux-e1000", None, {"rx-usecs": 10_000}, "ITR", 39_062, 39_062 * 256, "static"),
    # InterruptThrottleRate=8000: static, ITR 1e9/(8000*256) = 488.
    ("linux-e1000", None, {"InterruptThrottleRate": 8000}, "ITR", 488, 124_928, "static"),
    # e1000 validation: 50 is invalid -> default 3 -> itr_setting 3 & ~3 = 0: throttle off.
    ("linux-e1000", None, {"InterruptThrottleRate": 50}, "ITR", 0, 0, "off"),
    # e1000e falls back to mode 3 instead; the 82574 in MSI-X mode takes it in EITR(n).
    ("linux-e1000e", None, {"InterruptThrottleRate": 50}, "EITR", 195, 49_920, "adaptive"),
    ("linux-e1000e", None, {"rx-usecs": 100}, "EITR", 390, 99_840, "static"),
    # e1000 5.x: unset/1 is the watchdog's dynamic ITR, which holds 8000/s
    # (1e9/(8000*256) = 488) until its first run; =0 is off; =20000 static
    # 1e9/(20000*256) = 195; 50 is outside 100..100000 -> the default 8000.
    ("linux-e1000-5x", None, {}, "ITR", 488, 124_928, "adaptive"),
    ("linux-e1000-5x", None, {"InterruptThrottleRate": 0}, "ITR", 0, 0, "off"),
    ("linux-e1000-5x", None, {"InterruptThrottleRate": 20_000}, "ITR", 195, 49_920, "static"),
    ("linux-e1000-5x", None, {"InterruptThrottleRate": 50}, "ITR", 488, 124_928, "static"),
    # igb_set_coalesce: rx_itr_setting = 50 << 2 = 200; igb_write_itr: 200 & 0x7FFC = 200, 50 us.
    ("linux-igb", None, {"rx-usecs": 50}, "EITR", 50, 50_000, "static"),
    # rx-usecs 1: adaptive; the first interrupt writes IGB_START_ITR 648 = 162 us.
    ("linux-igb", None, {"rx-usecs": 1}, "EITR", 162, 162_000, "adaptive"),
    # rx-usecs 0: itr_val 0 is written as 4 = 1 us, not "off".
    ("linux-igb", None, {"rx-usecs": 0}, "EITR", 1, 1_000, "static"),
    # rx-usecs 10000: 40000 & 0x7FFC = 7232 -> 1808 us (the 13-bit field wraps).
    ("linux-igb", "i350", {"rx-usecs": 10_000}, "EITR", 1808, 1_808_000, "static"),
    # ixgbe: 63 << 2 = 252, & 0xFF8 = 248, a 256 ns count of which the 82599 holds bits
    # 11:3: 31 steps of 2.048 us = 248 x 256 ns = 63 488 ns.
    ("linux-ixgbe", None, {"rx-usecs": 63}, "EITR", 31, 63_488, "static"),
    ("linux-ixgbe", "x550", {"rx-usecs": 84}, "EITR", 42, 86_016, "static"),
    # 82598: the same 248 counts 256 ns: 63488 ns.
    ("linux-ixgbe", "82598", {"rx-usecs": 63}, "EITR", 248, 63_488, "static"),
    ("linux-ixgbe", None, {"rx-usecs": 0}, "EITR", 0, 0, "off"),
    # ixgbe rx-usecs 1: adaptive, starting at IXGBE_20K_ITR 200 = 25 steps = 51 200 ns.
    ("linux-ixgbe", None, {"rx-usecs": 1}, "EITR", 25, 51_200, "adaptive"),
    # net_dim RX EQE profile index 1 = 8 us at start; off: the static period.
    ("linux-dim", None, {}, "CQ period", 8, 8_000, "adaptive"),
    ("linux-dim", None, {"adaptive-rx": 0, "rx-usecs": 62}, "CQ period", 62, 62_000, "static"),
    # FreeBSD em, enable_aim 0: EM_INTS_TO_ITR(8000) = 488; 82546 has ITR.
    ("freebsd-em", "82546", {"enable_aim": 0}, "ITR", 488, 124_928, "static"),
    (
        "freebsd-em",
        "82546",
        {"enable_aim": 0, "max_interrupt_rate": 20_000},
        "ITR",
        195,
        49_920,
        "static",
    ),
    # FreeBSD igb: IGB_INTS_TO_EITR(20000) = (50 << 2) & 0x7FFC = 200 -> 50 us.
    (
        "freebsd-igb",
        None,
        {"enable_aim": 0, "max_interrupt_rate": 20_000},
        "EITR",
        50,
        50_000,
        "static",
    ),
    # 70000/s: 1e6/70000 = 14 -> 56 raw -> 14 us.
    (
        "freebsd-igb",
        None,
        {"enable_aim": 0, "max_interrupt_rate": 70_000},
        "EITR",
        14,
        14_000,
        "static",
    ),
    ("freebsd-igb", None, {"enable_aim": 2}, "EITR", 125, 125_000, "adaptive"),
    # OpenBSD em: DEFAULT_ITR = 1e9/(8000*256) = 488 into the legacy ITR on every MAC.
    ("openbsd-em", None, {}, "ITR", 488, 124_928, "static"),
    ("openbsd-em", "82574", {"EM_TIDV": 150}, "TIDV", 150, 153_600, "static"),
]


@pytest.mark.parametrize(
    ("driver", "chip", "settings", "register", "value", "interval_ns", "mode"), KNOB_TO_REGISTER
)
def test_knob_to_register(
    driver: str,
    chip: str | None,
    settings: dict[str, int],
    register: str,
    value: int,
    interval_ns: int | None,
    mode: str,
) -> None:
    d = decode(driver, settings, chip)
    reg = next(r for r in d.registers if r.name == register)
    assert (reg.value, reg.interval_ns, d.mode) == (value, interval_ns, mode)


def test_igb_eitr_word_carries_cnt_ignr() -> None:
    # igb_write_itr: raw 200 | E1000_EITR_CNT_IGNR (bit 31) on 82576 and later.
    reg = decode("linux-igb", {"rx-usecs": 50}).registers[0]
    assert reg.word == 200 | CNT_IGNR


def test_adaptive_ranges_and_rates() -> None:
    # e1000 mode 3: 20000/s (195 = 49.92 us) .. 4000/s (976 = 249.856 us); mode 1 adds 70000/s (55).
    d3 = decode("linux-e1000", {"rx-usecs": 3})
    assert d3.throttle_ns == (195 * 256, 976 * 256)
    assert round(d3.max_rate_per_s or 0) == 20_032
    d1 = decode("linux-e1000", {"rx-usecs": 1})
    assert d1.throttle_ns == (55 * 256, 976 * 256)
    # igb mode 1: IGB_70K_ITR 56 (14 us) .. IGB_4K_ITR 980 (245 us); mode 3 floors at 196 (49 us).
    assert decode("linux-igb", {"rx-usecs": 1}).throttle_ns == (14_000, 245_000)
    assert decode("linux-igb", {"rx-usecs": 3}).throttle_ns == (49_000, 245_000)
    # FreeBSD igb, enable_aim 2: 70K (14 us) .. 4K (250 us).
    assert decode("freebsd-igb", {"enable_aim": 2}).throttle_ns == (14_000, 250_000)
    # ixgbe adaptive (rx-usecs 1): containers within 10 .. 126 us, written as
    # usecs << 2 = 40 .. 504 and held by the 82599 in 2.048 us steps (bits
    # 11:3): 5 and 63 steps, 10.24 .. 129.024 us; at most 1 s / 10.24 us =
    # 97 656 interrupts/s per vector. It was reported as "no throttle".
    dx = decode("linux-ixgbe", {"rx-usecs": 1})
    assert dx.mode == "adaptive"
    assert dx.throttle_ns == (5 * 2048, 63 * 2048)
    assert round(dx.max_rate_per_s or 0) == 97_656


# Special values: which settings select an adaptive mode instead of a time.
ADAPTIVE_VALUES = [
    ("linux-e1000", "rx-usecs", 1),
    ("linux-e1000", "rx-usecs", 3),
    ("linux-e1000", "rx-usecs", 4),
    ("linux-e1000e", "InterruptThrottleRate", 1),
    ("linux-igb", "rx-usecs", 1),
    ("linux-igb", "rx-usecs", 3),
    ("linux-ixgbe", "rx-usecs", 1),
    ("freebsd-em", "enable_aim", 1),
    ("freebsd-igb", "enable_aim", 2),
]


@pytest.mark.parametrize(("driver", "key", "value"), ADAPTIVE_VALUES)
def test_special_values_select_adaptive_modes(driver: str, key: str, value: int) -> None:
    d = decode(driver, {key: value})
    assert d.mode == "adaptive"
    assert any(n.kind == "adaptive" and n.key == key for n in d.notes)


# (driver, chip, registers, expected knobs): registers -> knob, then back.
REGISTER_TO_KNOB: list[tuple[str, str | None, dict[str, int], dict[str, int]]] = [
    # ITR 242 is reached by rx-usecs 62 only (61 -> 238, 63 -> 246).
    ("linux-e1000", None, {"ITR": 242}, {"rx-usecs": 62}),
    ("linux-e1000", None, {"ITR": 0}, {"rx-usecs": 0}),
    (
        "linux-e1000",
        None,
        {"ITR": 488, "RDTR": 0, "TADV": 32},
        {"rx-usecs": 125, "RxIntDelay": 0, "TxAbsIntDelay": 32},
    ),
    # Rates 7989..8004 all give ITR 488; the roundest is 8000.
    ("freebsd-em", "82546", {"ITR": 488}, {"enable_aim": 0, "max_interrupt_rate": 8000}),
    ("openbsd-em", None, {"ITR": 488, "TIDV": 150}, {"MAX_INTS_PER_SEC": 8000, "EM_TIDV": 150}),
    # 1e6/r = 50 for r in 19608..20000.
    ("freebsd-igb", None, {"EITR_us": 50}, {"enable_aim": 0, "max_interrupt_rate": 20_000}),
    ("linux-igb", None, {"EITR_us": 50}, {"rx-usecs": 50}),
    ("linux-dim", None, {"EITR_us": 62}, {"adaptive-rx": 0, "rx-usecs": 62}),
]


@pytest.mark.parametrize(("driver", "chip", "registers", "expected"), REGISTER_TO_KNOB)
def test_register_to_knob_to_register(
    driver: str, chip: str | None, registers: dict[str, int], expected: dict[str, int]
) -> None:
    settings = encode(driver, registers, chip)
    assert settings == expected
    d = decode(driver, settings, chip)
    back = {r.name: r.value for r in d.registers}
    for name, value in registers.items():
        if name == "EITR_us":
            assert d.throttle_ns == (value * 1000, value * 1000)
        else:
            assert back[name] == value


def test_unreachable_registers_round_to_the_nearest_knob() -> None:
    # igb: rx-usecs 4..9 are refused, so EITR 5 us comes back as the nearest allowed, 10 us.
    assert encode("linux-igb", {"EITR_us": 5}) == {"rx-usecs": 10}
    # ixgbe takes rx-usecs in even steps: 63 us is not reachable, 62 is (held as 31
    # steps of 2.048 us = 63 488 ns).
    assert encode("linux-ixgbe", {"EITR_us": 63}) == {"rx-usecs": 62}
    assert decode("linux-ixgbe", {"rx-usecs": 62}).throttle_ns == (63_488, 63_488)
    # e1000: ITR 243 is between rx-usecs 62 (242) and 63 (246).
    assert encode("linux-e1000", {"ITR": 243}) == {"rx-usecs": 62}


# (rx-usecs, its mode, its ITR, the knob read back from that ITR, that knob's ITR).
# e1000_set_coalesce: rx-usecs u > 4 sets itr = 1000000 / u and ITR = 1e9 / (itr x 256),
# both truncating; 0 writes ITR 0; 1 and 3 select a dynamic mode starting at
# 20000/s; 4 sets itr = 4, whose 1e9 / 1024 = 976562 keeps its low 16 bits.
E1000_ROUND_TRIP: list[tuple[int, str, int, int, int]] = [
    # Off: ITR 0 comes only from rx-usecs 0, and goes back to it.
    (0, "off", 0, 0, 0),
    # Dynamic: the register holds the start value 1e9 / (20000 x 256) = 195, which the
    # static rx-usecs 50 (itr 20000) also writes; the register cannot carry the mode,
    # so the knob read back is that static one, with the same ITR.
    (1, "adaptive", 195, 50, 195),
    (3, "adaptive", 195, 50, 195),
    # rx-usecs 4: 976562 - 14 x 65536 = 59058 (15.1 ms), above the largest ITR a
    # static knob reaches (rx-usecs 10000: itr 100, 1e9 / 25600 = 39062): the knob read
    # back is that nearest one, so this register value does not survive the round trip.
    (4, "adaptive", 59_058, 10_000, 39_062),
    # Static: itr = 1e6 / u, ITR = 1e9 / (itr x 256); u is the only knob reaching each
    # ITR but the last, which u = 9901..10000 (itr 100) all reach: the roundest is given.
    (10, "static", 39, 10, 39),  # itr 100000 -> 39.06
    (62, "static", 242, 62, 242),  # itr 16129 -> 242.2
    (100, "static", 390, 100, 390),  # itr 10000 -> 390.6
    (125, "static", 488, 125, 488),  # itr 8000 -> 488.3
    (333, "static", 1300, 333, 1300),  # itr 3003 -> 1300.7
    (1000, "static", 3906, 1000, 3906),  # itr 1000 -> 3906.25
    (10_000, "static", 39_062, 10_000, 39_062),  # itr 100 -> 39062.5
]


@pytest.mark.parametrize(("usecs", "mode", "itr", "back_usecs", "back_itr"), E1000_ROUND_TRIP)
def test_e1000_knob_register_knob_round_trip(
    usecs: int, mode: str, itr: int, back_usecs: int, back_itr: int
) -> None:
    # rx-usecs -> ITR -> rx-usecs -> ITR, every row asserting each step.
    d = decode("linux-e1000", {"rx-usecs": usecs})
    assert (d.mode, d.registers[0].value) == (mode, itr)
    back = encode("linux-e1000", {"ITR": itr})
    assert back == {"rx-usecs": back_usecs}
    again = decode("linux-e1000", back)
    assert again.registers[0].value == back_itr
    # The mode a register reading gives: off for 0, otherwise a static time.
    assert again.mode == ("off" if itr == 0 else "static")


@pytest.mark.parametrize("usecs", [0, 10, 50, 62, 250, 8191])
def test_igb_knob_register_knob_round_trip(usecs: int) -> None:
    us = decode("linux-igb", {"rx-usecs": usecs}).registers[0].value
    assert decode("linux-igb", encode("linux-igb", {"EITR_us": us})).registers[0].value == us


def test_freebsd_delay_sysctls_are_written_as_ticks_at_init() -> None:
    # em_initialize_*_unit writes the us value into the 1.024-us register: 66 -> 66 ticks;
    # a run-time write converts: EM_USECS_TO_TICKS(66) = (66000 + 512) / 1024 = 64.
    d = decode("freebsd-em", {"tx_int_delay": 66}, "82546")
    tidv = next(r for r in d.registers if r.name == "TIDV")
    assert (tidv.value, tidv.interval_ns) == (66, 66 * 1024)
    assert knobs.em_usecs_to_ticks(66) == 64
    assert knobs.em_ticks_to_usecs(64) == 66
    assert any(n.kind == "rounded" and "64 ticks" in n.message for n in d.notes)


def test_registers_that_do_not_act_are_named() -> None:
    # OpenBSD em on an i210: no TIDV/TADV registers and no IDE bit.
    d = decode("openbsd-em", {"EM_TIDV": 150, "EM_TADV": 150})
    tidv = next(r for r in d.registers if r.name == "TIDV")
    assert not tidv.acts and "no TIDV" in tidv.note
    assert d.tx_delay_ns == 0
    # The same on an 82574 (IDE, INTx/MSI in em(4)): TADV 150 bounds the TX delay.
    d2 = decode("openbsd-em", {"EM_TIDV": 150, "EM_TADV": 150}, "82574")
    assert d2.tx_delay_ns == 150 * 1024
    # e1000e on the 82574 runs MSI-X: the delay timers are bypassed.
    d3 = decode("linux-e1000e", {"TxIntDelay": 64})
    assert not next(r for r in d3.registers if r.name == "TIDV").acts


def test_scenario_tables() -> None:
    assert decode("linux-e1000", {"rx-usecs": 62}).scenario == {
        "chip": "82546",
        "moderation": {
            "kind": "e1000-itr",
            "driver": "e1000",
            # 1000000 // 62: the same ITR (242) through the parameter path.
            "interrupt_throttle_rate": 16_129,
            "rx_int_delay": 0,
            "rx_abs_int_delay": 8,
            "tx_int_delay": 8,
            "tx_abs_int_delay": 32,
        },
        "set_ide": True,
    }
    assert decode("linux-igb", {"rx-usecs": 3}).scenario == {
        "chip": "i210",
        "moderation": {"kind": "igb", "rx_usecs": 3},
    }
    scen = decode("linux-igb", {"gro_flush_timeout": 20_000, "napi_defer_hard_irqs": 2}).scenario
    assert scen is not None
    assert scen["napi"] == {"defer_hard_irqs": 2, "gro_flush_timeout_ns": 20_000}
    assert decode("freebsd-igb", {"enable_aim": 2}).scenario == {
        "chip": "i210",
        "moderation": {"kind": "freebsd-aim", "enable_aim": 2, "max_interrupt_rate": 8000},
    }
    # The 10 GbE presets and the ixgbe kind; the 82598 has no preset.
    assert decode("linux-ixgbe", {}).scenario == {
        "chip": "82599",
        "moderation": {"kind": "ixgbe", "rx_usecs": 1},
    }
    assert decode("linux-ixgbe", {"rx-usecs": 84}, "x540").scenario == {
        "chip": "x540",
        "moderation": {"kind": "ixgbe", "rx_usecs": 84},
    }
    ix = decode("linux-ixgbe", {}, "82598")
    assert ix.scenario is None and "82598" in ix.scenario_note


def test_commands() -> None:
    assert knobs.commands(decode("linux-igb", {"rx-usecs": 62})) == ["ethtool -C eth0 rx-usecs 62"]
    assert knobs.commands(decode("linux-dim", {"adaptive-rx": 0, "rx-usecs": 62}), "enp1s0") == [
        "ethtool -C enp1s0 adaptive-rx off rx-usecs 62"
    ]
    assert knobs.commands(decode("freebsd-igb", {"enable_aim": 2})) == [
        "sysctl dev.igb.0.enable_aim=2"
    ]
    em = knobs.commands(decode("freebsd-em", {"enable_aim": 0, "max_interrupt_rate": 16_000}))
    assert em[:2] == [
        "sysctl dev.em.0.enable_aim=0",
        "echo 'hw.em.max_interrupt_rate=\"16000\"' >> /boot/loader.conf  # read at boot: reboot",
    ]
    e1000 = knobs.commands(decode("linux-e1000e", {"InterruptThrottleRate": 8000, "TxIntDelay": 0}))
    assert (
        e1000[0] == "echo 'options e1000e InterruptThrottleRate=8000 TxIntDelay=0' > "
        "/etc/modprobe.d/e1000e.conf"
    )
    obsd = knobs.commands(decode("openbsd-em", {"EM_TIDV": 150}))
    assert "#define EM_TIDV 150" in obsd and "rebuild" in obsd[0]
    napi = knobs.commands(decode("linux-igb", {"gro_flush_timeout": 20_000}))
    assert "echo 20000 > /sys/class/net/eth0/gro_flush_timeout" in napi


def test_ring_and_tsq_warnings() -> None:
    # 256 x 84 B x 8 ns = 172032 ns to fill the ring with 64-byte frames at 1 Gb/s.
    assert knobs.wire_ns(256, 84, 1000) == 172_032
    (rx, tx) = knobs.check(decode("linux-igb", {"rx-usecs": 200}))
    assert "200.0 us" in rx.message and "172.0 us" in rx.message and "297 frames" in rx.message
    assert tx.message.startswith("TX: completions can wait 200.0 us")
    assert knobs.check(decode("linux-igb", {"rx-usecs": 150})) == []
    # Seed 004's refill arithmetic: TADV 150 (153.6 us) keeps the 256-descriptor ring,
    # 220 (225.3 us) runs it dry.
    assert knobs.check(decode("openbsd-em", {"EM_TIDV": 150, "EM_TADV": 150}, "82574")) == []
    (w,) = knobs.check(decode("openbsd-em", {"EM_TIDV": 220, "EM_TADV": 220}, "82574"))
    assert "225.3 us" in w.message and "TX ring" in w.message
    # TSQ: ITR for 100/s is 39062 x 256 ns = 10.0 ms, more than 1 MiB at 1 Gb/s (8388.6 us).
    ws = knobs.check(decode("linux-e1000", {"InterruptThrottleRate": 100}))
    assert any("8388.6 us" in w.message and "tcp_limit_output_bytes" in w.message for w in ws)
    # A larger ring (ethtool -G rx 4096) removes the RX warning of 200 us.
    assert not any(
        w.message.startswith("RX")
        for w in knobs.check(decode("linux-igb", {"rx-usecs": 200}), rx_ring=4096)
    )


BAD_KNOBS: list[tuple[str, dict[str, int], str | None, str]] = [
    ("linux-e1000", {"rx-usecs": 7}, None, "rx-usecs"),
    ("linux-e1000", {"rx-usecs": 2}, None, "rx-usecs"),
    ("linux-igb", {"rx-usecs": 5}, None, "rx-usecs"),
    ("linux-igb", {"rx-usecs": 10_001}, None, "rx-usecs"),
    ("linux-ixgbe", {"rx-usecs": 1023}, None, "rx-usecs"),
    # RX/TX vectors: ixgbe_set_coalesce refuses any non-zero tx-usecs (EINVAL).
    ("linux-ixgbe", {"rx-usecs": 84, "tx-usecs": 84}, None, "tx-usecs"),
    ("linux-ixgbe", {"tx-usecs": 1}, None, "tx-usecs"),
    ("linux-igb", {"InterruptThrottleRate": 3}, None, "InterruptThrottleRate"),
    ("freebsd-em", {"tx_int_delay": 70_000}, None, "tx_int_delay"),
    ("openbsd-em", {"MAX_INTS_PER_SEC": 10}, None, "MAX_INTS_PER_SEC"),
    ("linux-e1000", {"RxAbsIntDelay": 65_536}, None, "RxAbsIntDelay"),
    ("linux-igb", {"rx-usecs": 50}, "82546", "--chip"),
    ("linux-dim", {"adaptive-rx": 2}, None, "adaptive-rx"),
]


@pytest.mark.parametrize(("driver", "settings", "chip", "key"), BAD_KNOBS)
def test_refused_values_name_the_key(
    driver: str, settings: dict[str, int], chip: str | None, key: str
) -> None:
    with pytest.raises(KnobError) as err:
        decode(driver, settings, chip)
    assert err.value.key == key
    assert any(fix in err.value.message for fix in ("allowed", "choose", "its knobs"))


def test_unknown_driver() -> None:
    with pytest.raises(KnobError, match="choose one of linux-e1000"):
        decode("linux-r8169", {})


PARSE_CASES: list[tuple[str, str, dict[str, int]]] = [
    (
        "linux-igb",
        '[ {"ifname": "eth0", "adaptive-rx": false, "rx-usecs": 50, "tx-usecs": 0} ]',
        {"rx-usecs": 50, "tx-usecs": 0},
    ),
    (
        "linux-igb",
        "Coalesce parameters for eth0:\nAdaptive RX: n/a  TX: n/a\nrx-usecs: 3\nrx-frames: n/a\n"
        "tx-usecs: 0\ntx-frames-irq: 128\n",
        {"rx-usecs": 3, "tx-usecs": 0},
    ),
    ("linux-dim", "Adaptive RX: on  TX: off\nrx-usecs: 8\n", {"adaptive-rx": 1, "rx-usecs": 8}),
    (
        "freebsd-em",
        'dev.em.0.enable_aim: 2\ndev.em.0.%desc: Intel\nhw.em.max_interrupt_rate="16000"\n',
        {"enable_aim": 2, "max_interrupt_rate": 16_000},
    ),
    (
        "linux-e1000",
        "options e1000 InterruptThrottleRate=8000,8000 RxIntDelay=0\n",
        {"InterruptThrottleRate": 8000, "RxIntDelay": 0},
    ),
    (
        "openbsd-em",
        "#define EM_TIDV 150\n#define EM_TADV 150 /* 1.024 us */\n",
        {"EM_TIDV": 150, "EM_TADV": 150},
    ),
    (
        "linux-igb",
        "/sys/class/net/eth0/gro_flush_timeout: 20000\nnapi_defer_hard_irqs=2\n",
        {"gro_flush_timeout": 20_000, "napi_defer_hard_irqs": 2},
    ),
]


@pytest.mark.parametrize(("driver", "text", "expected"), PARSE_CASES)
def test_parse_inputs(driver: str, text: str, expected: dict[str, int]) -> None:
    assert knobs.parse(text, driver).settings == expected


BAD_INPUTS: list[tuple[str, str, str]] = [
    ("linux-igb", "", "input"),
    ("linux-igb", '[{"rx-usecs": ', "input"),
    ("linux-igb", "rx-usecs: fifty", "rx-usecs"),
    ("linux-igb", "rx-usec=50", "rx-usec"),
    ("linux-igb", '{"bogus": 1}', "bogus"),
    ("linux-igb", "[" * 100 + "]" * 100, "input"),
    ("freebsd-em", "enable_aim", "enable_aim"),
]


@pytest.mark.parametrize(("driver", "text", "key"), BAD_INPUTS)
def test_bad_inputs_name_the_key(driver: str, text: str, key: str) -> None:
    with pytest.raises(KnobError) as err:
        knobs.parse(text, driver)
    assert err.value.key == key


def test_unknown_keys_are_reported_and_skipped_when_something_usable_is_left() -> None:
    got = knobs.parse('{"rx-usecs": 50, "bogus": 1}', "linux-igb")
    assert got.settings == {"rx-usecs": 50}
    assert got.skipped == ["bogus"]
    assert ("info", "bogus") in {(n.kind, n.key) for n in got.notes}
    lines = knobs.parse("IntMode=1\nInterruptThrottleRate=4,4\n", "linux-e1000e")
    assert lines.settings == {"InterruptThrottleRate": 4}
    assert lines.skipped == ["IntMode"]


def test_ring_sizes_from_ethtool_g() -> None:
    text = (
        "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\t4096\nTX:\t\t4096\n"
        "Current hardware settings:\nRX:\t\t1024\nTX:\t\t512\n"
    )
    assert knobs.parse_ring(text) == (1024, 512)
    assert knobs.parse_ring('[{"ifname": "eth0", "rx-max": 4096, "rx": 2048, "tx": 256}]') == (
        2048,
        256,
    )


def test_every_driver_has_sourced_knobs_and_decodes_its_defaults() -> None:
    for driver in knobs.DRIVERS:
        ks = knobs.knobs(driver)
        assert ks and all(k.source and k.valid and k.unit for k in ks), driver
        d: Any = decode(driver, {})
        assert d.registers, driver


# (settings, the simulator's e1000-5x table): the 5.x defaults RADV 128,
# TIDV 64, TADV 64 [1.024 us]; IDE only when TxIntDelay != 0.
E1000_5X_SCENARIO: list[tuple[dict[str, int], dict[str, int], bool]] = [
    (
        {},
        {
            "interrupt_throttle_rate": 1,
            "rx_int_delay": 0,
            "rx_abs_int_delay": 128,
            "tx_int_delay": 64,
            "tx_abs_int_delay": 64,
        },
        True,
    ),
    (
        {"InterruptThrottleRate": 8000, "TxIntDelay": 0},
        {
            "interrupt_throttle_rate": 8000,
            "rx_int_delay": 0,
            "rx_abs_int_delay": 128,
            "tx_int_delay": 0,
            "tx_abs_int_delay": 64,
        },
        False,
    ),
]


@pytest.mark.parametrize(("settings", "table", "ide"), E1000_5X_SCENARIO)
def test_e1000_5x_maps_to_the_simulators_table(
    settings: dict[str, int], table: dict[str, int], ide: bool
) -> None:
    d: Any = decode("linux-e1000-5x", settings)
    assert d.scenario["moderation"] == {"kind": "e1000-5x", **table}
    assert d.scenario["set_ide"] is ide
    # Module parameters only: the lines write modprobe options and reload.
    lines = knobs.commands(d)
    assert lines[0].startswith("echo 'options e1000 InterruptThrottleRate=")
    assert not any(line.startswith("ethtool") for line in lines)


@pytest.mark.parametrize("rate", [100, 2000, 8000, 20_000, 100_000])
def test_e1000_5x_static_rate_round_trips(rate: int) -> None:
    # rate -> ITR = 1e9/(rate*256) -> the nearest rate giving that ITR -> the same ITR.
    itr = 1_000_000_000 // (rate * 256)
    back = encode("linux-e1000-5x", {"ITR": itr})
    again: Any = decode("linux-e1000-5x", back)
    assert again.registers[0].value == itr
