"""The terminal view of ``holdoff explain``: rich tables of one explanation.

Renders the dict :func:`holdoff.knobs.explain` returns (the same the
``--json`` output prints): a header (driver, chip, mode, the assumptions),
the knob values, the registers with their units and intervals, the effective
interval and highest interrupt rate per vector, the notes (keys ignored,
rounded, refused, values that select an adaptive mode), the warnings with
their numbers, the commands (for the interface the input named), the forms
that keep the setting after a reboot and the simulator's moderation table.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from holdoff.inputs import printable

_KIND_STYLE = {"ignored": "yellow", "refused": "red", "rounded": "yellow", "adaptive": "cyan"}


def _us(value: float | None) -> str:
    return "–" if value is None else f"{value:,.3f}".rstrip("0").rstrip(".")


def _rate(value: float | None, unit: str) -> str:
    return "–" if value is None else f"{value:,.0f} {unit}"


def _host_line(host: dict[str, Any]) -> Text:
    """What the host file measured over its window, in one line."""
    size = host["mean_rx_packet_bytes"]
    irqs = sum(host["interrupts_per_s"].values())
    line = Text(f"host {printable(host['iface'])} over {host['seconds']:.1f} s: ", style="dim")
    line.append(
        f"RX {_rate(host['rx_pps'], 'packets/s')}"
        + (f" of {size:,.0f} B" if size is not None else "")
        + f", TX {_rate(host['tx_pps'], 'packets/s')}, "
        f"{irqs:,.0f} interrupts/s on {len(host['interrupts_per_s'])} vectors, "
        f"{host['queues'] or '–'} queues",
        style="dim",
    )
    return line


def _channels_line(report: dict[str, Any]) -> Text:
    """Queues and vectors (``ethtool -l``), the port's interrupt ceiling over
    its queue vectors and the flow control (``ethtool -a``), in one line."""
    ch = report["channels"]
    parts = []
    for kind in ("combined", "rx", "tx"):
        if ch[kind]:
            top = f" of {ch['max_' + kind]}" if ch.get("max_" + kind) else ""
            parts.append(f"{ch[kind]} {kind}{top}")
    queues = ", ".join(parts) or "1 queue"
    pairs = " (RX and TX queue pairs)" if ch["paired"] else ""
    other = f" + {ch['other']} other (no queue)" if ch["other"] else ""
    line = Text(f"queues: {queues}{pairs}; vectors: {ch['queue_vectors']}{other}", style="bold")
    total = report.get("max_interrupts_per_s_all_queue_vectors")
    if total is not None:
        line.append(f"   highest over the {ch['queue_vectors']} queue vectors: {total:,.0f}/s")
    pause = report.get("pause")
    if pause and pause.get("sends_pause") is not None:
        line.append(f"   TX flow control: {'on' if pause['sends_pause'] else 'off'}")
    return line


def render_explain(report: dict[str, Any]) -> Group:
    """The explanation as a rich renderable."""
    parts: list[RenderableType] = []
    a = report["assumptions"]
    head = Text()
    head.append(report["driver"], style="bold cyan")
    head.append(f" on {report['chip']}: ")
    head.append(report["mode"], style="bold")
    head.append(
        f"   (assumed: {a['speed_mbps']} Mb/s, RX ring {a['rx_ring']}, TX ring {a['tx_ring']}, "
        f"TSQ {a['tsq_bytes']} B)",
        style="dim",
    )
    parts.append(head)
    if report["adaptive"]:
        parts.append(Text(report["adaptive"]))
    host = report.get("host")
    if host:
        parts.append(_host_line(host))
        # What the host file could not say, and what is assumed instead.
        for message in host.get("messages") or []:
            parts.append(Text(f"host file: {printable(message)}", style="yellow"))
    if not report["given"]:
        what = f"what {printable(report['iface'])} runs" if host else "a host's setting"
        parts.append(
            Text(
                f"no setting was read or given: every value below is {report['driver']}'s "
                f"default, not {what}",
                style="bold yellow",
            )
        )

    settings = Table(title="settings", title_justify="left", show_edge=False)
    settings.add_column("knob")
    settings.add_column("value", justify="right")
    settings.add_column("from")
    for key, value in report["settings"].items():
        settings.add_row(key, str(value), "given" if key in report["given"] else "default")
    parts.append(settings)

    regs = Table(title="registers the device applies", title_justify="left", show_edge=False)
    regs.add_column("register")
    regs.add_column("value", justify="right")
    regs.add_column("unit")
    regs.add_column("interval [us]", justify="right")
    regs.add_column("acts")
    regs.add_column("note")
    for r in report["registers"]:
        value = str(r["value"]) + (f" (word {r['word']:#x})" if r["word"] is not None else "")
        regs.add_row(
            r["register"],
            value,
            r["unit"],
            _us(r["interval_us"]),
            "yes" if r["acts"] else "no",
            r["note"],
        )
    parts.append(regs)

    interval = report["interval_us"]
    rate = report["max_interrupts_per_s_per_vector"]
    line = Text()
    if interval is None:
        line.append("interval: no throttle", style="bold")
    elif interval["min"] == interval["max"]:
        line.append(f"interval: {_us(interval['min'])} us", style="bold")
    else:
        line.append(f"interval: {_us(interval['min'])} to {_us(interval['max'])} us", style="bold")
    line.append(
        "   highest interrupt rate per vector: "
        + ("unbounded by the throttle" if rate is None else f"{rate:,.0f}/s")
    )
    if report["rx_delay_us"] or report["tx_delay_us"]:
        rx, tx = _us(report["rx_delay_us"]), _us(report["tx_delay_us"])
        line.append(f"   delay timers: RX {rx} us, TX {tx} us")
    parts.append(line)
    if report.get("channels"):
        parts.append(_channels_line(report))

    for n in report["notes"]:
        t = Text(f"{n['kind']}: ", style=_KIND_STYLE.get(n["kind"], "dim"))
        # Keys and messages can quote the input: control characters are escaped.
        t.append(f"{printable(n['key'])}: {printable(n['message'])}")
        parts.append(t)
    for w in report["warnings"]:
        parts.append(Text(f"warning: {w['key']}: {w['message']}", style="yellow"))
    if report.get("skipped"):
        parts.append(
            Text(f"not moderation knobs, skipped: {len(report['skipped'])} lines", style="dim")
        )
    if report.get("unsupported"):
        parts.append(
            Text(
                f"the driver does not report (ethtool n/a): {', '.join(report['unsupported'])}",
                style="dim",
            )
        )
    if report["commands"]:
        where = {"input": "named in the input", "--iface": "from --iface"}.get(
            report.get("iface_from", ""), "not named in the input: give --iface"
        )
        parts.append(Text(f"to set it now (interface {report['iface']}, {where}):", style="bold"))
        parts.extend(Text("  " + c) for c in report["commands"])
    if report.get("persistent"):
        parts.append(Text("to keep it after a reboot (--emit KIND prints one):", style="bold"))
        for form in report["persistent"]:
            where = form["path"] or "a command"
            left = form.get("left_out") or []
            without = f"; leaves out: {', '.join(left)}" if left else ""
            parts.append(Text(f"  {form['kind']}: {where}; needs: {form['needs']}{without}"))
            if form.get("note"):
                parts.append(Text(f"    {form['note']}", style="dim"))
    if report["scenario"] is not None:
        mod = report["scenario"]["moderation"]
        body = ", ".join(
            f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}".replace("'", '"')
            for k, v in mod.items()
        )
        parts.append(Text(f"scenario: moderation = {{ {body} }}", style="dim"))
    elif report["scenario_note"]:
        parts.append(Text(f"scenario: none ({report['scenario_note']})", style="dim"))
    return Group(*parts)
