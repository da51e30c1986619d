"""Settings that survive a reboot: the persistent form of each runtime line.

``ethtool -C``, ``sysctl`` and ``echo > /sys/...`` last until the next reboot
(or driver reload); operators keep settings where their system reads them at
boot. For a driver, an interface and knob values (the same values
:func:`holdoff.knobs.commands` prints as runtime lines), :func:`persistent_forms`
returns every form that applies, each a :class:`Form` (kind, target file,
text, what it needs before it takes effect):

- ``networkd``: a systemd ``.link`` file (``[Match]`` on the udev property that
  holds a udev-given name, with 99-default.link's naming lines so the name
  stays, or ``OriginalName=`` for a kernel-given one; ``[Link]``
  coalescing keys of systemd 250 and later: ``UseAdaptiveRxCoalesce=``,
  ``RxCoalesceSec=`` ... as systemd.link(5) names them; times carry ``us``,
  since a bare number there means seconds);
- ``nm``: ``nmcli connection modify`` with NetworkManager's ``ethtool.coalesce-*``
  properties (NetworkManager 1.26 and later);
- ``tuned``: a TuneD profile with a ``[net]`` section (``devices=``,
  ``coalesce=`` in ``ethtool -C`` syntax);
- ``udev``: a rule writing the NAPI sysfs attributes (``gro_flush_timeout``,
  ``napi_defer_hard_irqs``) when the interface appears;
- ``modprobe``: ``/etc/modprobe.d/MODULE.conf`` ``options`` lines for module
  parameters (read when the module loads);
- ``sysctl``: FreeBSD ``/etc/sysctl.conf`` lines for runtime sysctls;
- ``loader``: FreeBSD ``/boot/loader.conf`` tunables (read at boot only);
- ``openbsd-kernel``: OpenBSD's ``#define`` values, which need a kernel rebuild.

Simplifies: one interface per form, matched by its name (a name set by hand
is taken for a kernel-given one: the note says to use the file that sets
it); only the knobs that differ from the driver's default, plus the main
throttle knob, are written, as :func:`holdoff.knobs.commands` does.

Sources: systemd.link(5) (systemd 250; ``OriginalName=`` matches the kernel's
name only; the first matching file applies); systemd.net-naming-scheme(7)
(the prefixes and ``ID_NET_NAME_*`` properties); NetworkManager
``nm-setting-ethtool`` option names (``NM_ETHTOOL_OPTNAME_COALESCE_*``);
TuneD ``plugin_net`` (``coalesce`` option; its known keys and the releases
that changed them: 2.25.0 added ``cqe-mode-rx``, 2.28.0-rc.1 ignores unknown
keys instead of setting none); udev(7) (``RUN`` after the rules, ``$name``,
``NAME==`` once a rule set it); FreeBSD loader.conf(5), sysctl.conf(5), em(4);
OpenBSD ``sys/dev/pci/if_em.h`` and the kernel build steps of config(8).
Units: as the knobs (us, frames, int/s); networkd times are written in us.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from holdoff.knobs.base import Decoded, KnobError
from holdoff.knobs.decode import decode
from holdoff.knobs.tables import _E1000_TIMER_KNOBS, defaults, knobs

#: Every kind of form, in the order they are printed.
KINDS: tuple[str, ...] = (
    "networkd",
    "nm",
    "tuned",
    "udev",
    "modprobe",
    "sysctl",
    "loader",
    "openbsd-kernel",
)

#: ethtool -C keys -> systemd.link(5) [Link] keys (systemd 250 and later).
NETWORKD_KEYS: dict[str, str] = {
    "adaptive-rx": "UseAdaptiveRxCoalesce",
    "adaptive-tx": "UseAdaptiveTxCoalesce",
    "rx-usecs": "RxCoalesceSec",
    "rx-usecs-irq": "RxCoalesceIrqSec",
    "rx-usecs-low": "RxCoalesceLowSec",
    "rx-usecs-high": "RxCoalesceHighSec",
    "tx-usecs": "TxCoalesceSec",
    "tx-usecs-irq": "TxCoalesceIrqSec",
    "tx-usecs-low": "TxCoalesceLowSec",
    "tx-usecs-high": "TxCoalesceHighSec",
    "rx-frames": "RxMaxCoalescedFrames",
    "rx-frames-irq": "RxMaxCoalescedIrqFrames",
    "rx-frames-low": "RxMaxCoalescedLowFrames",
    "rx-frames-high": "RxMaxCoalescedHighFrames",
    "tx-frames": "TxMaxCoalescedFrames",
    "tx-frames-irq": "TxMaxCoalescedIrqFrames",
    "tx-frames-low": "TxMaxCoalescedLowFrames",
    "tx-frames-high": "TxMaxCoalescedHighFrames",
    "pkt-rate-low": "CoalescePacketRateLow",
    "pkt-rate-high": "CoalescePacketRateHigh",
}

#: The ethtool -C keys NetworkManager has an ``ethtool.coalesce-KEY`` property for.
NM_KEYS = frozenset(
    {
        "adaptive-rx",
        "adaptive-tx",
        "pkt-rate-high",
        "pkt-rate-low",
        "rx-frames",
        "rx-frames-high",
        "rx-frames-irq",
        "rx-frames-low",
        "rx-usecs",
        "rx-usecs-high",
        "rx-usecs-irq",
        "rx-usecs-low",
        "sample-interval",
        "stats-block-usecs",
        "tx-frames",
        "tx-frames-high",
        "tx-frames-irq",
        "tx-frames-low",
        "tx-usecs",
        "tx-usecs-high",
        "tx-usecs-irq",
        "tx-usecs-low",
    }
)

#: The ``coalesce=`` keys TuneD's net plugin knows (``_get_config_options_coalesce``
#: of 2.28, less the ``tx-aggr-*`` keys no driver here has): NetworkManager's
#: and ``cqe-mode-rx`` (since 2.25); no ``cqe-mode-tx`` in any release.
TUNED_KEYS = NM_KEYS | {"cqe-mode-rx"}

_BOOLEAN = frozenset({"adaptive-rx", "adaptive-tx", "cqe-mode-rx", "cqe-mode-tx"})
_SYSFS = ("gro_flush_timeout", "napi_defer_hard_irqs")
_FREEBSD_DELAYS = ("rx_int_delay", "rx_abs_int_delay", "tx_int_delay", "tx_abs_int_delay")


@dataclass(frozen=True)
class Form:
    """One persistent form of a setting."""

    #: One of :data:`KINDS`.
    kind: str
    #: The file to write (absolute path), or "" when the form is a command.
    path: str
    #: The file's text, or the command lines.
    text: str
    #: What must happen before it takes effect: "nothing", "interface reset",
    #: "module reload", "connection re-activation", "reboot", "kernel rebuild and reboot".
    needs: str
    #: How to apply it now, in words or commands.
    apply: str
    #: What it leaves out, or what else to know.
    note: str = ""
    #: Knobs of the setting this form cannot carry (the note says how to keep them).
    left_out: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "path": self.path,
            "text": self.text,
            "needs": self.needs,
            "apply": self.apply,
            "note": self.note,
            "left_out": list(self.left_out),
        }


def _written(d: Decoded) -> dict[str, int]:
    """The knobs a form writes: those differing from the driver's default (a
    default written again can be refused: igb's tx-usecs with queue pairs)."""
    dflt = defaults(d.driver)
    return {k: v for k, v in d.settings.items() if v != dflt[k]}


