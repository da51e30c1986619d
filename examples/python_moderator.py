"""A moderation algorithm written in Python: 4000 interrupts/s when busy, 20000/s otherwise.

Run it with ``python examples/python_moderator.py`` (or copy it out with
``holdoff examples copy python_moderator.py``). An e1000-family port (82546,
ITR in 256 ns units) on an ideal host receives 64-byte UDP frames at
300 kframes/s for 100 ms. The port starts at 8000/s; the first interrupt
sees about 300000 / 8000 = 37 frames, more than 32, so the class asks for
4000/s (ITR 976). In this run the calls alternate between a busy and a quiet
sample (half of the calls each), so the port ends between the two settings:
the script prints about 6700 interrupts/s, and the share of busy calls.
"""

from __future__ import annotations

from typing import Any

import holdoff


class HalfRate(holdoff.Moderator):
    """Busy (more than 32 frames since the last interrupt): 4000/s, else 20000/s."""

    name = "half-rate"
    invocation = "per_interrupt"  # or "per_poll", "periodic" (period_us), "never"

    def initial(self) -> dict[str, int]:
        return {"itr_256ns": 488}  # 1e9 / (488 * 256 ns) = 8004/s at interface up

    def __init__(self) -> None:
        self.calls = 0
        self.busy_calls = 0

    def on_sample(self, s: holdoff.Sample) -> dict[str, int]:
        busy = s.rx_packets + s.tx_packets > 32
        self.calls += 1
        self.busy_calls += busy
        return {"itr_256ns": 976 if busy else 195}  # 4002/s or 20032/s


SCENARIO: dict[str, Any] = {
    "name": "python-moderator",
    "duration_ms": 100,
    "hosts": [
        {
            "name": "dut",
            "profile": "ideal",
            "nics": [
                {"name": "eth0", "chip": "82546", "moderation": {"kind": "python", "class": "half"}}
            ],
        }
    ],
    "generators": [{"name": "gen", "rate_pps": 300_000, "frame_bytes": 64}],
    "links": [{"a": "gen", "b": "dut.eth0"}],
    "apps": [{"kind": "udp_sink", "name": "sink", "host": "dut"}],
}


class Recording(HalfRate):
    """HalfRate that keeps its instances, to report how often it saw a busy interval."""

    instances: list[HalfRate] = []

    def __init__(self) -> None:
        super().__init__()
        Recording.instances.append(self)


def main() -> None:
    result = holdoff.run(SCENARIO, moderators={"half": Recording})
    port = result.ports.set_index("port").loc["dut.eth0"]
    calls = sum(m.calls for m in Recording.instances)
    busy = sum(m.busy_calls for m in Recording.instances)
    print(f"dut.eth0: {port['interrupts_per_s']:,.0f} interrupts/s with {HalfRate.name}")
    print(f"{busy} of {calls} calls saw more than 32 frames")


if __name__ == "__main__":
    main()
