"""`holdoff tune` on a capture: the whole capture is simulated and said so,
spans and seeds, whose latency counts, the choice over seeds, bad flags.

Expected values: a capture's span, frames and mean rate come from the test's
own writer (tests/capture_gen.py), not from the simulator; the choice rules
are checked as mechanisms (a change is recommended only when its interval
clears the default's), and the one closed form is Student's t for three
paired differences.
"""

from __future__ import annotations

import json
import math
import struct
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import capture_gen
from holdoff import knobs, tune
from holdoff.cli import main
from holdoff.tune import decide

REPO = Path(__file__).resolve().parent.parent
OFFICE = REPO / "examples" / "captures" / "office.pcap"


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def thirty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, capture_gen.Written]:
    path = tmp_path_factory.mktemp("cap") / "thirty.pcap"
    return path, capture_gen.thirty_seconds(path)


def _tune(capsys: pytest.CaptureFixture[str], capture: Path, *extra: Any) -> tuple[dict, str]:
    base = ["tune", "--capture", capture, "--driver", "linux-igb", "--chip", "i210"]
    base += ["--objective", "p99<=100us", "--no-store", "--executor", "serial"]
    code, out, err = cli(capsys, *base, "--json", *extra)
    assert code == 0, err
    code, text, err = cli(capsys, *base, *extra)
    assert code == 0, err
    return json.loads(out), text


def test_a_thirty_second_capture_is_simulated_whole(
    capsys: pytest.CaptureFixture[str], thirty: tuple[Path, capture_gen.Written]
) -> None:
    path, w = thirty
    start = time.monotonic()
    # rx-usecs only: 16 settings x 3 seeds of 30 s each (the whole grid is
    # 816 runs, about 90 s on two cores).
    data, text = _tune(capsys, path, "--knob", "rx-usecs")
    elapsed = time.monotonic() - start
    cap = data["capture"]
    span_ns = w.last_ns - w.first_ns
    assert (cap["frames"], cap["span_ns"], cap["orig_bytes"]) == (w.frames, span_ns, w.orig_bytes)
    assert cap["whole"] and cap["share_covered"] == 1.0 and cap["frames_simulated"] == w.frames
    assert cap["simulated_ns"] >= span_ns
    assert f"span {span_ns / 1e6:,.3f} ms" in text and "Simulated: the whole capture" in text
    # The throughput column is the capture's mean rate (wire bytes over its span).
    rate = w.wire_bytes * 8 / (span_ns / 1e9)
    assert cap["mean_rate_bps"] == pytest.approx(rate, rel=1e-12)
    for point in (data["default"], data["recommended"]):
        assert point["throughput_bps"] == pytest.approx(rate, rel=0.01)
    assert elapsed < 120, f"{elapsed:.1f} s"


def test_the_shipped_capture_is_simulated_whole(capsys: pytest.CaptureFixture[str]) -> None:
    data, text = _tune(capsys, OFFICE, "--knob", "rx-usecs", "--seeds", "1")
    cap = data["capture"]
    # The fixture's writer: 1000 frames, the last 98.453 ms after the first;
    # two of them are 9014-byte TCP aggregates, cut into 7 wire segments each
    # (MSS 1460), so 1012 frames, all delivered at the capture's mean rate.
    assert cap["frames"] == 1012 and cap["span_ns"] == 98_453_000 and cap["whole"]
    assert (cap["cut_records"], cap["cut_segments"], cap["over_mtu_frames"]) == (2, 14, 0)
    assert "cut into the 14 segments" in " ".join(text.split())
    assert "span 98.453 ms" in text
    assert data["default"]["throughput_bps"] == pytest.approx(cap["deliverable_rate_bps"], rel=0.01)


def test_a_span_is_simulated_exactly_and_said(
    capsys: pytest.CaptureFixture[str], thirty: tuple[Path, capture_gen.Written]
) -> None:
    path, w = thirty
    data, text = _tune(capsys, path, "--knob", "rx-usecs", "--seeds", "1", "--span", "2s:5s")
    cap = data["capture"]
    # 3 s of 30: 5000 requests/s and 10 bursts of 40 frames a second.
    assert cap["frames_simulated"] == 3 * (5000 + 400)
    assert cap["simulated_ns"] == 3_000_000_000 and not cap["whole"]
    assert cap["share_covered"] == pytest.approx(3.0 / 29.9998)
    assert "10.0 % of the capture's span (asked by --span)" in text


