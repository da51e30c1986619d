"""A tune's answer as terminal text: what was simulated, whether the default
already meets the objective, the table (mean ± 95 % interval per metric over
the seeds), the difference a change buys, and only the lines that change
something.

Works on the dict of ``holdoff tune --json`` (:meth:`TuneResult.to_dict`), so
the printed answer and the JSON cannot disagree.

Units as printed: latency [us], CPU [% of the tuned host's cores],
interrupts [1/s], throughput [Mb/s].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.table import Table

from holdoff import capture as cap


def _pm(p: Mapping[str, Any], name: str, fmt: str, scale: float = 1.0) -> str:
    """``12.3 ± 0.4`` from a point's ``name`` and ``name_ci95``; ``-`` without a value."""
    v = p.get(name)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    text = fmt.format(v * scale)
    ci = p.get(f"{name}_ci95")
    if ci and int(p.get("seeds") or 1) > 1:
        half = (ci[1] - ci[0]) / 2 * scale
        text += f" ± {fmt.format(half)}"
    return text


def coverage_line(data: Mapping[str, Any]) -> str | None:
    """The capture's span, frames and bytes and what was simulated (None without a capture)."""
    c = data.get("capture")
    if not c:
        return None
    what = (
        "the whole capture"
        if c["whole"]
        else f"{cap.pct(c['share_covered'])} of the capture's span (asked by {c['chosen_by']})"
    )
    mtu_note = ""
    if c.get("reordered"):
        mtu_note += (
            f"; {c['reordered']:,} records stamped out of order (at most "
            f"{c['max_step_back_ns'] / 1e3:,.3f} us back) replayed at the previous record's time"
        )
    if c.get("cut_records"):
        mtu_note += (
            f"; {c['cut_records']:,} TCP frames longer than the MTU (offload aggregates of a "
            f"capture taken on a host) cut into the {c['cut_segments']:,} segments the wire "
            "carried"
        )
    if c["over_mtu_frames"]:
        mtu_note += (
            f"; {c['deliverable_rate_bps'] / 1e6:,.2f} Mb/s in frames within the "
            f"{c.get('mtu', 1500)}-byte MTU "
            f"({c['over_mtu_frames']} longer frames are dropped by any setting)"
        )
    kept = (
        f" to {c['only_to']} ({c['skipped']:,} others not replayed)"
        if c.get("only_to") is not None
        else ""
    )
    return (
        f"capture {c['file']}: span {c['span_ns'] / 1e6:,.3f} ms, {c['frames']:,} frames{kept}, "
        f"{c['orig_bytes']:,} bytes ({c['captured_bytes']:,} captured), mean "
        f"{c['mean_rate_bps'] / 1e6:,.2f} Mb/s{mtu_note}.\nSimulated: {what}, capture time "
        f"{c['window_ms'][0]:,.3f} to {c['window_ms'][1]:,.3f} ms ({c['frames_simulated']:,} "
        f"frames), in {c['simulated_ns'] / 1e6:,.3f} ms of simulated time"
    )


def header_lines(data: Mapping[str, Any]) -> list[str]:
    """What was tuned and how, the capture's coverage, and the default's verdict (first)."""
    seeds = int(data.get("seeds") or 1)
    runs = (
        f"each setting run with {seeds} seeds ({data.get('seed_list')}); figures are the mean "
        "± the 95 % interval"
        if seeds > 1
        else f"each setting run once (seed {data.get('seed_list')}): no interval"
    )
    out = [
        f"tune {data['driver']} ({data['chip']}) on {data['workload_description']}; "
        f"objective {data['objective']}; {data['settings_tried']} settings tried "
        f"({data['search']}), {data['evaluated']} distinct settings run ({data['computed']} "
        f"runs now, {data['cached']} from the store); {runs}"
    ]
    line = coverage_line(data)
    if line:
        out.extend(line.split("\n"))
    if data.get("latency_of"):
        out.append(
            f"latency of {data['latency_of']}: p50/p99 on each row are these frames' (the "
            "objective counts them); the line below, all traffic's"
        )
    if data.get("current_meets_objective"):
        d = data.get("current") or data["default"]
        who = _current_name(data)
        out.append(
            f"{who[0].upper()}{who[1:]} meets {data['objective']}: p99 "
            f"{_pm(d, 'p99_us', '{:.1f}')} us, CPU {_pm(d, 'cpu_util', '{:.2f}', 100)} %."
        )
    return out


def _current_name(data: Mapping[str, Any]) -> str:
    src = data.get("current_source") or "the driver's default"
    return src if src == "the driver's default" else f"the current setting (from {src})"


def _is_current(data: Mapping[str, Any], p: Mapping[str, Any]) -> bool:
    cur = data.get("current") or data["default"]
    return bool(p["settings"] == cur["settings"])


def changed_text(p: Mapping[str, Any]) -> str:
    """A point's knobs that differ from the driver's defaults: ``rx-usecs=125``."""
    return ", ".join(f"{k}={v}" for k, v in p["changed"].items()) or "defaults"


