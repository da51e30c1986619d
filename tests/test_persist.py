"""Persistent forms (holdoff.knobs.persist) checked against each format's documented syntax.

The documented names are written here with their source, not taken from the
module under test:

- systemd.link(5), systemd 250: the [Link] coalescing keys (UseAdaptiveRxCoalesce=
  ... StatisticsBlockCoalesceSec=); the *Sec= keys take a time span, where a
  bare number means seconds, so microseconds must carry "us";
- NetworkManager, nm-setting-ethtool (NM_ETHTOOL_OPTNAME_COALESCE_*): the
  ethtool.coalesce-* property names;
- ethtool(8), -C: the coalescing parameter names a TuneD coalesce= line takes;
- sysctl.conf(5): "name=value" lines; loader.conf(5): 'variable="value"' lines;
- modprobe.d(5): "options module parameter=value ..."; udev(7): comma-separated
  KEY=="value" matches and ATTR{file}="value" assignments.
"""

from __future__ import annotations

import configparser
import re
import shlex

import pytest

from holdoff.knobs import KnobError
from holdoff.knobs.persist import KINDS, Form, emit, persistent_forms

# systemd.link(5), section "[LINK] SECTION OPTIONS" (systemd 250).
SYSTEMD_LINK_COALESCE_KEYS = {
    "UseAdaptiveRxCoalesce",
    "UseAdaptiveTxCoalesce",
    "RxCoalesceSec",
    "RxCoalesceIrqSec",
    "RxCoalesceLowSec",
    "RxCoalesceHighSec",
    "TxCoalesceSec",
    "TxCoalesceIrqSec",
    "TxCoalesceLowSec",
    "TxCoalesceHighSec",
    "RxMaxCoalescedFrames",
    "RxMaxCoalescedIrqFrames",
    "RxMaxCoalescedLowFrames",
    "RxMaxCoalescedHighFrames",
    "TxMaxCoalescedFrames",
    "TxMaxCoalescedIrqFrames",
    "TxMaxCoalescedLowFrames",
    "TxMaxCoalescedHighFrames",
    "CoalescePacketRateLow",
    "CoalescePacketRateHigh",
    "CoalescePacketRateSampleIntervalSec",
    "StatisticsBlockCoalesceSec",
}

# NetworkManager nm-setting-ethtool.h, NM_ETHTOOL_OPTNAME_COALESCE_* (1.26 and later).
NM_COALESCE_PROPERTIES = {
    f"ethtool.coalesce-{k}"
    for k in (
        "adaptive-rx adaptive-tx pkt-rate-high pkt-rate-low rx-frames rx-frames-high "
        "rx-frames-irq rx-frames-low rx-usecs rx-usecs-high rx-usecs-irq rx-usecs-low "
        "sample-interval stats-block-usecs tx-frames tx-frames-high tx-frames-irq "
        "tx-frames-low tx-usecs tx-usecs-high tx-usecs-irq tx-usecs-low"
    ).split()
}

# ethtool(8): the parameters of -C|--coalesce (ethtool 5.15 added cqe-mode-rx/tx).
ETHTOOL_C_PARAMS = set(
    (
        "adaptive-rx adaptive-tx rx-usecs rx-frames rx-usecs-irq rx-frames-irq tx-usecs "
        "tx-frames tx-usecs-irq tx-frames-irq stats-block-usecs pkt-rate-low rx-usecs-low "
        "rx-frames-low tx-usecs-low tx-frames-low pkt-rate-high rx-usecs-high rx-frames-high "
        "tx-usecs-high tx-frames-high sample-interval cqe-mode-rx cqe-mode-tx"
    ).split()
)


def forms(driver: str, settings: dict[str, int], unit: int = 0) -> dict[str, Form]:
    return {f.kind: f for f in persistent_forms(driver, "enp3s0", settings, unit=unit)}


def ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return parser


def test_linux_igb_networkd_link_file_parses_with_documented_keys() -> None:
    got = forms("linux-igb", {"rx-usecs": 50})
    link = got["networkd"]
    assert link.path.startswith("/etc/systemd/network/") and link.path.endswith(".link")
    parsed = ini(link.text)
    assert parsed.sections() == ["Match", "Link"]
    assert dict(parsed["Match"]) == {"OriginalName": "enp3s0"}
    assert set(parsed["Link"]) <= SYSTEMD_LINK_COALESCE_KEYS
    # 50 us, written with its unit: a bare "50" would be 50 seconds.
    assert dict(parsed["Link"]) == {"RxCoalesceSec": "50us"}
    assert link.needs == "interface reset"


def test_linux_igb_nmcli_line_uses_documented_properties() -> None:
    nm = forms("linux-igb", {"rx-usecs": 50})["nm"]
    words = shlex.split(nm.text)
    assert words[:3] == ["nmcli", "connection", "modify"]
    pairs = words[4:]
    assert len(pairs) % 2 == 0 and pairs
    for key, value in zip(pairs[0::2], pairs[1::2], strict=True):
        assert key in NM_COALESCE_PROPERTIES
        assert value.isdigit()
    assert pairs == ["ethtool.coalesce-rx-usecs", "50"]
    assert nm.needs == "connection re-activation"


