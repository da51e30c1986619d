"""Moderation algorithms written in Python, running inside the simulation."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

import holdoff
from holdoff import Moderator, ModeratorError, Sample, ScenarioError
from scenarios import inline_scenario


def scenario(cls: str, params: str = "") -> str:
    """An 82546 (ITR in 256 ns units) on an ideal host receiving 20000 frames/s at
    constant spacing (50 us) for 100 ms, moderated by the Python class ``cls``: the
    shared inline scenario with a moderation table for its one port (a table header
    after the arrays names the last ``[[hosts.nics]]`` entry)."""
    base = inline_scenario(name="py-mod", duration_ms=100, rate_pps=20000)
    return f'{base}\n[hosts.nics.moderation]\nkind = "python"\nclass = "{cls}"\n{params}\n'


class FixedItr(Moderator):
    """Writes ITR once at interface up."""

    name = "fixed-itr"
    invocation = "never"

    def __init__(self, itr_256ns: int) -> None:
        self.itr = itr_256ns

    def initial(self) -> dict[str, int]:
        return {"itr_256ns": self.itr}


class Counting(Moderator):
    """Counts its calls and the frames it is told about; changes nothing."""

    calls: list[Sample] = []

    def on_sample(self, sample: Sample) -> None:
        Counting.calls.append(sample)


class Raises(Moderator):
    def on_sample(self, sample: Sample) -> dict[str, int]:
        if sample.now_ns > 10_000_000:
            raise RuntimeError("boom")
        return {}


class WrongType(Moderator):
    def on_sample(self, sample: Sample) -> object:
        return [1, 2, 3]


class UnknownKey(Moderator):
    def on_sample(self, sample: Sample) -> dict[str, int]:
        return {"itr": 5}


def test_initial_registers_take_effect() -> None:
    # 20000 frames/s, one every 50 us. ITR 391 = 100.1 us: at most one
    # interrupt per 100.1 us; every frame raises a cause, so the throttle
    # always has one pending at the interval's end: 1e9 / 100096 ns = 9990/s.
    r = holdoff.run(
        scenario("fixed", "params = { itr_256ns = 391 }"), moderators={"fixed": FixedItr}
    )
    port = r.summary["ports"][0]
    assert port["moderation"] == "fixed-itr"
    assert port["vectors"][0]["throttle_interval_ns"] == 391 * 256
    rate = port["interrupts"] / 0.1
    assert abs(rate - 1e9 / (391 * 256)) <= 11  # +-1 interrupt in 100 ms


def test_per_interrupt_calls_see_the_traffic_since_the_last_call() -> None:
    Counting.calls = []
    r = holdoff.run(scenario("c"), moderators={"c": Counting})
    port = r.summary["ports"][0]
    # No throttle: one interrupt per frame, and the algorithm runs once per interrupt.
    assert len(Counting.calls) == port["interrupts"]
    assert sum(s.rx_packets for s in Counting.calls) == port["rx_packets"]
    times = [s.now_ns for s in Counting.calls]
    assert times == sorted(times)


def test_importable_class_path_is_loaded() -> None:
    r = holdoff.run(scenario("test_python_moderator:FixedItr", "params = { itr_256ns = 488 }"))
    assert r.summary["ports"][0]["vectors"][0]["throttle_interval_ns"] == 488 * 256


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (Raises, "on_sample raised RuntimeError: boom"),
        (WrongType, "on_sample returned a list"),
        (UnknownKey, 'unknown key "itr"'),
    ],
)
def test_a_misbehaving_class_stops_the_run_and_keeps_what_it_had(cls: type, message: str) -> None:
    with pytest.raises(ModeratorError, match=message.replace("(", "\\(")) as info:
        holdoff.run(scenario("bad"), moderators={"bad": cls})
    err = info.value
    assert isinstance(err, holdoff.SimulationError)
    partial = err.result.summary
    assert partial["aborted"]["reason"] == str(err)
    assert 0 < partial["sim_time_ns"] < 100_000_000
    assert partial["ledger"]["balanced"] is True


def test_a_class_that_cannot_be_loaded_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError, match="cannot import"):
        holdoff.run(scenario("no_such_module_xyz:Cls"))
    with pytest.raises(ScenarioError, match="package.module:ClassName"):
        holdoff.run(scenario("NoColon"))


def test_a_sweep_runs_an_importable_class_in_worker_processes() -> None:
    # Frames arrive every 50 us. A throttle interval T shorter than that lets
    # every frame interrupt (20000/s); a longer one always finds a frame
    # pending when it ends, so interrupts come exactly T apart: 1e9/(itr*256)
    # = 8004/s for 488 and 4002/s for 976 (one more interrupt at the start of
    # the 100 ms run adds 10/s).
    path = "hosts[0].nics[0].moderation.params.itr_256ns"
    base = tomllib.loads(scenario("test_python_moderator:FixedItr", "params = { itr_256ns = 1 }"))
    spec = {"name": "py-sweep", "base": base, "seed": 1, "grid": {path: [195, 488, 976]}}
    table = holdoff.sweep(spec, store=None, executor="process", workers=2)
    got = dict(zip(table[path], table["dut.eth0/interrupts_per_s"], strict=True))
    for itr, want in {195: 20000.0, 488: 1e9 / (488 * 256), 976: 1e9 / (976 * 256)}.items():
        assert abs(got[itr] - want) / want < 0.01, (itr, got[itr], want)
    assert table["scenario_hash"].nunique() == 3


# -- classes found without PYTHONPATH ---------------------------------------------------

ALGOS = """
import holdoff