@pytest.mark.parametrize(
    ("args", "flag", "says"),
    [
        (["--seeds", "0"], "--seeds", "between 1 and"),
        (["--seeds", "abc"], "--seeds", "valid integer"),
        (["--span", "5:2"], "--span", "the end must be after the start"),
        (["--span", "0:500"], "--span", "beyond the capture's last frame"),
        (["--span", "a:b"], "--span", "is not a time"),
        (["--span", "1:2", "--duration-ms", "5"], "--span", "not both"),
        (["--latency-of", "port:99999"], "--latency-of", "from 0 to 65535"),
        (["--latency-of", "foo"], "--latency-of", "cannot read 'foo'"),
        (["--latency-of", "size:300-64"], "--latency-of", "LOW <= HIGH"),
        (["--latency-of", "addr:10.0.0.300"], "--latency-of", "not an IPv4 or IPv6"),
        (["--trials", "10000000"], "--trials", "100,000"),
    ],
)
def test_bad_flags_name_the_flag_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], flag: str, says: str
) -> None:
    code, out, err = cli(
        capsys, "tune", "--capture", OFFICE, "--driver", "linux-igb", "--no-store", *args
    )
    text = " ".join(err.split())
    assert code == 2, err
    assert flag in text and says in text, err
    assert "Traceback" not in err


def test_a_capture_without_frames_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.pcap"
    capture_gen.write_pcap(empty, [])
    code, _, err = cli(capsys, "tune", "--capture", empty, "--driver", "linux-igb", "--no-store")
    assert code == 2 and "has no frames" in " ".join(err.split())


def test_optuna_stops_once_every_distinct_setting_is_tried() -> None:
    # 16 rx-usecs values: asked for 100 000 trials, the sampler stops after
    # it has asked for each of the 16 (it used to loop on cached points).
    work = tune.capture_workload(
        OFFICE, driver="linux-igb", chip="i210", profile="xeon-modern", duration_ms=5
    )
    start = time.monotonic()
    res = tune.tune(
        work,
        driver="linux-igb",
        objective=tune.parse_objective("p99<=100us"),
        search="optuna",
        trials=tune.MAX_TRIALS,
        store=None,
        executor="serial",
        only=["rx-usecs"],
        seeds=1,
    )
    assert res.tried == 16 and time.monotonic() - start < 120


def _point(driver: str, settings: dict[str, int], cpu: list[float], p99: list[float]) -> Any:
    work = tune.mix_workload("rr", driver=driver, chip=None or "", profile="xeon-modern")
    cand = tune.candidate(driver, settings, work, None)
    runs = [tune.PointMetrics(10.0, p, c, 1000.0, 1e8, 0) for c, p in zip(cpu, p99, strict=True)]
    return tune.Point(cand, tune.aggregate(runs), key=json.dumps(settings, sort_keys=True))


def test_a_change_is_recommended_only_beyond_the_interval() -> None:
    obj = tune.parse_objective("p99<=100us")
    dflt = _point("linux-igb", {"rx-usecs": 3}, [0.010, 0.011, 0.009], [60, 62, 58])
    # Overlaps the default's CPU interval: a tie, so the default stays.
    near = _point("linux-igb", {"rx-usecs": 50}, [0.0095, 0.0105, 0.0090], [80, 82, 78])
    dec = decide.settle([dflt, near], obj, dflt)
    assert dec.pick is dflt and dec.current_meets and dec.paste == []
    # Clearly below it: recommended, with the paired difference stated.
    far = _point("linux-igb", {"rx-usecs": 100}, [0.005, 0.0052, 0.0048], [90, 93, 87])
    dec = decide.settle([dflt, near, far], obj, dflt)
    assert dec.pick is far
    # CPU saved per seed: 0.50, 0.58, 0.42 points: mean 0.50, sd 0.08, and the
    # 95 % t interval's half width t(0.975, 2) * 0.08 / sqrt(3).
    half = 4.302652729911275 * 0.08 / math.sqrt(3)
    assert f"saves 0.50 ± {half:.2f} points of CPU" in dec.difference
    # p99 per seed: +30, +31, +29 us (a bootstrap interval: within the range).
    assert "costs 30.0 ± " in dec.difference
    assert dec.paste == ["ethtool -C eth0 rx-usecs 100"]


