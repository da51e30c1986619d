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
from pathlib import Path
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
    # igb reports tx-frames-irq (its TX work limit, 128): a reported field, not "unsupported".
    assert ("info", "tx-frames-irq") in kinds
    note = next(n for n in report["notes"] if n["key"] == "tx-frames-irq")
    assert "work limit" in note["message"] and note["message"].startswith("128")
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


# -- the corpus of real outputs (tests/data/ethtool/, sources in SOURCES.md) -----------

CORPUS_DIR = REPO / "tests" / "data" / "ethtool"

# (file, holdoff driver it is explained as, interface the file names, what the file says)
# Each expected value is read off the file itself: e.g. the mlx4 output prints
# "Adaptive RX: on" and "rx-usecs: 16"; the tg3 -g output "Current hardware
# settings: RX: 200 ... TX: 511"; the ethtool 6.4-6.13 line "tx-aggr-time-usecs\tn/a"
# (no colon) is an n/a field, not garbage.
CORPUS: list[tuple[str, str, str | None, dict[str, Any]]] = [
    ("mlx4_en-eth2-c.txt", "linux-dim", "eth2", {"adaptive-rx": 1, "rx-usecs": 16}),
    ("tg3-eth0-c.txt", "linux-dim", "eth0", {"adaptive-rx": 0, "rx-usecs": 20, "rx-frames": 5}),
    ("tg3-eth0-g.txt", "linux-dim", "eth0", {"rx_ring": 200, "tx_ring": 511}),
    (
        "mcp251xfd-can0-g-c.txt",
        "linux-dim",
        "can0",
        {"rx_ring": 20, "tx_ring": 4, "n/a": "rx-usecs", "ignored": "rx-frames-irq"},
    ),
    ("ixgbevf-eth0-c.txt", "linux-ixgbe", "eth0", {"rx-usecs": 1, "mode": "adaptive"}),
    ("enp1s0-cqe-c.txt", "linux-igb", "enp1s0", {"rx-usecs": 3, "n/a": "cqe-mode-rx"}),
    ("eno1-aggr-c.txt", "linux-e1000e", "eno1", {"rx-usecs": 3, "n/a": "tx-aggr-time-usecs"}),
    ("eno1-aggr-g.txt", "linux-e1000e", "eno1", {"rx_ring": 256, "tx_ring": 256}),
    ("usb-netlink-error-c.txt", "linux-e1000e", None, {"refused": "ethtool -c"}),
    ("ena-eth0-netlink-error-C.txt", "linux-ena", "eth0", {"refused": "cqe-mode-rx"}),
    (
        "ena-ens7-c-head.txt",
        "linux-ena",
        "ens7",
        {"adaptive-rx": 0, "rx-usecs": 0, "tx-usecs": 0, "mode": "off"},
    ),
    ("virtio_net-eth1-c.txt", "linux-dim", "eth1", {"rx-frames": 23, "n/a": "rx-usecs"}),
    ("vmxnet3-eth0-c.txt", "linux-dim", "eth0", {"adaptive-rx": 0, "rx-usecs": 250}),
    (
        "e1000e-sys-module-parameters.txt",
        "linux-e1000e",
        None,
        {"info": "/sys/module/e1000e/parameters"},
    ),
    ("e1000e-openwrt-modparams.txt", "linux-e1000e", None, {"InterruptThrottleRate": 4}),
    (
        "igb-eth0-c-ethtool3-constructed.txt",
        "linux-igb",
        "eth0",
        {"rx-usecs": 3, "tx-frames-irq": 128},
    ),
    (
        "igb-enp3s0-c-ethtool5-constructed.txt",
        "linux-igb",
        "enp3s0",
        {"rx-usecs": 50, "tx-frames-irq": 128, "mode": "static"},
    ),
    ("igb-enp3s0-json-ethtool6.14-constructed.json", "linux-igb", "enp3s0", {"rx-usecs": 3}),
    (
        "ice-ens801f0-c-ethtool6-constructed.txt",
        "linux-ice",
        "ens801f0",
        {"adaptive-rx": 1, "rx-usecs": 50, "rx-usecs-high": 0, "mode": "adaptive"},
    ),
    (
        "i40e-enp59s0f0-C-c-ethtool6-constructed.txt",
        "linux-i40e",
        "enp59s0f0",
        {"adaptive-rx": 0, "rx-usecs": 84, "tx-frames-irq": 256, "mode": "static"},
    ),
    (
        "mlx5-ens1f0np0-json-ethtool6.10-constructed.json",
        "linux-mlx5",
        "ens1f0np0",
        # adaptive first ("rx": true), CQE mode second ("rx": false)
        {"adaptive-rx": 1, "cqe-mode-rx": 0, "rx-frames": 128, "tx-usecs": 16, "mode": "adaptive"},
    ),
    (
        "freebsd-em1-sysctl-a-grep-constructed.txt",
        "freebsd-em",
        "em1",
        {"enable_aim": 0, "tx_int_delay": 66},
    ),
]


