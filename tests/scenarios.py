"""Scenario inputs shared by the tests: the example files and one small inline scenario.

The inline scenario is the single place that spells out the scenario file
format for the error tests; update it here when the format changes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SCRIPTS = REPO / "scripts"
QUICKSTART = EXAMPLES / "quickstart.toml"

# A tiny, fast, valid scenario: a 64-byte generator into one NIC of one host.
# `{chip}`, `{driver}`... are the fields the error tests break on purpose.
INLINE_TEMPLATE = """\
name = "{name}"
seed = {seed}
duration_ms = {duration_ms}

[[hosts]]
name = "dut"
profile = "ideal"
driver = "{driver}"

[[hosts.nics]]
name = "eth0"
chip = "{chip}"

[[generators]]
name = "gen"
rate_pps = {rate_pps}
frame_bytes = 64

[[links]]
a = "gen"
b = "dut.eth0"

[[apps]]
kind = "udp_sink"
name = "sink"
host = "dut"
"""

INLINE_DEFAULTS: dict[str, Any] = {
    "name": "inline",
    "seed": 1,
    "duration_ms": 10,
    "driver": "napi",
    "chip": "82546",
    "rate_pps": 10000,
}


def inline_scenario(**overrides: Any) -> str:
    """The inline scenario as TOML text, with some fields replaced."""
    unknown = set(overrides) - set(INLINE_DEFAULTS)
    if unknown:
        raise KeyError(f"not a field of the inline scenario: {sorted(unknown)}")
    return INLINE_TEMPLATE.format(**{**INLINE_DEFAULTS, **overrides})


def load_script(name: str) -> ModuleType:
    """The module ``scripts/<name>.py`` (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MANY_FLOWS = EXAMPLES / "captures" / "many-flows.pcap"


def tune_fewest_cores_on_many_flows(driver: str, chip: str, capsys: Any) -> dict[str, Any]:
    """`holdoff tune --objective fewest-cores` over the shipped many-flow
    capture (1.6 million frames/s; xeon-modern spends rx_packet_ns = 0.9 us a
    frame, 1.6e6 x 0.9e-6 = 1.44 cores of receive work), searching the IRQ
    cores and the UDP hash. Checks what holds for every multi-queue driver:
    one core cannot carry the load and drops; the pick drops nothing on 2 or
    4 cores; one smp_affinity_list line per queue vector. Returns the JSON
    result for the driver-specific checks."""
    import json

    from holdoff.cli import main

    code = main(
        [
            "tune",
            "--driver",
            driver,
            "--chip",
            chip,
            "--capture",
            str(MANY_FLOWS),
            "--objective",
            "fewest-cores",
            "--knob",
            "irq-cores",
            "--knob",
            "udp4-sdfn",
            "--seeds",
            "1",
            "--no-store",
            "--executor",
            "serial",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    one_core = [p for p in data["points"] if p["settings"]["irq-cores"] == 1]
    assert one_core and all(p["drops"] > 0 for p in one_core)
    rec = data["recommended"]
    assert rec is not None and rec["drops"] == 0
    assert rec["settings"]["irq-cores"] in (2, 4)
    affinity = [line for line in data["paste"] if "smp_affinity_list" in line]
    assert len(affinity) == rec["settings"]["combined"]
    return data
