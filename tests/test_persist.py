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
  KEY=="value" matches and ATTR{file}="value" assignments;
- systemd.link(5): OriginalName= matches "the device name, as exposed by the
  udev property INTERFACE" and "cannot be used to match on names that have
  already been changed from userspace"; the first matching .link file in
  lexical order is the one applied, and 99-default.link carries the naming
  policy; systemd.net-naming-scheme(7): the prefixes of udev-given names (en +
  o onboard, s hotplug slot, p/P PCI path, x MAC) and the ID_NET_NAME_*
  properties that hold them;
- TuneD's net plugin, coalesce= keys: cqe-mode-rx known from 2.25.0, no
  cqe-mode-tx in any release.
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
    # enp3s0 is a name udev gave: the kernel called the device ethN, and
    # OriginalName= (the kernel's name) would never match it.
    assert dict(parsed["Match"]) == {"Property": "ID_NET_NAME_PATH=enp3s0"}
    coalescing = {k: v for k, v in parsed["Link"].items() if k not in NAMING}
    assert set(coalescing) <= SYSTEMD_LINK_COALESCE_KEYS
    # 50 us, written with its unit: a bare "50" would be 50 seconds.
    assert coalescing == {"RxCoalesceSec": "50us"}
    # The file replaces 99-default.link for the interface: without its naming
    # policy the interface would come back as ethN after a reboot.
    assert {k: parsed["Link"][k] for k in NAMING} == NAMING
    assert link.needs == "interface reset"


# systemd 250's network/99-default.link, [Link] naming lines.
NAMING = {
    "NamePolicy": "keep kernel database onboard slot path",
    "AlternativeNamesPolicy": "database onboard slot path",
    "MACAddressPolicy": "persistent",
}


@pytest.mark.parametrize(
    ("iface", "match"),
    [
        ("eno1", {"Property": "ID_NET_NAME_ONBOARD=eno1"}),
        ("ens1f0", {"Property": "ID_NET_NAME_SLOT=ens1f0"}),
        ("enp65s0f0np0", {"Property": "ID_NET_NAME_PATH=enp65s0f0np0"}),
        ("enP2p1s0", {"Property": "ID_NET_NAME_PATH=enP2p1s0"}),
        ("enx001b21aabb02", {"Property": "ID_NET_NAME_MAC=enx001b21aabb02"}),
        ("wlp2s0", {"Property": "ID_NET_NAME_PATH=wlp2s0"}),
        ("eth0", {"OriginalName": "eth0"}),
        ("lan0", {"OriginalName": "lan0"}),
    ],
)
def test_link_file_matches_the_name_where_it_was_given(iface: str, match: dict[str, str]) -> None:
    link = {f.kind: f for f in persistent_forms("linux-igb", iface, {"rx-usecs": 50})}["networkd"]
    parsed = ini(link.text)
    assert dict(parsed["Match"]) == match
    # Naming lines only where udev gave the name (they keep it); a kernel name
    # is matched as it is and nothing renames it.
    assert ("NamePolicy" in parsed["Link"]) == ("Property" in match)
    rule = {
        f.kind: f
        for f in persistent_forms("linux-igb", iface, {"rx-usecs": 50, "gro_flush_timeout": 1})
    }["udev"]
    key = "NAME" if "Property" in match else "KERNEL"
    assert f'{key}=="{iface}"' in rule.text
    # After 80-net-setup-link.rules, where NAME is set.
    assert rule.path == f"/etc/udev/rules.d/90-holdoff-{iface}.rules"


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
    link = {k: v for k, v in ini(got["networkd"].text)["Link"].items() if k not in NAMING}
    assert link == {
        "UseAdaptiveRxCoalesce": "no",
        "RxCoalesceSec": "8us",
        "RxMaxCoalescedFrames": "32",
    }
    # systemd.link has no CQE key: the form says so rather than dropping it
    # silently, and gives the rule that keeps it.
    assert got["networkd"].left_out == ("cqe-mode-rx",)
    assert 'NAME=="enp3s0", RUN+="/sbin/ethtool -C $name cqe-mode-rx on"' in got["networkd"].note
    assert got["nm"].left_out == ("cqe-mode-rx",)
    assert got["tuned"].left_out == ()
    tuned = ini(got["tuned"].text)
    assert tuned["net"]["devices"] == "enp3s0"
    words = tuned["net"]["coalesce"].split()
    assert {w for w in words[0::2]} <= ETHTOOL_C_PARAMS
    assert words == ["adaptive-rx", "off", "rx-usecs", "8", "rx-frames", "32", "cqe-mode-rx", "on"]
    nm_keys = shlex.split(got["nm"].text)[4::2]
    assert set(nm_keys) <= NM_COALESCE_PROPERTIES
    assert "ethtool.coalesce-cqe-mode-rx" not in nm_keys


