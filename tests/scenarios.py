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
