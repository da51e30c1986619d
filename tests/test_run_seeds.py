"""`holdoff run --seeds N`, `holdoff.run_seeds`, and run's warnings about replays.

Expected values: the per-seed runs are each the run with that seed (the
model is deterministic given its seed); the summary's mean and interval are
recomputed here from the per-seed values with the textbook t interval; the
share of a capture a run covers comes from the test's own capture writer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as sps

import capture_gen
import holdoff
from holdoff.cli import main
from holdoff.sweeps import metrics_record

REPO = Path(__file__).resolve().parent.parent
QUICK = REPO / "examples" / "quickstart.toml"


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_seeds_are_the_runs_of_each_seed_and_their_t_interval() -> None:
    res = holdoff.run_seeds(QUICK, seeds=3, seed=5)
    assert res.seeds == [5, 6, 7]
    for s, rec in zip(res.seeds, res.records, strict=True):
        one = metrics_record(holdoff.run(QUICK, seed=s).report)
        one.pop("seed")
        assert rec == one
    name = "throughput_bps_total"
    xs = [float(r[name]) for r in res.records]
    mean = sum(xs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / 2)
    half = float(sps.t.ppf(0.975, 2)) * sd / math.sqrt(3)
    assert res.summary[name] == pytest.approx(mean)
    if half > 0:
        assert res.summary[f"{name}_ci95"] == pytest.approx([mean - half, mean + half])
    assert res.summary["seeds"] == 3


def test_run_seeds_refuses_a_bad_count() -> None:
    for bad in (0, -1, 1001):
        with pytest.raises(ValueError, match="seeds"):
            holdoff.run_seeds(QUICK, seeds=bad)


def test_run_seeds_json_has_an_interval_beside_every_metric(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "run", QUICK, "--seeds", "2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["seeds"] == 2 and data["seed_list"] == [1, 2]
    metrics = data["metrics"]
    numeric = [k for k, v in metrics.items() if isinstance(v, float) and not k.endswith("_ci95")]
    assert numeric
    for k in numeric:
        assert f"{k}_ci95" in metrics, k
    code, text, _ = cli(capsys, "run", QUICK, "--seeds", "2")
    assert code == 0 and "seeds 1 to 2" in text and " ± " in text


@pytest.mark.parametrize(("value", "says"), [("0", "between 1 and"), ("abc", "valid integer")])
def test_bad_seeds_on_run_exit_2(capsys: pytest.CaptureFixture[str], value: str, says: str) -> None:
    code, _, err = cli(capsys, "run", QUICK, "--seeds", value)
    text = " ".join(err.split())
    assert code == 2 and "--seeds" in text and says in text and "Traceback" not in err


def _replay_scenario(tmp_path: Path, capture: Path, duration_ms: int) -> Path:
    path = tmp_path / "replay.toml"
    path.write_text(
        f"""name = "replay-cover"
duration_ms = {duration_ms}

[[hosts]]
name = "host"
profile = "xeon-modern"
nics = [{{ name = "eth0", chip = "i210" }}]

[[generators]]
name = "cap"
pattern = "replay"
capture = "{capture.name}"

[[links]]
a = "cap"
b = "host.eth0"
rate = "1G"

[[apps]]
kind = "udp_sink"
name = "sink"
host = "host"
""",
        encoding="utf-8",
    )
    return path


def test_run_warns_when_the_duration_ends_before_the_capture(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cap = tmp_path / "one.pcap"
    w = capture_gen.thirty_seconds(cap, seconds=1)
    span_ms = (w.last_ns - w.first_ns) / 1e6
    code, _, err = cli(capsys, "run", _replay_scenario(tmp_path, cap, 250))
    text = " ".join(err.split())
    assert code == 0
    assert "ends before the capture one.pcap" in text
    assert f"{250 / span_ms * 100:.1f} % of its" in text
    code, _, err = cli(capsys, "run", _replay_scenario(tmp_path, cap, 1010))
    assert code == 0 and "ends before" not in err


def test_run_warns_about_a_capture_without_frames(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cap = tmp_path / "none.pcap"
    capture_gen.write_pcap(cap, [])
    code, out, err = cli(capsys, "run", _replay_scenario(tmp_path, cap, 10))
    # The run's report says it (the summary's warnings), not a line before it.
    text = " ".join(out.split())
    assert "replayed no frames" in text and "holds no frames" in text, out + err
    assert "replays no frames" not in err


def test_a_two_way_capture_is_in_the_report_of_every_way_to_run_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The capture of a server's requests (200 B) and replies (1400 B): both
    addresses received and sent 500 frames (`capture_gen.server_both_ways`
    writes them so). The Python run's result, the JSON report and the
    summary carry the warning (once: not also before the run); `--seeds`
    shows it once for both seeds."""
    cap = tmp_path / "both.pcap"
    capture_gen.server_both_ways(cap, seconds=0.1)
    scen = _replay_scenario(tmp_path, cap, 200)
    res = holdoff.run(scen)
    (w,) = [w for w in res.warnings if w["field"] == "generators[0].only_to"]
    assert "holds frames both ways" in w["message"]
    assert "received 500 and sent 500" in w["message"]
    assert 'only_to = "10.0.0.2"' in w["message"]

    code, out, err = cli(capsys, "run", scen, "--json")
    assert code == 0, err
    fields = [w["field"] for w in json.loads(out)["summary"]["warnings"]]
    assert fields.count("generators[0].only_to") == 1
    code, out, err = cli(capsys, "run", scen)
    text = " ".join((out + err).split())
    assert code == 0 and text.count("holds frames both ways") == 1, text

    code, out, err = cli(capsys, "run", scen, "--seeds", "2")
    text = " ".join(out.split())
    assert code == 0 and text.count("holds frames both ways") == 1, text
    code, out, _ = cli(capsys, "run", scen, "--seeds", "2", "--json")
    (w,) = [w for w in json.loads(out)["warnings"] if w["field"] == "generators[0].only_to"]
    assert w["seeds"] == [1, 2]


def test_a_short_run_of_a_capture_reports_the_share_of_the_file_it_read(
    tmp_path: Path,
) -> None:
    """A classic pcap is a 24-byte header and 16 bytes plus the captured
    bytes a record: the report's read_bytes is that sum over the records
    read (the frames sent and one read ahead), and file_bytes the file's
    size."""
    cap = tmp_path / "one.pcap"
    capture_gen.thirty_seconds(cap, seconds=1)
    res = holdoff.run(_replay_scenario(tmp_path, cap, 50))
    c = res.summary["generators"][0]["capture"]
    assert c["complete"] is False and c["file_bytes"] == cap.stat().st_size
    data = cap.read_bytes()
    at, n = 24, 0
    while n < c["frames"]:
        caplen = int.from_bytes(data[at + 8 : at + 12], "little")
        at += 16 + caplen
        n += 1
    assert c["read_bytes"] == at
    (w,) = [w for w in res.warnings if w["field"] == "duration_ms"]
    assert f"read the first {n} frames" in w["message"]
