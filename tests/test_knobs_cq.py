"""linux-mlx5 and linux-ena knobs (issue 34): what each driver refuses, rounds
and ignores, the device fields it writes, explain on the shipped ethtool
outputs, and the simulator's tables those give.

Expected values come from the driver source the module cites
(``mlx5e_ethtool_set_coalesce``, ``ena_com_update_nonadaptive_moderation_interval``,
``ena_com_update_intr_reg``, lib/dim's profile tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from holdoff import knobs
from holdoff.knobs import KnobError, decode
from scenarios import tune_fewest_cores_on_many_flows

CORPUS = Path(__file__).resolve().parent / "data" / "ethtool"


def _regs(d: knobs.Decoded) -> dict[str, tuple[int, str]]:
    return {r.name: (r.value, r.unit) for r in d.registers}


def test_mlx5_defaults_are_dim_on_both_ways_with_the_cqe_rx_profiles() -> None:
    d = decode("linux-mlx5", {})
    assert d.chip.name == "cx5" and d.mode == "adaptive"
    # DIM's default profile (index 1): RX CQE 8 us / 128, TX EQE 8 us / 128.
    assert _regs(d) == {
        "RX CQ period": (8, "1 us"),
        "RX CQ count": (128, "completions"),
        "TX CQ period": (8, "1 us"),
        "TX CQ count": (128, "completions"),
    }
    assert "rx_dim_work" in d.adaptive and "tx_dim_work" in d.adaptive
    assert d.scenario is not None
    assert d.scenario["chip"] == "cx5"
    assert d.scenario["moderation"]["kind"] == "mlx5"


@pytest.mark.parametrize(
    ("settings", "key", "message"),
    [
        (
            {"rx-usecs": 4096},
            "rx-usecs",
            "Max coalesce time 4095 usecs, tx-usecs (8) rx-usecs (4096)",
        ),
        ({"tx-usecs": 5000}, "tx-usecs", "Max coalesce time 4095 usecs, tx-usecs (5000)"),
        (
            {"rx-frames": 65536},
            "rx-frames",
            "Max coalesce frames 65535, tx-frames (128) rx-frames (65536)",
        ),
        ({"cqe-mode-rx": 2}, "cqe-mode-rx", "allowed: on, off"),
    ],
)
def test_mlx5_refuses_with_the_drivers_message(
    settings: dict[str, int], key: str, message: str
) -> None:
    with pytest.raises(KnobError) as err:
        decode("linux-mlx5", settings)
    assert err.value.key == key
    assert message in err.value.message


def test_mlx5_usecs_while_adaptive_is_on_are_kept_not_applied() -> None:
    d = decode("linux-mlx5", {"rx-usecs": 50})
    assert any(n.kind == "ignored" and n.key == "rx-usecs" for n in d.notes)
    assert _regs(d)["RX CQ period"] == (8, "1 us")
    # With adaptive-rx off the value is the CQ period; CQE mode: no rate cap,
    # every lone packet waits the period.
    s = decode("linux-mlx5", {"adaptive-rx": 0, "rx-usecs": 50, "rx-frames": 64})
    assert _regs(s)["RX CQ period"] == (50, "1 us")
    assert s.mode == "static" and s.throttle_ns is None and s.rx_delay_ns == 50_000
    assert any(n.key == "rx-usecs" and "restarts at every completion" in n.message for n in s.notes)
    # EQE mode: a rate cap of one interrupt per period.
    e = decode("linux-mlx5", {"adaptive-rx": 0, "cqe-mode-rx": 0, "rx-usecs": 50})
    assert e.throttle_ns == (50_000, 50_000) and e.max_rate_per_s == pytest.approx(20_000)
    assert knobs.commands(e, "ens1f0np0") == [
        "ethtool -C ens1f0np0 adaptive-rx off adaptive-tx on cqe-mode-rx off rx-usecs 50 "
        "rx-frames 128"
    ]
    mod = e.scenario["moderation"] if e.scenario else {}
    assert (mod["cqe_mode_rx"], mod["rx_usecs"], mod["adaptive_rx"]) == (False, 50, False)


# 64-byte frames (84 bytes on the wire) at the cx5's 25 Gb/s: 26.88 ns each,
# so the 1024-descriptor RX ring fills in 27.5 us.
@pytest.mark.parametrize(
    ("settings", "rx_cap", "warned"),
    [
        # DIM on: its longest RX profile holds 64 us but raises the CQ event
        # after 64 completions, 1.72 us of line-rate frames: no overrun.
        ({}, 64, None),
        # No count: the 64-us period (CQE mode, restarted per completion) holds
        # a line-rate burst far past the ring's 27.5 us.
        ({"adaptive-rx": 0, "rx-usecs": 64, "rx-frames": 0}, 0, ("rx-usecs", "(64.0 us)")),
        # A count above the ring: 2048 x 26.88 ns = 55.1 us, the count binds.
        (
            {"adaptive-rx": 0, "rx-usecs": 64, "rx-frames": 2048},
            2048,
            ("rx-frames", "the count of 2048 completions at line rate (55.1 us)"),
        ),
        # 512 completions arrive in 13.8 us: inside the ring.
        ({"adaptive-rx": 0, "rx-usecs": 64, "rx-frames": 512}, 512, None),
    ],
)
def test_mlx5_ring_warning_counts_the_cq_completion_count(
    settings: dict[str, int], rx_cap: int, warned: tuple[str, str] | None
) -> None:
    d = decode("linux-mlx5", settings)
    assert d.rx_frames_cap == rx_cap
    rx = [w for w in knobs.check(d) if w.message.startswith("RX:")]
    if warned is None:
        assert rx == []
    else:
        assert len(rx) == 1 and rx[0].key == warned[0] and warned[1] in rx[0].message


def test_mlx5_adaptive_tx_waits_up_to_dims_longest_tx_profile() -> None:
    # lib/dim's TX EQE profiles end at 128 us / 128 completions.
    d = decode("linux-mlx5", {})
    assert (d.tx_delay_ns, d.tx_frames_cap) == (128_000, 128)


def test_ena_defaults_quantisation_and_refusals() -> None:
    d = decode("linux-ena", {})
    assert d.chip.name == "ena" and d.mode == "off"
    regs = _regs(d)
    assert regs["TX interrupt delay"] == (64, "1 us (intr_delay_resolution)")
    assert regs["RX interrupt delay"][0] == 0
    # rx-usecs 256: one interrupt per 256 us at most, 3906.25/s per queue.
    s = decode("linux-ena", {"rx-usecs": 256})
    assert s.mode == "static" and s.max_rate_per_s == pytest.approx(1e6 / 256)
    # 40000 us does not fit the 15-bit field: masked, not refused.
    m = decode("linux-ena", {"rx-usecs": 40_000})
    assert _regs(m)["RX interrupt delay"][0] == 40_000 & 0x7FFF
    assert any(n.kind == "rounded" and n.key == "rx-usecs" for n in m.notes)
    # netlink ethtool refuses what supported_coalesce_params lacks.
    for key in ("rx-frames", "adaptive-tx", "cqe-mode-rx"):
        with pytest.raises(KnobError) as err:
            decode("linux-ena", {key: 1})
        assert "cannot modify an unsupported parameter" in err.value.message
    a = decode("linux-ena", {"adaptive-rx": 1, "rx-usecs": 100})
    assert a.mode == "adaptive" and a.throttle_ns == (1_000, 256_000)
    assert any(n.kind == "ignored" and n.key == "rx-usecs" for n in a.notes)
    assert knobs.commands(a, "ens5") == ["ethtool -C ens5 adaptive-rx on tx-usecs 64"]


@pytest.mark.parametrize(
    ("name", "driver", "expected"),
    [
        # Real: amzn/amzn-drivers issue 305 (ioctl-era ethtool, every field 0).
        ("ena-ens7-c-head.txt", "linux-ena", {"mode": "off", "tx": 0}),
        # Real: amzn/amzn-drivers issue 214 (cqe-mode-rx refused by netlink).
        ("ena-eth0-netlink-error-C.txt", "linux-ena", {"mode": "off", "tx": 64}),
        # Constructed from ethtool 6.10's JSON output code (SOURCES.md).
        ("mlx5-ens1f0np0-json-ethtool6.10-constructed.json", "linux-mlx5", {"mode": "adaptive"}),
    ],
)
def test_explain_on_the_corpus_names_device_fields_and_units(
    name: str, driver: str, expected: dict[str, Any]
) -> None:
    parsed = knobs.parse((CORPUS / name).read_text(encoding="utf-8"), driver)
    report = knobs.explain(driver, parsed.settings, extra_notes=parsed.notes, iface=parsed.iface)
    assert report["mode"] == expected["mode"]
    units = {r["register"]: r["unit"] for r in report["registers"]}
    if driver == "linux-ena":
        assert units["RX interrupt delay"].startswith("1 us (intr_delay_resolution)")
        tx = next(r for r in report["registers"] if r["register"] == "TX interrupt delay")
        assert tx["value"] == expected["tx"]
    else:
        assert units["RX CQ period"] == "1 us" and units["RX CQ count"] == "completions"
    assert report["scenario"]["moderation"]["kind"] == driver.removeprefix("linux-")


def test_the_scenario_tables_run_in_the_simulator() -> None:
    from holdoff import api

    for driver, settings in (
        ("linux-mlx5", {"adaptive-rx": 0, "rx-usecs": 16, "rx-frames": 32}),
        ("linux-ena", {"rx-usecs": 256}),
    ):
        d = decode(driver, settings)
        assert d.scenario is not None
        scen = {
            "name": "cq",
            "duration_ms": 5,
            "hosts": [
                {
                    "name": "dut",
                    "profile": "xeon-modern",
                    "driver": "napi",
                    "nics": [{"name": "eth0", **d.scenario}],
                }
            ],
            "generators": [{"name": "g", "rate_pps": 100_000.0, "frame_bytes": 1518}],
            "links": [{"a": "g", "b": "dut.eth0", "rate": "25G"}],
            "apps": [{"kind": "udp_sink", "name": "sink", "host": "dut"}],
        }
        r = api.run(scen)
        port = r.summary["ports"][0]
        assert port["chip"] == d.chip.name, driver
        assert port["rx_packets"] > 0, driver


def test_tune_linux_mlx5_on_the_many_flow_capture(capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped capture offers 1.6 million frames/s over 256 UDP flows; on
    xeon-modern (rx_packet_ns 0.9 us) that is 1.44 cores of receive work
    (tests/test_tune_ixgbe.py), so one core cannot carry it and the fewest
    cores is 2 or 4. mlx5 hashes UDP on addresses and ports by default
    (mlx5e_rss_get_default_tt_config), so the default setting already spreads
    the flows. The lines to paste name mlx5's completion vectors
    (mlx5_compN@pci:BUS) and run ethtool -L/-N on the interface."""
    data = tune_fewest_cores_on_many_flows("linux-mlx5", "cx5", capsys)
    affinity = [line for line in data["paste"] if "smp_affinity_list" in line]
    assert all("mlx5_comp" in line and "/sys/class/net/eth0/device" in line for line in affinity)
    assert any(f.get("kind") == "systemd-unit" for f in data["persistent"])