def test_the_corpus_is_all_listed_with_sources() -> None:
    names = {p.name for p in CORPUS_DIR.iterdir()} - {"SOURCES.md"}
    assert names == {row[0] for row in CORPUS}
    sources = (CORPUS_DIR / "SOURCES.md").read_text()
    assert all(f"`{name}`" in sources for name in names)
    real = [n for n in names if "constructed" not in n]
    assert len(real) >= 15


@pytest.mark.parametrize(("name", "driver", "iface", "expected"), CORPUS)
def test_every_corpus_file_is_read_and_explained(
    name: str, driver: str, iface: str | None, expected: dict[str, Any]
) -> None:
    from holdoff import knobs

    parsed = knobs.parse((CORPUS_DIR / name).read_text(encoding="utf-8"), driver)
    assert parsed.iface == iface
    notes = {(n.kind, n.key) for n in parsed.notes}
    for key, value in expected.items():
        if key == "n/a":
            assert value in parsed.unsupported
        elif key in ("refused", "ignored", "info"):
            assert any(k == key and value in nk for k, nk in notes), (key, value, notes)
        elif key in ("rx_ring", "tx_ring"):
            assert getattr(parsed, key) == value
        elif key == "mode":
            continue
        elif key in parsed.reported:
            assert parsed.reported[key] == value
        else:
            assert parsed.settings[key] == value, key
    report = knobs.explain(
        driver, parsed.settings, extra_notes=parsed.notes, iface=parsed.iface, unit=parsed.unit
    )
    if "mode" in expected:
        assert report["mode"] == expected["mode"]
    name_used = iface or "eth0"
    assert report["iface"] == name_used
    for line in report["commands"]:
        if "ethtool -C" in line or "/sys/class/net/" in line:
            assert f" {name_used} " in line or f"/{name_used}/" in line, line
        if driver == "freebsd-em" and line.startswith("sysctl"):
            assert line.startswith(f"sysctl dev.em.{parsed.unit}."), line


def test_enp3s0_input_gives_enp3s0_commands(capsys: pytest.CaptureFixture[str]) -> None:
    # The case: the input named enp3s0, the commands said eth0.
    report = explain_json(
        capsys, "-d", "linux-igb", CORPUS_DIR / "igb-enp3s0-c-ethtool5-constructed.txt"
    )
    assert report["commands"] == ["ethtool -C enp3s0 rx-usecs 50"]


def test_emit_one_persistent_form(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    import configparser

    source = CORPUS_DIR / "igb-enp3s0-c-ethtool5-constructed.txt"
    code, out, err = run(capsys, "explain", "-d", "linux-igb", source, "--emit", "networkd")
    assert code == 0, err
    link = configparser.ConfigParser()
    link.optionxform = str  # type: ignore[assignment,method-assign]
    link.read_string(out)
    assert dict(link["Match"]) == {"Property": "ID_NET_NAME_PATH=enp3s0"}
    assert link["Link"]["RxCoalesceSec"] == "50us"
    # What the file matches on and what it replaces, on stderr (stdout is the file).
    assert "99-default.link" in err
    target = tmp_path / "50-enp3s0.link"
    code, out, err = run(
        capsys, "explain", "-d", "linux-igb", source, "--emit", "nm", "--emit-to", target
    )
    assert code == 0 and out == "", err
    assert "ethtool.coalesce-rx-usecs 50" in target.read_text()
    assert "needs: connection re-activation" in err
    report = explain_json(
        capsys, "-d", "freebsd-em", CORPUS_DIR / "freebsd-em1-sysctl-a-grep-constructed.txt"
    )
    assert [f["kind"] for f in report["persistent"]] == ["sysctl"]
    assert report["commands"][0] == "sysctl dev.em.1.enable_aim=0"


def test_explain_from_a_host_file(capsys: pytest.CaptureFixture[str]) -> None:
    host = REPO / "tests" / "data" / "collect" / "ixgbe-eno1.json"
    # The host file names its driver (ixgbe), chip (PCI 8086:1563, IXGBE_DEV_ID_X550T),
    # interface and rings: no other flag is needed.
    report = explain_json(capsys, "--from", host)
    assert (report["driver"], report["chip"], report["iface"]) == ("linux-ixgbe", "x550", "eno1")
    assert report["settings"]["rx-usecs"] == 3
    assert report["assumptions"]["rx_ring"] == 256
    assert report["commands"] == ["ethtool -C eno1 rx-usecs 3"]
    # The window's rates ride along: 1 000 000 RX packets in the fixture's 10 s.
    assert report["host"]["rx_pps"] == 100_000 and "sysctls" not in report["host"]


def test_explain_says_when_the_host_file_holds_no_setting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The same host file collected where ethtool is missing: the driver still
    # comes from sysfs, but no coalescing, rings or channels were read. The
    # terminal says so, and that every value shown is the driver's default.
    doc = json.loads((REPO / "tests" / "data" / "collect" / "ixgbe-eno1.json").read_text())
    for cmd in doc["ethtool"].values():
        cmd.update(error="ethtool is not installed (not found on PATH)", rc=None, stdout="")
    host = tmp_path / "no-ethtool.json"
    host.write_text(json.dumps(doc))
    code, out, err = run(capsys, "explain", "--from", host)
    assert code == 0, err
    text = " ".join(out.split())
    assert (
        "no setting was read or given: every value below is linux-ixgbe's default, "
        "not what eno1 runs" in text
    )
    assert "host file: coalescing: neither ethtool --json -c nor ethtool -c gave output" in text
    # With the settings read, neither line.
    code, out, _ = run(
        capsys, "explain", "--from", REPO / "tests" / "data" / "collect" / "ixgbe-eno1.json"
    )
    assert code == 0 and "no setting was read" not in out and "host file: coalescing" not in out


BAD_NEW: list[tuple[list[object], str]] = [
    (["-d", "linux-igb", "--emit", "netplan", "-s", "rx-usecs=50"], "--emit: unknown kind"),
    (["-d", "linux-igb", "--emit", "loader", "-s", "rx-usecs=50"], "--emit: loader does not apply"),
    (["-d", "linux-igb", "--emit-to", "x.link", "-s", "rx-usecs=50"], "--emit-to needs --emit"),
    (["-d", "linux-igb", "--rx-ring", "-8"], "--rx-ring: -8 descriptors is outside"),
    (["-d", "linux-igb", "--tx-ring", str(10**21)], "range 64 to 4096"),
    (["--from", "missing-host.json"], "--from host file not found"),
    (["--from", REPO / "tests" / "data"], "is a directory"),
    (["--from", REPO / "tests" / "data" / "collect" / "tg3-eth0.json"], "driver tg3: holdoff"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_NEW)
def test_bad_new_flags_exit_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str], argv: list[object], message: str
) -> None:
    code, out, err = run(capsys, "explain", *argv)
    assert code == 2 and out == "", err
    assert message in " ".join(err.split())
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json {", "is not valid JSON"),
        ("[1, 2, 3]", "not a holdoff collect file"),
        ("[" * 5000 + "]" * 5000, "levels deep"),
        ('{"schema": "holdoff-collect/1", "iface": "eth0", "ethtool": 5}', "wrong type"),
    ],
)
def test_bad_host_files_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Any, content: str, message: str
) -> None:
    host = tmp_path / "host.json"
    host.write_text(content)
    code, out, err = run(capsys, "explain", "--from", host)
    assert code == 2 and out == ""
    assert "--from" in err and message in " ".join(err.split())