def table(data: Mapping[str, Any]) -> Table:
    """Default and recommendation, with the selected and all traffic's latency."""
    t = Table(title="expected, by the model")
    cols = ("", "setting", "applies", "p50 us", "p99 us", "CPU %", "int/s", "Mb/s", "drops")
    for col in cols:
        t.add_column(col, justify="left" if col in ("", "setting", "applies") else "right")
    selected = bool(data.get("latency_of"))

    def add(label: str, p: Mapping[str, Any]) -> None:
        changed = changed_text(p)
        t.add_row(
            label,
            changed,
            p.get("needs") or "at once",
            _pm(p, "p50_us", "{:.1f}"),
            _pm(p, "p99_us", "{:.1f}"),
            _pm(p, "cpu_util", "{:.2f}", 100),
            _pm(p, "interrupts_per_s", "{:,.0f}"),
            _pm(p, "throughput_bps", "{:.2f}", 1e-6),
            _pm(p, "drops", "{:g}"),
        )
        if selected:
            t.add_row(
                "  all traffic's",
                "",
                "",
                _pm(p, "p50_all_us", "{:.1f}"),
                _pm(p, "p99_all_us", "{:.1f}"),
                "",
                "",
                "",
                "",
            )

    rec = data.get("recommended")
    picked = rec is not None and rec["settings"] == data["default"]["settings"]
    add("default, recommended" if picked else "default", data["default"])
    cur = data.get("current")
    if cur is not None and cur["settings"] != data["default"]["settings"]:
        add("current", cur)
    if (
        rec is not None
        and not _is_current(data, rec)
        and rec["settings"] != data["default"]["settings"]
    ):
        add("recommended", rec)
    alt = data.get("alternative")
    if alt is not None:
        add("a trade", alt)
    return t


def port_line(p: Mapping[str, Any]) -> str:
    """The whole port setting of a point with port knobs (``linux-ixgbe``):
    rx-usecs, queues, the cores of their vectors, rings, the UDP hash; ""
    without port knobs."""
    s = p["settings"]
    if "combined" not in s:
        return ""
    if "adaptive-rx" in s:
        # linux-mlx5: DIM or a static CQ period and count.
        if s["adaptive-rx"]:
            mode = "adaptive-rx on (DIM)"
        else:
            period = "CQE-based" if s.get("cqe-mode-rx") else "EQE-based"
            mode = f"{s['rx-usecs']} us / {s['rx-frames']} frames ({period})"
    else:
        u = s.get("rx-usecs", 1)
        mode = {0: "0 (no throttle)", 1: "1 (adaptive)"}.get(u, f"{u} us")
    k = s["irq-cores"]
    cores = "core 0" if k == 1 else f"cores 0-{k - 1}"
    return (
        f"Setting: {'' if 'adaptive-rx' in s else 'rx-usecs '}{mode}; "
        f"{s['combined']} queue pairs (ethtool -L combined), their "
        f"vectors on {cores}; rings of {s['ring']} descriptors; UDP hashed on "
        f"{'addresses and ports (sdfn)' if s['udp4-sdfn'] else 'addresses (sd)'}."
    )


def footer_lines(data: Mapping[str, Any]) -> list[str]:
    """Why, what the change buys and needs, and the lines to paste."""
    out = [str(data["reason"])]
    rec = data.get("recommended")
    if rec is None:
        return out
    port = port_line(rec)
    if port:
        out.append(port)
    if _is_current(data, rec):
        out.append(f"Nothing to change: {_current_name(data)} is the recommendation.")
        alt = data.get("alternative")
        if alt is not None:
            changed = changed_text(alt)
            diff = data.get("alternative_difference") or "differs within the intervals"
            out.append(
                f"A trade on the front (its point nearest the ideal corner of p99 and CPU, "
                f"each scaled to the front's range): {changed}; against "
                f"{_current_name(data)} it {diff}."
            )
            lines = data.get("alternative_paste") or []
            if lines:
                if data.get("iface_note"):
                    out.append(f"Note: {data['iface_note']}.")
                out.append("To take that trade instead:")
                out.extend("  " + line for line in lines)
        return out
    if data.get("difference"):
        out.append(f"Against {_current_name(data)} it {data['difference']}.")
    if data.get("needs"):
        out.append(f"Applying it needs {data['needs']}.")
    if data.get("iface_note"):
        out.append(f"Note: {data['iface_note']}.")
    out.append("Paste (only what changes from the current setting):")
    out.extend("  " + line for line in data.get("paste") or [])
    forms = data.get("persistent") or []
    if forms:
        out.append("To keep it after a reboot (one of these, for your system; --emit KIND):")
        for f in forms:
            where = f" -> {f['path']}" if f.get("path") else ""
            left = f.get("left_out") or []
            without = f"; leaves out {', '.join(left)}" if left else ""
            out.append(f"  [{f['kind']}{where}; needs {f['needs']}{without}]")
            out.extend("    " + line for line in str(f["text"]).rstrip("\n").splitlines())
            if f.get("note"):
                out.append(f"    ({f['note']})")
    return out


__all__ = ["coverage_line", "footer_lines", "header_lines", "port_line", "table"]