class Fixed(holdoff.Moderator):
    invocation = "never"

    def __init__(self, itr_256ns: int) -> None:
        self.itr = itr_256ns

    def initial(self):
        return {"itr_256ns": self.itr}
"""


def _package(folder: Path, name: str) -> None:
    """A package ``name`` with a module ``algos`` holding the class ``Fixed``."""
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("")
    (folder / name / "algos.py").write_text(ALGOS)


@pytest.fixture
def own_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a test adds to sys.path is taken away after it."""
    monkeypatch.setattr(sys, "path", list(sys.path))


def _interval_ns(result: holdoff.RunResult) -> int:
    interval: int = result.summary["ports"][0]["vectors"][0]["throttle_interval_ns"]
    return interval


@pytest.mark.usefixtures("own_path")
def test_a_class_next_to_the_scenario_file_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path / "scenarios", "pkg_beside_scenario")
    file = tmp_path / "scenarios" / "s.toml"
    file.write_text(scenario("pkg_beside_scenario.algos:Fixed", "params = { itr_256ns = 488 }"))
    monkeypatch.chdir(tmp_path)  # elsewhere: only the scenario's folder has the package
    assert _interval_ns(holdoff.run(file)) == 488 * 256


@pytest.mark.usefixtures("own_path")
def test_a_class_in_the_working_directory_is_found_by_a_sweeps_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, "pkg_in_cwd")
    monkeypatch.chdir(tmp_path)
    path = "hosts[0].nics[0].moderation.params.itr_256ns"
    base = tomllib.loads(scenario("pkg_in_cwd.algos:Fixed", "params = { itr_256ns = 1 }"))
    spec = {"name": "cwd-sweep", "base": base, "seed": 1, "grid": {path: [488, 976]}}
    table = holdoff.sweep(spec, store=None, executor="process", workers=2)
    # The class each worker imported wrote ITR: interrupts come exactly
    # itr * 256 ns apart (frames every 50 us; see the sweep test above).
    got = dict(zip(table[path], table["dut.eth0/interrupts_per_s"], strict=True))
    for itr in (488, 976):
        want = 1e9 / (itr * 256)
        assert abs(got[itr] - want) / want < 0.01, (itr, got[itr], want)


def test_a_missing_module_names_the_field_and_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "s.toml"
    file.write_text(scenario("pkg_nowhere_at_all.algos:Fixed"))
    monkeypatch.chdir("/")
    with pytest.raises(ScenarioError) as info:
        holdoff.run(file)
    message = str(info.value)
    assert info.value.field == "hosts[0].nics[0].moderation.class"
    assert "hosts[0].nics[0].moderation.class" in message and "'pkg_nowhere_at_all'" in message
    assert str(tmp_path) in message and "working directory /" in message


class EveryInterrupt(Moderator):
    """Returns the same 50 us interval at every interrupt (written each time)."""

    name = "every-interrupt"
    invocation = "per_interrupt"

    def initial(self) -> dict[str, int]:
        return {"eitr_us": 50}

    def on_sample(self, sample: Sample) -> dict[str, int]:
        return {"eitr_us": 50}


@pytest.mark.parametrize(("cnt_ignr", "throttled"), [(True, True), (False, False)])
def test_an_eitr_written_at_every_interrupt_keeps_its_throttle(
    cnt_ignr: bool, throttled: bool
) -> None:
    # An I210 receiving 100 000 frames/s (one every 10 us) for 100 ms under a
    # moderator that writes EITR = 50 us at every interrupt. The drivers write
    # EITR with CNT_IGNR (Linux igb_write_itr, FreeBSD igb): the write leaves
    # the countdown alone, a cause is always pending at the interval's end, so
    # one interrupt per 50 us: 1e6 / 50 = 20 000/s (the port's clock error,
    # within +-30 ppm, moves that by under one interrupt in 100 ms). Without
    # the bit each write zeroes the counter and asserts the cause held by the
    # throttle at once (I210 datasheet 8.8.14): the written value no longer
    # bounds the rate.
    base = inline_scenario(name="py-eitr", duration_ms=100, rate_pps=100_000, chip="i210")
    chip = 'chip = "i210"\n'
    flag = "" if cnt_ignr else "eitr_cnt_ignr = false\n"
    text = base.replace(chip, chip + flag)
    text += '\n[hosts.nics.moderation]\nkind = "python"\nclass = "e"\n'
    r = holdoff.run(text, moderators={"e": EveryInterrupt})
    port = r.summary["ports"][0]
    rate = port["interrupts"] / 0.1
    if throttled:
        assert abs(rate - 20_000) <= 10, rate
    else:
        assert rate > 1.5 * 20_000, rate