@pytest.mark.parametrize(("name", "driver", "iface", "expected"), CORPUS)
def test_the_command_line_accepts_every_corpus_file(
    capsys: pytest.CaptureFixture[str],
    name: str,
    driver: str,
    iface: str | None,
    expected: dict[str, Any],
) -> None:
    report = explain_json(capsys, "-d", driver, CORPUS_DIR / name)
    assert report["iface"] == (iface or "eth0")
    assert report["iface_from"] == ("input" if iface else "default")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("ethtool -C eth0 rx-usecs\n", "rx-usecs"),
        ('{"ifname": "eth0", "rx-usecs": [1]}', "rx-usecs"),
        ("Adaptive RX: maybe  TX: off\n", "adaptive-rx"),
    ],
)
def test_damaged_ethtool_text_names_the_key(text: str, key: str) -> None:
    from holdoff import knobs

    with pytest.raises(knobs.KnobError) as err:
        knobs.parse(text, "linux-igb")
    assert err.value.key == key


def test_interface_names_that_cannot_be_pasted_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    # A name from the input lands in a command the operator pastes into a shell.
    source = tmp_path / "c.txt"
    source.write_text("Coalesce parameters for eth0;reboot:\nrx-usecs: 50\n")
    code, out, err = run(capsys, "explain", "-d", "linux-igb", source)
    assert code == 2 and out == "" and "input: 'eth0;reboot' is not an interface name" in err
    code, out, err = run(
        capsys, "explain", "-d", "linux-igb", "-s", "rx-usecs=50", "--iface", "a b"
    )
    assert code == 2 and "--iface" in err


def test_forms_say_what_they_leave_out(capsys: pytest.CaptureFixture[str]) -> None:
    # systemd.link and NetworkManager have no CQE-mode key: the listing names
    # the knob each form drops and prints the rule that keeps it.
    code, out, err = run(
        capsys,
        "explain",
        "-d",
        "linux-mlx5",
        "--set",
        "adaptive-rx=0",
        "--set",
        "cqe-mode-rx=0",
        "--iface",
        "enp65s0f0np0",
    )
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "networkd: /etc/systemd/network/50-holdoff-enp65s0f0np0.link; needs: interface reset; "
        "leaves out: cqe-mode-rx" in flat
    )
    assert "nm: a command; needs: connection re-activation; leaves out: cqe-mode-rx" in flat
    assert 'NAME=="enp65s0f0np0", RUN+="/sbin/ethtool -C $name cqe-mode-rx off"' in flat