def test_tuned_never_writes_cqe_mode_tx() -> None:
    # TuneD knows no cqe-mode-tx: before 2.28 one unknown key made it set no
    # coalesce= value at all, from 2.28 it drops the key. Either way the
    # interface would not get it, so the form leaves it out and says how to
    # keep it.
    got = forms("linux-mlx5", {"adaptive-rx": 0, "cqe-mode-rx": 0, "cqe-mode-tx": 1})
    tuned = got["tuned"]
    words = ini(tuned.text)["net"]["coalesce"].split()
    assert "cqe-mode-tx" not in words and words[words.index("cqe-mode-rx") + 1] == "off"
    assert tuned.left_out == ("cqe-mode-tx",)
    assert "/sbin/ethtool -C $name cqe-mode-tx on" in tuned.note
    # systemd.link and NetworkManager have neither CQE key.
    assert got["networkd"].left_out == ("cqe-mode-rx", "cqe-mode-tx")
    assert got["nm"].left_out == ("cqe-mode-rx", "cqe-mode-tx")
    assert "-C $name cqe-mode-rx off cqe-mode-tx on" in got["nm"].note
    # tuned cannot carry cqe-mode-tx, so it is not offered as the way to keep it.
    assert "tuned form" not in got["nm"].note
    assert got["nm"].to_dict()["left_out"] == ["cqe-mode-rx", "cqe-mode-tx"]


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
    assert parts[:3] == ['ACTION=="add"', 'SUBSYSTEM=="net"', 'NAME=="enp3s0"']
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


def test_tune_prints_what_each_form_leaves_out() -> None:
    # The forms' notes were in the JSON only: a networkd user of a CQE-mode
    # recommendation lost cqe-mode-rx at the next boot without being told.
    # (explain's view: tests/test_explain.py.)
    from holdoff.tune.view import footer_lines

    settings = {"adaptive-rx": 0, "cqe-mode-rx": 0}
    persistent = [f.to_dict() for f in persistent_forms("linux-mlx5", "enp65s0f0np0", settings)]
    rec = {"settings": {"rx-usecs": 8}, "changed": {"adaptive-rx": 0}}
    data = {
        "reason": "why",
        "recommended": rec,
        "default": {"settings": {"rx-usecs": 0}},
        "paste": ["ethtool -C enp65s0f0np0 adaptive-rx off cqe-mode-rx off"],
        "persistent": persistent,
    }
    lines = footer_lines(data)
    head = next(line for line in lines if line.startswith("  [networkd"))
    assert head.endswith("; needs interface reset; leaves out cqe-mode-rx]")
    rule = 'NAME=="enp65s0f0np0", RUN+="/sbin/ethtool -C $name cqe-mode-rx off"'
    assert any(rule in line for line in lines[lines.index(head) :])


def test_tune_says_when_eth0_stands_for_the_interface() -> None:
    # Without --iface the lines name eth0; the view says so before them.
    from holdoff.tune.view import footer_lines

    data = {
        "reason": "why",
        "recommended": {"settings": {"rx-usecs": 50}, "changed": {"rx-usecs": 50}},
        "default": {"settings": {"rx-usecs": 3}},
        "paste": ["ethtool -C eth0 rx-usecs 50"],
        "iface_note": "no interface named (--iface NAME ...): the lines below use eth0",
    }
    lines = footer_lines(data)
    assert lines.index("Paste (only what changes from the current setting):") == (
        lines.index("Note: no interface named (--iface NAME ...): the lines below use eth0.") + 1
    )
    assert not any(line.startswith("Note:") for line in footer_lines({**data, "iface_note": ""}))


def test_tune_report_lists_the_forms_with_their_notes() -> None:
    # The HTML report had the paste lines only: the forms and their notes are
    # there now, escaped (a udev rule is full of quotes and $).
    from holdoff.report.tune import _forms_html

    got = [
        f.to_dict()
        for f in persistent_forms(
            "linux-mlx5", "enp65s0f0np0", {"adaptive-rx": 0, "cqe-mode-rx": 0}
        )
    ]
    page = _forms_html(got)
    assert "<b>leaves out cqe-mode-rx</b>" in page
    assert (
        "NAME==&quot;enp65s0f0np0&quot;, RUN+=&quot;/sbin/ethtool -C $name cqe-mode-rx off" in page
    )
    assert page.count('<pre class="commands">') == len(got) == 3
    assert "Property=ID_NET_NAME_PATH=enp65s0f0np0" in page
    assert _forms_html([]) == ""