def test_pareto_keeps_a_current_setting_on_the_front() -> None:
    # With no budget, a setting that nothing beats on both p99 and CPU stays:
    # the front's knee is shown beside it as a trade, not chosen. The case
    # seen on --mix rr with linux-igb: the knee (range-scaled) doubled p99 to
    # save under a point of CPU.
    obj = tune.parse_objective("pareto")
    dflt = _point("linux-igb", {"rx-usecs": 3}, [0.136, 0.131, 0.141], [91, 92, 92])
    slow = _point("linux-igb", {"rx-usecs": 125}, [0.127, 0.122, 0.131], [176, 178, 181])
    huge = _point("linux-igb", {"rx-usecs": 250}, [0.125, 0.121, 0.129], [498, 500, 502])
    # The three form the front (less CPU always costs p99). Scaled to the
    # front's ranges (p99 91.7..500, CPU 12.5..13.6 %), the default sits at
    # (0, 1), rx-usecs 250 at (1, 0) and rx-usecs 125 at (0.21, 0.15): the
    # knee, nearest the ideal corner.
    best, _ = decide.choose([dflt, slow, huge], obj)
    assert best is slow
    dec = decide.settle([dflt, slow, huge], obj, dflt)
    assert dec.pick is dflt and dec.paste == [] and dec.difference == ""
    assert dec.alternative is slow
    assert "costs" in dec.alternative_difference and "saves" in dec.alternative_difference
    assert dec.alternative_paste == ["ethtool -C eth0 rx-usecs 125"]
    assert "no setting beats the current one on both p99 and CPU" in dec.reason
    assert "beyond their 95 % intervals" in dec.reason
    # One seed has no interval: the reason says what the comparison was.
    one = [
        _point("linux-igb", p.candidate.settings, [p.metrics.cpu_util], [p.metrics.p99_us])
        for p in (dflt, slow, huge)
    ]
    dec = decide.settle(one, obj, one[0])
    assert dec.pick is one[0]
    assert "beyond the resolution (one seed: no interval)" in dec.reason
    assert "95 %" not in dec.reason
    # A setting better on both beyond the intervals: the default is no longer
    # on the front, and the tuner recommends a change (the knee of the front
    # without it).
    both = _point("linux-igb", {"rx-usecs": 50}, [0.100, 0.101, 0.099], [80, 81, 79])
    dec = decide.settle([dflt, slow, huge, both], obj, dflt)
    assert dec.pick is both and dec.alternative is None
    assert dec.paste == ["ethtool -C eth0 rx-usecs 50"]
    # Beaten on both, but the front's knee trades. The front is {fast, mid,
    # low} (p99 30 / 200 / 400 us, CPU 13.4 / 6.0 / 5.0 %); scaled to its
    # ranges mid sits at (0.46, 0.12), nearest the ideal corner, against
    # fast's (0, 1) and low's (1, 0). Only fast beats the default (p99 91,
    # CPU 15 %) on both, so fast is recommended, not the knee.
    low = _point("linux-igb", {"rx-usecs": 250}, [0.049, 0.050, 0.051], [398, 400, 402])
    mid = _point("linux-igb", {"rx-usecs": 150}, [0.059, 0.060, 0.061], [198, 200, 202])
    fast = _point("linux-igb", {"rx-usecs": 10}, [0.134, 0.133, 0.135], [29, 30, 31])
    dflt2 = _point("linux-igb", {"rx-usecs": 3}, [0.150, 0.149, 0.151], [90, 91, 92])
    best, _ = decide.choose([low, mid, fast, dflt2], obj)
    assert best is mid
    dec = decide.settle([low, mid, fast, dflt2], obj, dflt2)
    assert dec.pick is fast and dec.paste == ["ethtool -C eth0 rx-usecs 10"]
    assert "beat the current one on both" in dec.reason