def test_dim_forms_booleans_and_frames() -> None:
    got = forms("linux-dim", {"adaptive-rx": 0, "rx-usecs": 8, "rx-frames": 32, "cqe-mode-rx": 1})
    link = dict(ini(got["networkd"].text)["Link"])
    assert link == {
        "UseAdaptiveRxCoalesce": "no",
        "RxCoalesceSec": "8us",
        "RxMaxCoalescedFrames": "32",
    }
    # systemd.link has no CQE key: the form says so rather than dropping it silently.
    assert "cqe-mode-rx" in got["networkd"].note
    tuned = ini(got["tuned"].text)
    assert tuned["net"]["devices"] == "enp3s0"
    words = tuned["net"]["coalesce"].split()
    assert {w for w in words[0::2]} <= ETHTOOL_C_PARAMS
    assert words == ["adaptive-rx", "off", "rx-usecs", "8", "rx-frames", "32", "cqe-mode-rx", "on"]
    nm_keys = shlex.split(got["nm"].text)[4::2]
    assert set(nm_keys) <= NM_COALESCE_PROPERTIES
    assert "ethtool.coalesce-cqe-mode-rx" not in nm_keys


def test_freebsd_em_sysctl_conf_and_loader_conf_lines() -> None:
    got = forms("freebsd-em", {"enable_aim": 0, "max_interrupt_rate": 16000, "rx_int_delay": 10}, 1)
    assert set(got) == {"sysctl", "loader"}
    sysctl = got["sysctl"]
    assert sysctl.path == "/etc/sysctl.conf"
    lines = sysctl.text.splitlines()
    assert all(re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)+=[0-9]+", line) for line in lines)
    assert lines == ["dev.em.1.enable_aim=0", "dev.em.1.rx_int_delay=10"]
    loader = got["loader"]
    assert loader.path == "/boot/loader.conf"
    assert loader.needs == "reboot"
    assert all(re.fullmatch(r'[a-z_.]+="[0-9]+"', line) for line in loader.text.splitlines())
    assert loader.text.splitlines() == [
        'hw.em.max_interrupt_rate="16000"',
        'hw.em.rx_int_delay="10"',
    ]


def test_module_parameters_go_to_modprobe_d_only() -> None:
    # RxIntDelay 8 differs from e1000e's default 0 (param.c DEFAULT_RDTR): it is written.
    got = forms("linux-e1000e", {"InterruptThrottleRate": 3000, "RxIntDelay": 8})
    # An InterruptThrottleRate setting has no ethtool -C line of its own.
    assert set(got) == {"modprobe"}
    form = got["modprobe"]
    assert form.path == "/etc/modprobe.d/e1000e.conf"
    assert re.fullmatch(r"options \S+( \w+=\d+(,\d+)*)+\n", form.text)
    assert form.text == "options e1000e InterruptThrottleRate=3000 RxIntDelay=8\n"
    assert form.needs == "module reload"


def test_udev_rule_for_napi_sysfs_attributes() -> None:
    rule = forms("linux-igb", {"gro_flush_timeout": 20000, "napi_defer_hard_irqs": 2})["udev"]
    parts = [p.strip() for p in rule.text.strip().split(",")]
    assert parts[:3] == ['ACTION=="add"', 'SUBSYSTEM=="net"', 'KERNEL=="enp3s0"']
    assert parts[3:] == ['ATTR{gro_flush_timeout}="20000"', 'ATTR{napi_defer_hard_irqs}="2"']


def test_openbsd_needs_a_kernel_rebuild_with_the_steps() -> None:
    form = forms("openbsd-em", {"MAX_INTS_PER_SEC": 4000})["openbsd-kernel"]
    assert form.needs == "kernel rebuild and reboot"
    assert "#define MAX_INTS_PER_SEC 4000" in form.text.splitlines()
    assert "make config" in form.text and "make install" in form.text


def test_emit_one_kind_and_refuse_others() -> None:
    assert emit("nm", "linux-igb", "enp3s0", {"rx-usecs": 50}).kind == "nm"
    with pytest.raises(KnobError) as err:
        emit("netplan", "linux-igb", "enp3s0", {"rx-usecs": 50})
    assert err.value.key == "--emit" and "networkd" in err.value.message
    with pytest.raises(KnobError) as err:
        emit("loader", "linux-igb", "enp3s0", {"rx-usecs": 50})
    assert err.value.key == "--emit" and "the forms that do: networkd, nm, tuned" in str(err.value)
    assert set(KINDS) >= {"networkd", "nm", "tuned", "modprobe", "sysctl", "loader"}