def _ethtool_keys(d: Decoded) -> dict[str, int]:
    """The written knobs that ``ethtool -C`` sets (plus the main one, always)."""
    where = {k.key: k.where for k in knobs(d.driver)}
    out = {k: v for k, v in _written(d).items() if where[k] == "ethtool -C"}
    main = where.get("rx-usecs") == "ethtool -C" and not _module_params(d)
    if not out and main:
        out["rx-usecs"] = d.settings["rx-usecs"]
    if d.driver in ("linux-dim", "linux-mlx5", "linux-ena"):
        # The DIM model's defaults are a reference, not every driver's: with the
        # adaptive mode off, the static period and count are written explicitly.
        fixed = ("rx-usecs", "rx-frames") if not d.settings["adaptive-rx"] else ()
        out = {
            "adaptive-rx": d.settings["adaptive-rx"],
            **{k: d.settings[k] for k in fixed if k in d.settings},
            **out,
        }
    return out


def _module_params(d: Decoded) -> dict[str, int]:
    where = {k.key: k.where for k in knobs(d.driver)}
    written = _written(d)
    out = {k: v for k, v in written.items() if where[k] == "module parameter"}
    if d.driver == "linux-e1000-5x":
        out = {"InterruptThrottleRate": d.settings["InterruptThrottleRate"], **out}
    return out


def persistent_forms(
    driver: str,
    iface: str,
    settings: Mapping[str, int],
    *,
    chip: str | None = None,
    unit: int = 0,
) -> list[Form]:
    """Every persistent form of ``settings`` for ``driver`` on ``iface``
    (FreeBSD: unit ``unit``), in :data:`KINDS` order. Raises
    :class:`KnobError` for a knob or value the driver refuses."""
    d = decode(driver, settings, chip)
    out: list[Form] = []
    for kind in KINDS:
        form = _form(kind, d, iface, unit)
        if form is not None:
            out.append(form)
    return out