def test_the_paste_block_lists_only_what_changes_and_what_it_needs() -> None:
    # freebsd-em: enable_aim stays 1 (the default), max_interrupt_rate goes
    # to loader.conf, read at boot.
    dflt = _point("freebsd-em", {"enable_aim": 1}, [0.01] * 3, [60] * 3)
    rate = _point(
        "freebsd-em", {"enable_aim": 1, "max_interrupt_rate": 20000}, [0.01] * 3, [60] * 3
    )
    lines = decide.paste_lines(rate, dflt)
    assert not any(line.startswith("sysctl dev.em.0.enable_aim") for line in lines)
    assert any("/boot/loader.conf" in line for line in lines)
    assert decide.disruption(rate) == "a reboot" and decide.disruption(dflt) is None
    # With equal results the reboot buys nothing: the default stays.
    dec = decide.settle([dflt, rate], tune.parse_objective("p99<=100us"), dflt)
    assert dec.pick is dflt
    assert knobs.commands(dflt.candidate.decoded)  # the default's own line exists


def test_the_default_meeting_the_objective_is_said_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, text = _tune(capsys, OFFICE, "--knob", "rx-usecs", "--seeds", "1")
    assert data["current_meets_objective"]
    lines = text.splitlines()
    said = next(i for i, line in enumerate(lines) if "default meets p99<=100us" in line)
    table = next(i for i, line in enumerate(lines) if "expected, by the model" in line)
    assert said < table


def test_latency_of_is_passed_to_the_replay() -> None:
    work = tune.capture_workload(
        OFFICE, driver="linux-igb", chip="i210", profile="xeon-modern", latency_of="port:53,dscp:0"
    )
    gen = work.scenario["generators"][0]
    assert gen["latency_of"] == {"port": 53, "dscp": 0}
    assert tune.parse_latency_of("size:64-300") == {"size": [64, 300]}
    assert tune.parse_latency_of("addr:10.0.0.2") == {"address": "10.0.0.2"}


def test_struct_written_capture_has_its_requests_at_5000_per_second(tmp_path: Path) -> None:
    # The writer itself: 200-byte requests 200 us apart, checked from the file.
    path = tmp_path / "one.pcap"
    capture_gen.thirty_seconds(path, seconds=1)
    data = path.read_bytes()
    sec, usec, caplen, orig = struct.unpack("<IIII", data[24:40])
    assert (orig, caplen) == (200, capture_gen.SNAPLEN)


def _igb_host(tmp_path: Path, rx_usecs: int) -> Path:
    # The tg3 fixture's counters and windows, with the device and driver an
    # i210 on igb reports (PCI 8086:1533) and its coalescing at rx-usecs N.
    data = json.loads((REPO / "tests" / "data" / "collect" / "tg3-eth0.json").read_text())
    data["iface"] = "enp3s0"
    data["device"].update({"vendor": "0x8086", "device": "0x1533", "driver": "igb"})
    data["ethtool"]["driver"]["stdout"] = "driver: igb\nversion: 5.15\nbus-info: 0000:03:00.0\n"
    data["ethtool"]["coalesce"]["stdout"] = (
        f"Coalesce parameters for enp3s0:\nAdaptive RX: off  TX: off\nrx-usecs: {rx_usecs}\n"
        "rx-frames: 0\ntx-usecs: 0\ntx-frames-irq: 128\n"
    )
    data["ethtool"].pop("coalesce_json", None)
    path = tmp_path / "host.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _tune_office_from(host: Path) -> list[object]:
    """A one-seed rx-usecs tune of the office capture with ``--from host``."""
    return [
        *["tune", "--capture", OFFICE, "--from", host, "--objective", "p99<=100us"],
        *["--knob", "rx-usecs", "--seeds", "1", "--no-store", "--executor", "serial"],
    ]


