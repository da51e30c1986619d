"""holdoff collect: the fixtures read back, the standalone script on this machine, bad input.

Expected values of the fixtures come from how they were built
(tests/data/collect/README.md): counters that grew by 400 000 RX packets and
120 000 000 bytes over 10 s are 40 000 packets/s of 300 bytes; a vector whose
count grew by 30 000 in 10 s interrupts 3 000 times a second; 100 of a CPU's
1000 ticks in softirq is 10 %. Rings and queues are what the recorded ethtool
text prints ("Current hardware settings: RX: 200 ... TX: 511"; "Combined: 8").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from holdoff import collect
from holdoff.cli import main
from holdoff.hostinfo import HostInfoError, host_from_dict, read_host
from scenarios import REPO

DATA = REPO / "tests" / "data" / "collect"


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tg3_fixture_a_driver_holdoff_does_not_model() -> None:
    host = read_host(DATA / "tg3-eth0.json")
    assert (host.iface, host.ethtool_driver, host.driver, host.chip) == ("eth0", "tg3", None, None)
    assert any("driver tg3" in m and "--driver" in m for m in host.messages)
    assert any("not a controller holdoff models" in m for m in host.messages)
    assert (host.rx_ring, host.tx_ring, host.rx_ring_max) == (200, 511, 511)
    assert host.queues == 4  # "Current hardware settings: RX: 4" (no combined channels)
    assert host.seconds == 10.0
    assert host.rx_pps == 40_000 and host.tx_pps == 20_000
    assert host.mean_rx_packet_bytes == 300 and host.mean_tx_packet_bytes == 1500
    assert host.rx_bps == 40_000 * 300 * 8
    assert host.interrupts_per_s["eth0-rx-1"] == 4000  # 40 000 more in 10 s
    assert host.cpu_softirq_pct["cpu0"] == pytest.approx(12.0)  # 120 of 1000 ticks
    assert host.cpu_busy_pct["cpu1"] == pytest.approx(20.0)
    assert host.speed_mbps == 1000
    assert host.sysctls["net.core.netdev_budget"] == "300"


def test_a_virtio_guest_is_not_taken_for_a_dim_nic() -> None:
    # The tg3 file as a virtio_net guest would give it (sysfs driver link
    # virtio_net, PCI 1af4:1000): no model, and the reason says why instead
    # of describing mlx5-style net_dim on an i210 (virtio_net's net_dim is
    # off until adaptive-rx on, and the hypervisor's device moderates).
    doc = json.loads((DATA / "tg3-eth0.json").read_text())
    doc["device"].update(driver="virtio_net", vendor="0x1af4", device="0x1000")
    doc["ethtool"] = {}
    host = host_from_dict(doc)
    assert (host.driver, host.chip) == (None, None)
    (why,) = [m for m in host.messages if m.startswith("driver virtio_net")]
    assert "paravirtual" in why and "--driver" in why
    assert host.why_no_driver() == why  # what explain and tune print with "--driver is required"


@pytest.mark.parametrize(
    ("driver", "vendor", "device", "speed", "chip", "said"),
    [
        # ice_devids.h: E810-C 0x1591-0x1593, E810-XXV 0x1599-0x159B.
        ("ice", "0x8086", "0x1592", 100000, "e810-c", ""),
        ("ice", "0x8086", "0x159b", 25000, "e810-xxv", ""),
        # i40e_devids.h: i40e_is_40G_device() is 0x1583-0x1585; 0x1572 is a 10 Gb/s X710.
        ("i40e", "0x8086", "0x1583", 40000, "xl710", ""),
        ("i40e", "0x8086", "0x1572", 10000, "x710", ""),
        # A 25 Gb/s XXV710 (I40E_DEV_ID_25G_SFP28): no preset, so --chip.
        ("i40e", "0x8086", "0x158b", 25000, None, "0x158b is not one holdoff models"),
        # mlx5_core_pci_table: 0x1017 ConnectX-5, 0x101d ConnectX-6 Dx; the
        # preset is the one of the port's rate.
        ("mlx5_core", "0x15b3", "0x1017", 25000, "cx5", ""),
        ("mlx5_core", "0x15b3", "0x101d", 100000, "cx6", ""),
        ("mlx5_core", "0x15b3", "0x101f", 25000, "cx5", ""),
        ("mlx5_core", "0x15b3", "0x1019", 100000, "cx6", ""),
        ("mlx5_core", "0x15b3", "0x101d", 50000, "cx6", "its link rate is not the port's"),
        ("mlx5_core", "0x15b3", "0x101b", None, "cx6", "no link speed read"),
        # ConnectX-4 Lx (0x1015): no preset.
        ("mlx5_core", "0x15b3", "0x1015", 25000, None, "give --chip"),
        # ena_pci_id_tbl.h: 0xec20 is ENA_VF.
        ("ena", "0x1d0f", "0xec20", None, "ena", ""),
    ],
)
def test_chips_of_the_faster_drivers_from_their_pci_ids(
    driver: str, vendor: str, device: str, speed: int | None, chip: str | None, said: str
) -> None:
    doc = json.loads((DATA / "tg3-eth0.json").read_text())
    doc["device"].update(driver=driver, vendor=vendor, device=device, speed_mbps=speed)
    doc["ethtool"] = {}
    host = host_from_dict(doc)
    assert host.chip == chip
    chip_lines = [m for m in host.messages if m.startswith("chip:")]
    if said:
        assert any(said in m for m in chip_lines), chip_lines
    else:
        assert chip_lines == []


def test_ixgbe_fixture_maps_driver_chip_and_settings() -> None:
    host = read_host(DATA / "ixgbe-eno1.json")
    # ethtool driver "ixgbe" -> holdoff's linux-ixgbe; PCI 8086:1563 is IXGBE_DEV_ID_X550T
    # (ixgbe_type.h) -> the x550 preset.
    assert (host.driver, host.chip) == ("linux-ixgbe", "x550")
    # --json -c failed, so the settings come from the ethtool -c text: "rx-usecs:\t3".
    assert host.settings == {"rx-usecs": 3}
    assert any("--json -c" in m for m in host.messages)
    assert (host.rx_ring, host.tx_ring, host.rx_ring_max, host.tx_ring_max) == (
        256,
        256,
        4096,
        4096,
    )
    assert host.queues == 8
    assert host.rx_bps == 800e6 and host.mean_tx_packet_bytes == 100
    assert all(host.interrupts_per_s[f"eno1-TxRx-{i}"] == 3000 for i in range(4))
    assert host.cpu_softirq_pct["cpu3"] == pytest.approx(10.0)


def test_the_script_runs_standalone_on_this_machine(tmp_path: Path) -> None:
    # Copied out of the package and run by a bare interpreter with no holdoff on its path.
    script = tmp_path / "collect.py"
    script.write_text(collect.script_text())
    names = collect.interfaces()
    iface = next((n for n in names if n != "lo"), "lo")
    if iface not in names:
        pytest.skip("this machine has no /sys/class/net")
    out = tmp_path / "host.json"
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONNOUSERSITE": "1"}
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(script), iface, "--seconds", "0.2", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    host = read_host(out)
    assert host.iface == iface and host.seconds > 0
    data = json.loads(out.read_text())
    assert set(data["ethtool"]) == {"driver", "coalesce", "coalesce_json", "rings", "channels",
                                    "offloads"}  # fmt: skip
    for result in data["ethtool"].values():
        # Each ethtool query either ran or carries its error (this machine may have no ethtool).
        assert result["rc"] == 0 or result["error"], result
    if any(r["error"] and "not installed" in r["error"] for r in data["ethtool"].values()):
        assert any("ethtool is not installed" in m for m in host.messages)
    assert "rx_packets" in data["before"]["counters"]


def test_collect_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "collect", "--script")
    assert code == 0 and out == collect.script_text() and out.startswith("#!/usr/bin/env python3")
    code, out, _ = run(capsys, "collect")
    assert code == 0 and str(collect.script_path()) in out
    if "lo" in collect.interfaces():
        target = tmp_path / "lo.json"
        code, out, err = run(capsys, "collect", "lo", "--seconds", "0", "-o", target)
        assert code == 0, err
        assert read_host(target).iface == "lo"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["collect", "no-such-if0"], "IFACE: no interface 'no-such-if0'"),
        (["collect", "../../etc", "--seconds", "1"], "IFACE: no interface"),
        (["collect", "lo", "--seconds", "-1"], "--seconds: -1: give 0 to 3600"),
        (["collect", "lo", "--seconds", "nan"], "--seconds"),
        (["collect", "lo", "--seconds", "1e9"], "--seconds"),
    ],
)
def test_collect_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in " ".join(err.split()) and "Traceback" not in err


def test_host_files_of_the_wrong_shape_are_named() -> None:
    docs: list[object] = [[], {"schema": "other"}, {"schema": "holdoff-collect/1"}]
    for doc in docs:
        with pytest.raises(HostInfoError, match="host"):
            host_from_dict(doc, "--from host.json")


def test_the_script_refuses_bad_arguments(tmp_path: Path) -> None:
    script = tmp_path / "collect.py"
    script.write_text(collect.script_text())
    for args, text in ((["no-such-if0"], "no interface"), (["lo", "--seconds", "-5"], "--seconds")):
        proc = subprocess.run(
            [sys.executable, "-I", str(script), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 2 and text in proc.stderr and "Traceback" not in proc.stderr
