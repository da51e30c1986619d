"""holdoff explain: the shipped inputs decoded to their registers, and bad input refused.

Expected registers follow the driver rules (see tests/test_knobs.py and
docs/knobs.md): e1000 rx-usecs 3 is dynamic conservative starting at
20000/s (ITR 1e9/(20000*256) = 195); igb rx-usecs 1 is dynamic and its first
interrupt writes IGB_START_ITR 648 (162 us); igb rx-usecs 50 writes raw
50 << 2 = 200 with CNT_IGNR; FreeBSD em enable_aim 1 boots with
EM_INTS_TO_ITR(8000) = 488.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from holdoff.cli import main
from scenarios import REPO

EXPLAIN = REPO / "examples" / "explain"


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def explain_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict[str, Any]:
    code, out, err = run(capsys, "explain", "--json", *argv)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def regs(report: dict[str, Any]) -> dict[str, tuple[int, float | None, bool]]:
    return {r["register"]: (r["value"], r["interval_us"], r["acts"]) for r in report["registers"]}


# (file, driver, extra args, expected registers, mode, highest rate per vector)
SHIPPED: list[tuple[str, str, list[str], dict[str, tuple[int, float | None, bool]], str, float]] = [
    (
        "e1000-rx-usecs-3.json",
        "linux-e1000",
        [],
        {
            "ITR": (195, 49.92, True),
            "RDTR": (0, 0.0, True),
            # RDTR = 0: RADV never runs.
            "RADV": (8, 8.192, False),
            "TIDV": (8, 8.192, True),
            "TADV": (32, 32.768, True),
        },
        "adaptive",
        # 1e9 / (195 * 256)
        20032.1,
    ),
    ("igb-rx-usecs-1.json", "linux-igb", [], {"EITR": (162, 162.0, True)}, "adaptive", 71428.6),
    ("igb-rx-usecs-50.json", "linux-igb", [], {"EITR": (50, 50.0, True)}, "static", 20000.0),
    (
        "freebsd-em-sysctl.txt",
        "freebsd-em",
        [],
        {
            # 82574 in MSI-X mode: EITR_82574, and the delay timers are bypassed.
            "EITR": (488, 124.928, True),
            "RDTR": (0, 0.0, True),
            "RADV": (66, 67.584, False),
            "TIDV": (66, 67.584, False),
            "TADV": (66, 67.584, False),
        },
        "adaptive",
        20032.1,
    ),
    (
        "freebsd-em-sysctl.txt",
        "freebsd-em",
        ["--chip", "82546"],
        {
            "ITR": (488, 124.928, True),
            "RADV": (66, 67.584, False),
            # INTx on an 82546: TIDV/TADV act (tx_int_delay > 0 sets IDE).
            "TIDV": (66, 67.584, True),
            "TADV": (66, 67.584, True),
        },
        "adaptive",
        20032.1,
    ),
]


@pytest.mark.parametrize(("file", "driver", "extra", "expected", "mode", "rate"), SHIPPED)
def test_shipped_inputs_decode_to_their_registers(
    capsys: pytest.CaptureFixture[str],
    file: str,
    driver: str,
    extra: list[str],
    expected: dict[str, tuple[int, float | None, bool]],
    mode: str,
    rate: float,
) -> None:
    report = explain_json(capsys, "-d", driver, *extra, EXPLAIN / file)
    got = regs(report)
    for name, value in expected.items():
        assert got[name] == value, name
    assert report["mode"] == mode
    assert report["max_interrupts_per_s_per_vector"] == rate


def test_explain_names_adaptive_values_and_ignored_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = explain_json(capsys, "-d", "linux-igb", EXPLAIN / "igb-rx-usecs-1.json")
    kinds = {(n["kind"], n["key"]) for n in report["notes"]}
    assert ("adaptive", "rx-usecs") in kinds
    assert ("ignored", "tx-frames-irq") in kinds
    assert report["interval_us"] == {"min": 14.0, "max": 245.0}
    assert report["scenario"]["moderation"] == {"kind": "igb", "rx_usecs": 1}
    assert report["commands"] == ["ethtool -C eth0 rx-usecs 1"]
    word = next(r["word"] for r in report["registers"])
    assert word == (648 & 0x7FFC) | 0x8000_0000
    dump = explain_json(capsys, "-d", "freebsd-em", EXPLAIN / "freebsd-em-sysctl.txt")
    assert dump["skipped"] == [
        "dev.em.0.%desc",
        "dev.em.0.%driver",
        "dev.em.0.rx_processing_limit",
        "dev.em.0.queue_rx_0.interrupt_rate",
    ]


def test_warnings_and_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    report = explain_json(capsys, "-d", "linux-igb", "--set", "rx-usecs=200")
    assert report["assumptions"] == {
        "speed_mbps": 1000,
        "rx_ring": 256,
        "tx_ring": 256,
        "tsq_bytes": 1 << 20,
    }
    assert [w["message"][:3] for w in report["warnings"]] == ["RX:", "TX:"]
    # A 1024-descriptor ring lasts 688.1 us at 64 bytes: no ring warning at 200 us.
    assert (
        explain_json(
            capsys,
            "-d",
            "linux-igb",
            "-s",
            "rx-usecs=200",
            "--rx-ring",
            "1024",
            "--tx-ring",
            "1024",
        )["warnings"]
        == []
    )


def test_stdin_and_text_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Coalesce parameters for eth0:\nrx-usecs: 62\n"))
    code, out, err = run(capsys, "explain", "-d", "linux-e1000", "-")
    assert code == 0, err
    assert "ITR" in out and "242" in out and "ethtool -C eth0 rx-usecs 62" in out


BAD: list[tuple[list[str], str]] = [
    (["explain", "--set", "rx-usecs=50"], "--driver is required"),
    (["explain", "-d", "linux-r8169", "--set", "rx-usecs=50"], "unknown driver"),
    (["explain", "-d", "linux-igb", "--chip", "82546"], "does not drive"),
    (["explain", "-d", "linux-igb", "missing-file.json"], "file not found"),
    (["explain", "-d", "linux-igb", "--set", "rx-usecs=7"], "rx-usecs: got 7"),
    (["explain", "-d", "linux-igb", "--set", "rx-usecs=fast"], "is not an integer"),
    (["explain", "-d", "linux-igb", "--set", "rx-usecs"], "expected KEY=VALUE"),
    (["explain", "-d", "linux-igb", "--set", "InterruptThrottleRate=3"], "not a knob"),
    (["explain", "-d", "freebsd-em", "--set", "enable_aim=-1"], "cannot be negative"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_exits_2_naming_the_key(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in " ".join(err.split())