def test_from_a_host_file_takes_driver_chip_iface_and_the_current_setting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    host = _igb_host(tmp_path, 500)
    base = _tune_office_from(host)
    code, out, err = cli(capsys, *base, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["driver"] == "linux-igb" and data["chip"] == "i210"
    assert data["current"]["settings"]["rx-usecs"] == 500 and data["current_source"] == "host.json"
    rec = data["recommended"]
    if rec["settings"] != data["current"]["settings"]:
        # Every printed line names the host's interface, and the persistent
        # forms come with it.
        assert data["paste"] and all("enp3s0" in line for line in data["paste"])
        kinds = [f["kind"] for f in data["persistent"]]
        assert "networkd" in kinds and "nm" in kinds
        code, text, err = cli(capsys, *base, "--emit", "networkd")
        assert code == 0 and "[Link]" in text and "enp3s0" in text, err
    else:
        assert data["paste"] == [] and data["persistent"] == []


def test_a_host_file_without_settings_is_not_called_the_current_setting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The igb host file with ethtool -c failed: driver and chip still come
    # from it, but no setting does. The tune says so and labels the current
    # setting as the driver's default, not as read from the host file.
    host = _igb_host(tmp_path, 500)
    data = json.loads(host.read_text())
    data["ethtool"]["coalesce"].update(stdout="", rc=None, error="ethtool is not installed")
    host.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli(capsys, *_tune_office_from(host), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["driver"] == "linux-igb" and result["current_source"] == "the driver's default"
    flat = " ".join(err.split())
    assert "host file: coalescing: neither ethtool --json -c nor ethtool -c gave output" in flat
    assert "no setting was read from it: the current setting below is linux-igb's default" in flat


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--emit", "yaml"], "--emit: unknown kind 'yaml'"),
        (["--emit-to", "x.link"], "--emit-to needs --emit"),
        (["--from", "nope.json"], "--from"),
    ],
)
def test_bad_emit_and_from_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    code, _, err = cli(
        capsys, "tune", "--capture", OFFICE, "--driver", "linux-igb", "--no-store", *args
    )
    assert code == 2 and says in " ".join(err.split()) and "Traceback" not in err


def test_latency_of_counts_the_requests_not_the_bursts(
    capsys: pytest.CaptureFixture[str], thirty: tuple[Path, capture_gen.Written]
) -> None:
    # Requests to port 5000 come every 200 us; a 40-frame burst of 1514-byte
    # frames takes 40 x 12.3 us = 492 us of wire every 100 ms, so about 2 of
    # 500 requests (0.4 %) queue behind one, under the 1 % a p99 ignores,
    # while 7.4 % of all frames are burst frames that queue behind each other.
    path, _ = thirty
    data, text = _tune(
        capsys, path, "--knob", "rx-usecs", "--seeds", "1", "--latency-of", "port:5000"
    )
    for p in (data["default"], data["recommended"]):
        assert p["p99_us"] < p["p99_all_us"]
        assert p["p50_all_us"] is not None
    assert data["latency_of"] == "port:5000"
    assert "all traffic's" in text and "latency of port:5000" in text


def test_a_scenario_whose_replay_ends_early_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # examples/replay-office.toml replays the 98.453 ms office capture; with
    # --duration-ms 50 the tune says how much of it is simulated.
    code, out, err = cli(
        capsys,
        "tune",
        REPO / "examples" / "replay-office.toml",
        "--driver",
        "linux-igb",
        "--knob",
        "rx-usecs",
        "--seeds",
        "1",
        "--duration-ms",
        "50",
        "--objective",
        "pareto",
        "--no-store",
        "--executor",
        "serial",
        "--json",
    )
    assert code == 0, err
    notes = " ".join(json.loads(out)["notes"])
    assert "ends before the capture office.pcapng" in notes and "% of its 98.453 ms span" in notes


# ------------------------------------------------ a capture taken on the host


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 1000 requests to 10.0.0.2 and its 1000 replies (tests/capture_gen.py).
    path = tmp_path_factory.mktemp("cap") / "both.pcap"
    capture_gen.server_both_ways(path, 0.2)
    return path


