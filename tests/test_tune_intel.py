"""``holdoff tune --driver linux-ice`` end to end on the many-flow capture:
queues, the cores taking their vectors and the lines to paste, with the ice
vector names (``ice_vsi_req_irq_msix``: ``ice-PCI_ADDRESS-TxRx-N``)."""

from __future__ import annotations

import pytest

from holdoff.tune import ports
from scenarios import tune_fewest_cores_on_many_flows


def test_ice_fewest_cores_on_the_many_flow_capture(capsys: pytest.CaptureFixture[str]) -> None:
    """The capture offers 1.6 million frames/s (examples/captures/make_many_flows.py);
    the xeon-modern profile spends rx_packet_ns = 0.9 us of softirq per frame,
    1.6e6 x 0.9e-6 = 1.44 cores of receive work: one core must drop whatever
    the moderation, and with UDP hashed on ports over 256 flows two or four
    cores carry it (the mechanism of the ixgbe test; the E810's 2048-descriptor
    default ring changes how long a core may fall behind, not the load)."""
    data = tune_fewest_cores_on_many_flows("linux-ice", "e810-xxv", capsys)
    affinity = [line for line in data["paste"] if "smp_affinity_list" in line]
    assert all("/proc/irq/*/ice-$(basename $(readlink" in line for line in affinity)
    assert "systemctl disable --now irqbalance" in data["paste"]


def test_port_defaults_follow_each_driver_header() -> None:
    # ice.h ICE_DFLT_NUM_RX_DESC 2048, up to 8160; i40e.h 512, up to 8160;
    # ixgbe.h 512, up to 4096.
    assert ports.defaults("linux-ice", 4)["ring"] == 2048
    assert ports.defaults("linux-i40e", 4)["ring"] == 512
    ports.check({"combined": 2, "irq-cores": 2, "ring": 8160, "udp4-sdfn": 0}, 4, "linux-ice")
    with pytest.raises(ValueError, match="outside 64 to 4096"):
        ports.check({"combined": 2, "irq-cores": 2, "ring": 8160, "udp4-sdfn": 0}, 4)
    assert ports.vector_name("linux-i40e", "enp59s0f0", 3) == "i40e-enp59s0f0-TxRx-3"