def emit(
    kind: str,
    driver: str,
    iface: str,
    settings: Mapping[str, int],
    *,
    chip: str | None = None,
    unit: int = 0,
    flag: str = "--emit",
) -> Form:
    """The one form of ``kind``; :class:`KnobError` naming ``flag`` for an
    unknown kind, or a kind that does not apply to this driver and setting."""
    if kind not in KINDS:
        raise KnobError(flag, f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    forms = persistent_forms(driver, iface, settings, chip=chip, unit=unit)
    for form in forms:
        if form.kind == kind:
            return form
    have = ", ".join(f.kind for f in forms) or "none"
    raise KnobError(
        flag, f"{kind} does not apply to {driver} with these settings; the forms that do: {have}"
    )


def _form(kind: str, d: Decoded, iface: str, unit: int) -> Form | None:
    linux = d.driver.startswith("linux-")
    if kind == "networkd" and linux:
        return _networkd(d, iface)
    if kind == "nm" and linux:
        return _nm(d, iface)
    if kind == "tuned" and linux:
        return _tuned(d, iface)
    if kind == "udev" and linux:
        return _udev(d, iface)
    if kind == "modprobe" and linux:
        return _modprobe(d)
    if kind == "sysctl" and d.driver.startswith("freebsd-"):
        return _sysctl(d, unit)
    if kind == "loader" and d.driver.startswith("freebsd-"):
        return _loader(d)
    if kind == "openbsd-kernel" and d.driver == "openbsd-em":
        return _openbsd(d)
    return None


#: A name udev gave (systemd.net-naming-scheme(7)): two letters of type, then
#: the letter of its scheme -> the udev property ``net_id`` sets to the name
#: before a ``.link`` file is matched (75-net-description.rules runs before
#: 80-net-setup-link.rules).
_NAME_PROPERTY = {
    "o": "ID_NET_NAME_ONBOARD",
    "s": "ID_NET_NAME_SLOT",
    "p": "ID_NET_NAME_PATH",
    "P": "ID_NET_NAME_PATH",
    "x": "ID_NET_NAME_MAC",
}
_PREDICTABLE = re.compile(r"^(en|wl|ww|ib)([ospPx])[0-9a-f]")

#: The [Link] naming lines of systemd's 99-default.link (systemd 250 and later),
#: which a .link file matching the interface replaces.
DEFAULT_LINK_NAMING = (
    "NamePolicy=keep kernel database onboard slot path",
    "AlternativeNamesPolicy=database onboard slot path",
    "MACAddressPolicy=persistent",
)


def name_property(iface: str) -> str | None:
    """The udev property that holds ``iface`` when udev gave the name (``enp3s0``,
    ``eno1``, ``ens1f0``, ``enx001b21aabb02``); None for a name the kernel gave
    (``eth0``) or one set by hand. ``OriginalName=`` and ``KERNEL==`` match the
    kernel's name (the udev property ``INTERFACE`` before renaming), so a file
    matching a udev-given name that way never applies."""
    m = _PREDICTABLE.match(iface)
    return _NAME_PROPERTY[m.group(2)] if m else None


def link_match(iface: str) -> list[str]:
    """The [Match] and naming lines of a ``.link`` file for ``iface``: by its
    naming property, keeping the name (this file replaces 99-default.link for
    the interface), or by ``OriginalName=`` for a kernel-given name."""
    prop = name_property(iface)
    if prop is None:
        return ["[Match]", f"OriginalName={iface}", "", "[Link]"]
    return ["[Match]", f"Property={prop}={iface}", "", "[Link]", *DEFAULT_LINK_NAMING]


def udev_match(iface: str) -> str:
    """A udev rule's match of ``iface`` at ``add``: ``NAME==`` for a name udev
    gives (set by 80-net-setup-link.rules, so the rule file sorts after it),
    ``KERNEL==`` for the kernel's own name."""
    key = "NAME" if name_property(iface) else "KERNEL"
    return f'ACTION=="add", SUBSYSTEM=="net", {key}=="{iface}"'


def udev_rules_path(iface: str, what: str) -> str:
    """Where such a rule goes: after 80-net-setup-link.rules, which names the interface."""
    return f"/etc/udev/rules.d/90-holdoff-{iface}{what}.rules"


def link_naming_note(iface: str) -> str:
    """What a .link file for ``iface`` matches on and what it replaces."""
    prop = name_property(iface)
    if prop is None:
        return (
            f"It matches the kernel's name {iface} (OriginalName=): if udev renamed the "
            "interface, give its current name. It replaces 99-default.link for the "
            "interface: add that file's NamePolicy= and MACAddressPolicy= lines if you rely "
            "on them. If a .link file of yours names the interface, put these [Link] keys "
            "there instead."
        )
    return (
        f"It matches the name udev gave ({prop}; OriginalName= would match only the "
        f"kernel's ethN name and never apply) and replaces 99-default.link for the "
        "interface, so it repeats that file's naming lines to keep the name: compare them "
        "with /usr/lib/systemd/network/99-default.link on your system. If a .link file of "
        "yours names the interface, put the coalescing keys there instead."
    )


def _ethtool_args(keys: Mapping[str, int]) -> str:
    """``ethtool -C`` arguments: booleans as on/off, the rest as numbers."""
    return " ".join(
        f"{k} {('on' if v else 'off') if k in _BOOLEAN else v}" for k, v in keys.items()
    )


def _keep_otherwise(what: str, left: Mapping[str, int], iface: str) -> str:
    """The note for knobs a form cannot carry: the udev rule that sets them
    each time the interface appears (``RUN`` runs after the rules, so after a
    ``.link`` file's coalescing keys; ``$name`` is the interface's name then),
    and the tuned form when it carries them all."""
    args = _ethtool_args(left)
    rule = f'{udev_match(iface)}, RUN+="/sbin/ethtool -C $name {args}"'
    tuned = "the tuned form, or " if what != "TuneD" and set(left) <= TUNED_KEYS else ""
    return (
        f" {what} has no key for {', '.join(left)}: without it the interface comes back "
        f"with the driver's value. Keep it with {tuned}this udev rule in "
        f"{udev_rules_path(iface, '-ethtool')}: {rule}"
    )


def _networkd(d: Decoded, iface: str) -> Form | None:
    keys = _ethtool_keys(d)
    if not keys:
        return None
    lines = link_match(iface)
    left: dict[str, int] = {}
    for key, value in keys.items():
        name = NETWORKD_KEYS.get(key)
        if name is None:
            left[key] = value
        elif key in _BOOLEAN:
            lines.append(f"{name}={'yes' if value else 'no'}")
        elif key.endswith(("-usecs", "-usecs-irq", "-usecs-low", "-usecs-high")):
            lines.append(f"{name}={value}us")
        else:
            lines.append(f"{name}={value}")
    note = "A .link file sets these when the interface appears (boot, hotplug, driver reload). "
    note += link_naming_note(iface)
    if left:
        note += _keep_otherwise("systemd.link", left, iface)
    return Form(
        "networkd",
        f"/etc/systemd/network/50-holdoff-{iface}.link",
        "\n".join(lines) + "\n",
        "interface reset",
        f"udevadm control --reload && udevadm trigger --action=add /sys/class/net/{iface}",
        note,
        tuple(left),
    )


def _nm(d: Decoded, iface: str) -> Form | None:
    every = _ethtool_keys(d)
    keys = {k: v for k, v in every.items() if k in NM_KEYS}
    if not keys:
        return None
    conn = f'"$(nmcli -g GENERAL.CONNECTION device show {iface})"'
    props = " ".join(f"ethtool.coalesce-{k} {v}" for k, v in keys.items())
    text = f"nmcli connection modify {conn} {props}\n"
    left = {k: v for k, v in every.items() if k not in NM_KEYS}
    note = "NetworkManager 1.26 or later keeps these in the connection profile."
    if left:
        note += _keep_otherwise("NetworkManager", left, iface)
    return Form(
        "nm",
        "",
        text,
        "connection re-activation",
        f"nmcli device reapply {iface}",
        note,
        tuple(left),
    )


def _tuned(d: Decoded, iface: str) -> Form | None:
    every = _ethtool_keys(d)
    keys = {k: v for k, v in every.items() if k in TUNED_KEYS}
    if not keys:
        return None
    text = (
        "[main]\n"
        f"summary=interrupt moderation of {iface} (holdoff)\n"
        "\n"
        "[net]\n"
        f"devices={iface}\n"
        f"coalesce={_ethtool_args(keys)}\n"
    )
    note = (
        "tuned-adm merges the listed profiles: the current one keeps its other settings. "
        "Needs TuneD 2.28 or later (2.28.0-rc.1): earlier releases set no coalesce= value at "
        "all on a device whose ethtool -c prints a field they do not know (before 2.25 the "
        "'CQE mode' line of ethtool 5.15 and later, before 2.28 the tx-aggr-* lines of ethtool "
        f"6.4 and later); check with ethtool -c {iface} after applying."
    )
    left = {k: v for k, v in every.items() if k not in TUNED_KEYS}
    if left:
        note += _keep_otherwise("TuneD", left, iface)
    return Form(
        "tuned",
        f"/etc/tuned/holdoff-{iface}/tuned.conf",
        text,
        "nothing",
        f"tuned-adm profile $(tuned-adm active | sed -n 's/^Current active profile: //p') "
        f"holdoff-{iface}",
        note,
        tuple(left),
    )


def _udev(d: Decoded, iface: str) -> Form | None:
    written = _written(d)
    attrs = [f'ATTR{{{k}}}="{written[k]}"' for k in _SYSFS if k in written]
    if not attrs:
        return None
    text = f"{udev_match(iface)}, {', '.join(attrs)}\n"
    note = ""
    if "irq_suspend_timeout" in written:
        note = (
            "irq_suspend_timeout is set over netlink per NAPI instance; no file keeps it: run the "
            "ynl line from a unit after the interface is up."
        )
    return Form(
        "udev",
        udev_rules_path(iface, ""),
        text,
        "interface reset",
        f"udevadm control --reload && udevadm trigger --action=add /sys/class/net/{iface}",
        note,
    )


def _modprobe(d: Decoded) -> Form | None:
    params = _module_params(d)
    if not params:
        return None
    mod = "e1000" if d.driver in ("linux-e1000", "linux-e1000-5x") else d.driver[len("linux-") :]
    opts = " ".join(f"{k}={v}" for k, v in params.items())
    note = (
        "One value per port: 'InterruptThrottleRate=3000,3000' sets two ports. If the driver "
        "is in the initramfs, rebuild it (update-initramfs -u, or dracut -f) so early boot "
        "reads the file too."
    )
    if d.driver == "linux-e1000-5x":
        note += " The 2004 driver's systems read /etc/modprobe.conf: put the line there."
    if any(k in params for k, _, _ in _E1000_TIMER_KNOBS):
        note += " The delay timers have no ethtool -C form: this file is their only setting."
    return Form(
        "modprobe",
        f"/etc/modprobe.d/{mod}.conf",
        f"options {mod} {opts}\n",
        "module reload",
        f"modprobe -r {mod} && modprobe {mod}  # the interfaces go down; or reboot",
        note,
    )


def _dev(d: Decoded) -> str:
    return "em" if d.driver == "freebsd-em" else "igb"


def _sysctl(d: Decoded, unit: int) -> Form | None:
    written = _written(d)
    keys = ["enable_aim"] + [k for k in _FREEBSD_DELAYS if k in written]
    if "itr" in written:
        keys.append("itr")
    lines = [f"dev.{_dev(d)}.{unit}.{k}={d.settings[k]}" for k in keys if k in d.settings]
    return Form(
        "sysctl",
        "/etc/sysctl.conf",
        "\n".join(lines) + "\n",
        "nothing",
        "service sysctl restart",
        "Runtime sysctls: /etc/rc.d/sysctl applies them at boot after the driver attached.",
    )


def _loader(d: Decoded) -> Form | None:
    written = _written(d)
    keys = [k for k in ("max_interrupt_rate", *_FREEBSD_DELAYS) if k in written]
    if not keys:
        return None
    lines = [f'hw.em.{k}="{d.settings[k]}"' for k in keys]
    return Form(
        "loader",
        "/boot/loader.conf",
        "\n".join(lines) + "\n",
        "reboot",
        "shutdown -r now",
        "Boot-time tunables (CTLFLAG_RDTUN): the kernel reads them only at boot; they apply to "
        "every em/igb port.",
    )


def _openbsd(d: Decoded) -> Form:
    written = _written(d)
    defines = [f"#define {k} {d.settings[k]}" for k in d.settings if k in written]
    if not defines:
        defines = [f"#define MAX_INTS_PER_SEC {d.settings['MAX_INTS_PER_SEC']}"]
    steps = (
        "# 1. edit sys/dev/pci/if_em.h (OpenBSD source tree in /usr/src) to read:\n"
        + "\n".join(defines)
        + "\n# 2. rebuild and install the kernel, then reboot:\n"
        "cd /sys/arch/$(machine)/compile/GENERIC.MP && make obj && make config && make "
        "&& make install && reboot\n"
    )
    return Form(
        "openbsd-kernel",
        "/usr/src/sys/dev/pci/if_em.h",
        steps,
        "kernel rebuild and reboot",
        "the steps in the text",
        "OpenBSD's em(4) has no sysctl or loader tunable for these: they are compile-time "
        "constants. syspatch and release upgrades install a stock kernel: redo this after each.",
    )