def test_a_two_way_capture_is_refused_until_the_host_is_named(
    capsys: pytest.CaptureFixture[str], both: Path
) -> None:
    # Replayed whole, the server's 1514-byte replies would be simulated as
    # frames it received: the tune stops and names both addresses.
    code, _, err = cli(capsys, "tune", "--capture", both, "--driver", "linux-igb", "--no-store")
    text = " ".join(err.split())
    assert code == 2 and "both ways" in text
    assert "00:1b:21:aa:bb:02 (10.0.0.2): received 1,000, sent 1,000" in text
    assert "--only-to 10.0.0.2" in text and "--only-to all" in text


def test_only_to_replays_what_the_host_received(both: Path) -> None:
    work = tune.capture_workload(
        both, driver="linux-igb", chip="i210", profile="xeon-modern", only_to="10.0.0.2"
    )
    gen = work.scenario["generators"][0]
    assert gen["only_to"] == "10.0.0.2"
    info = work.coverage.info
    # The writer's requests only: 1000 frames of 200 bytes.
    assert (info.frames, info.skipped, info.orig_bytes) == (1000, 1000, 200_000)
    # By MAC address: the same frames.
    by_mac = tune.capture_workload(
        both, driver="linux-igb", chip="i210", profile="xeon-modern", only_to="00:1b:21:aa:bb:02"
    )
    assert by_mac.coverage.info.frames == 1000
    # 'all' keeps every frame, and says so.
    every = tune.capture_workload(
        both, driver="linux-igb", chip="i210", profile="xeon-modern", only_to="all"
    )
    assert "only_to" not in every.scenario["generators"][0]
    assert every.coverage.info.frames == 2000 and "both ways" in every.description


@pytest.mark.parametrize(
    ("only_to", "what"),
    [("10.9.9.9", "no frame of both.pcap is addressed to 10.9.9.9"), ("eth0", "neither")],
)
def test_only_to_errors_name_the_flag(both: Path, only_to: str, what: str) -> None:
    with pytest.raises(tune.TuneError) as err:
        tune.capture_workload(
            both, driver="linux-igb", chip="i210", profile="xeon-modern", only_to=only_to
        )
    assert "--only-to" in str(err.value) and what in str(err.value)


def test_only_to_needs_a_capture(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(
        capsys, "tune", "--mix", "rr", "--driver", "linux-igb", "--only-to", "10.0.0.2"
    )
    assert code == 2 and "--only-to applies to a --capture workload" in err


def test_a_host_files_address_picks_the_received_side(both: Path) -> None:
    # `tune --from host.json --capture`: the interface's own MAC (collected
    # from sysfs) names the host, so a capture taken on it needs no flag.
    kw = {"driver": "linux-igb", "chip": "i210", "profile": "xeon-modern"}
    work = tune.capture_workload(both, host_mac="00:1b:21:aa:bb:02", **kw)
    assert work.scenario["generators"][0]["only_to"] == "00:1b:21:aa:bb:02"
    assert work.coverage.info.frames == 1000 and "host file" in work.description
    # An address the capture does not hold: refused, not guessed.
    with pytest.raises(tune.TuneError, match="not of the host file's interface address"):
        tune.capture_workload(both, host_mac="00:1b:21:00:00:09", **kw)
    # A one-way capture is replayed whole whatever the host file says.
    office = tune.capture_workload(OFFICE, host_mac="00:1b:21:00:00:09", **kw)
    assert "only_to" not in office.scenario["generators"][0]


@pytest.mark.parametrize(
    ("text", "mac"),
    [
        ("00:1B:21:AA:BB:02\n", "00:1b:21:aa:bb:02"),
        ("01:00:5e:00:00:01", None),  # multicast: not an interface's address
        ("00:1b:21:aa:bb", None),
        ("zz:1b:21:aa:bb:02", None),
        (None, None),
    ],
)
def test_host_file_mac_is_read_as_a_unicast_address(text: str | None, mac: str | None) -> None:
    from holdoff import hostinfo

    assert hostinfo._mac(text) == mac


# --------------------------------------- a capture faster than the tuned link


def _spaced(path: Path, n: int, gap_ns: int, length: int = 1514) -> None:
    f = capture_gen.udp_frame(length, 5000)[: capture_gen.SNAPLEN]
    base = capture_gen.EPOCH_S * 1_000_000_000
    records = [(base + i * gap_ns, f, length) for i in range(n)]
    capture_gen.write_pcap(path, records, nanos=True)  # 12 304 ns needs ns stamps


def test_wire_lag_closed_form(tmp_path: Path) -> None:
    from holdoff import capture as cap

    # 1514-byte frames take (1514 + 4 FCS + 20 preamble and gap) x 8 =
    # 12 304 ns at 1 Gb/s. At exactly that spacing the replay keeps up.
    path = tmp_path / "line.pcap"
    _spaced(path, 1000, 12_304)
    assert cap.wire_lag_ns(cap.plan(path), 1e9) == 0
    # At 6 us spacing (2.02 Gb/s) it falls (n - 1) x (12 304 - 6 000) ns behind.
    _spaced(path, 1000, 6_000)
    assert cap.wire_lag_ns(cap.plan(path), 1e9) == pytest.approx(999 * 6_304)
    # A 10 Gb/s link carries it.
    assert cap.wire_lag_ns(cap.plan(path), 10e9) == 0


def test_a_capture_faster_than_the_link_is_refused(tmp_path: Path) -> None:
    # 2.02 Gb/s of 1514-byte frames for 60 ms: an i210 at 1 Gb/s would
    # fall 9999 x 6.304 us = 63.0 ms behind; the tune stops and says why.
    path = tmp_path / "fast.pcap"
    _spaced(path, 10_000, 6_000)
    with pytest.raises(tune.TuneError) as err:
        tune.capture_workload(path, driver="linux-igb", chip="i210", profile="xeon-modern")
    text = str(err.value)
    assert "more than the i210's 1,000 Mb/s line" in text and "63.0" in text
    # It names a driver and chip whose link carries 2.02 Gb/s: the slowest such.
    import re

    found = re.search(r"--chip (\S+), ([\d,]+) Mb/s", text)
    assert found is not None and int(found.group(2).replace(",", "")) >= 2_020
    # The same capture on a 10 GbE port fits.
    work = tune.capture_workload(path, driver="linux-ixgbe", chip="82599", profile="xeon-modern")
    assert work.coverage.info.frames == 10_000


def test_bursts_above_the_line_that_drain_are_kept(
    thirty: tuple[Path, capture_gen.Written],
) -> None:
    # The 30 s fixture's bursts: 40 frames 12 us apart, 0.3 us faster than
    # a 1 Gb/s wire carries them (12.304 us); each burst queues 12 us at most
    # and drains before the next, so the capture fits on average.
    from holdoff import capture as cap

    path, _ = thirty
    cov = cap.plan(path)
    assert cap.wire_lag_ns(cov, 1e9) == 0


def test_a_short_window_faster_than_the_link_is_refused(tmp_path: Path) -> None:
    # A 0.3 ms window of 2.02 Gb/s holds 50 frames, 49 x 12.304 us = 602.9 us
    # of 1 Gb/s wire time before the last: 302.9 us behind, more than the
    # 100 us floor and the 1 % share.
    path = tmp_path / "fast.pcap"
    _spaced(path, 1000, 6_000)
    with pytest.raises(tune.TuneError, match="0.303 ms behind"):
        tune.capture_workload(
            path, driver="linux-igb", chip="i210", profile="xeon-modern", span="0:0.3ms"
        )


def test_a_long_scan_reports_progress(thirty: tuple[Path, capture_gen.Written]) -> None:
    # 162 000 records: the callback runs at every 65 536th, with the byte
    # offset reached and the file's size.
    from holdoff import capture as cap

    path, w = thirty
    calls: list[tuple[int, int]] = []
    info = cap.scan(path, progress=lambda done, total: calls.append((done, total)))
    assert info.frames == w.frames
    size = path.stat().st_size
    assert len(calls) == w.frames // cap.PROGRESS_RECORDS == 2
    assert all(t == size for _, t in calls)
    assert 0 < calls[0][0] < calls[1][0] < size


def test_a_jumbo_link_takes_the_capture_whole(capsys: pytest.CaptureFixture[str]) -> None:
    # --mtu 9000: the office capture's two 9014-byte TCP frames fit (9014 + 4
    # FCS = MTU + 18), so nothing is cut: 1000 frames, and the generator and
    # the host's NIC both run MTU 9000.
    work = tune.capture_workload(
        OFFICE, driver="linux-igb", chip="i210", profile="xeon-modern", mtu=9000
    )
    info = work.coverage.info
    assert (info.frames, info.cut_records, info.over_mtu_frames) == (1000, 0, 0)
    assert work.scenario["generators"][0]["mtu_bytes"] == 9000
    assert work.scenario["hosts"][0]["nics"][0]["mtu_bytes"] == 9000
    for bad in (0, 9216):
        # 0 is refused, not taken for "not given".
        code, _, err = cli(capsys, "tune", "--capture", OFFICE, "-d", "linux-igb", "--mtu", bad)
        assert code == 2 and f"--mtu: got {bad}; allowed: 68 to 9000" in " ".join(err.split())
    with pytest.raises(tune.TuneError, match="--mtu: got 9216; allowed: 68 to 9000"):
        tune.capture_workload(
            OFFICE, driver="linux-igb", chip="i210", profile="xeon-modern", mtu=9216
        )


def test_the_host_files_mtu_is_the_default() -> None:
    from holdoff.cli.tune import _host_mtu
    from holdoff.hostinfo import read_host

    # The tg3 fixture's sysfs mtu is "9000": a jumbo link, taken. The ixgbe
    # one's "1500" is the default anyway; an MTU below 1500 (a VM's 1400) is
    # not taken, so a capture from another link keeps its full-size frames.
    tg3 = read_host(REPO / "tests" / "data" / "collect" / "tg3-eth0.json")
    assert (tg3.mtu, _host_mtu(tg3)) == (9000, 9000)
    ixgbe = read_host(REPO / "tests" / "data" / "collect" / "ixgbe-eno1.json")
    assert (ixgbe.mtu, _host_mtu(ixgbe)) == (1500, None)
    assert _host_mtu(replace(ixgbe, mtu=1400)) is None
    assert _host_mtu(None) is None


def _to_three_servers(path: Path) -> None:
    # A switch port's view: a router (00:1b:21:cc:00:01) sends 200-byte UDP
    # frames to three servers, 400, 300 and 300 of them; no server answers.
    base = capture_gen.EPOCH_S * 1_000_000_000
    records = []
    for i in range(1000):
        k = 0 if i % 10 < 4 else 1 if i % 10 < 7 else 2
        f = bytearray(capture_gen.udp_frame(200, 5000))
        f[0:6] = bytes.fromhex(f"001b21aabb1{k}")
        f[6:12] = bytes.fromhex("001b21cc0001")
        f[30:34] = bytes([10, 0, 0, 10 + k])
        records.append((base + i * 100_000, bytes(f[: capture_gen.SNAPLEN]), 200))
    capture_gen.write_pcap(path, records)


def test_several_hosts_traffic_is_refused_until_one_is_named(tmp_path: Path) -> None:
    from holdoff import capture as cap

    path = tmp_path / "switch.pcap"
    _to_three_servers(path)
    d = cap.scan(path).directions
    assert d is not None and not d.two_way and d.many_receivers
    assert [(r.ip, r.received) for r in d.receivers] == [
        ("10.0.0.10", 400),
        ("10.0.0.11", 300),
        ("10.0.0.12", 300),
    ]
    kw = {"driver": "linux-igb", "chip": "i210", "profile": "xeon-modern"}
    with pytest.raises(tune.TuneError) as err:
        tune.capture_workload(path, **kw)
    text = str(err.value)
    assert "several hosts' traffic" in text and "10.0.0.10): received 400 (40.0 %)" in text
    # Named by address, or by the host file's interface address.
    assert tune.capture_workload(path, only_to="10.0.0.11", **kw).coverage.info.frames == 300
    by_host = tune.capture_workload(path, host_mac="00:1b:21:aa:bb:12", **kw)
    assert by_host.coverage.info.frames == 300
    # holdoff run warns.
    gen = {"name": "cap", "pattern": "replay", "capture": "switch.pcap"}
    warnings = cap.replay_warnings({"duration_ms": 200, "generators": [gen]}, tmp_path)
    assert any("several hosts' traffic" in w for w in warnings)
