"""Linux ice and i40e knobs: what each ``ethtool -C`` field becomes, what the
drivers refuse (with their messages), what they round, and the tuning guides'
baselines as closed forms. Expected values come from the driver source named
in each test (ice_ethtool.c ice_set_rc_coalesce, i40e_ethtool.c
__i40e_set_coalesce) and from 1e6 / interval."""

from __future__ import annotations

import pytest

from holdoff import knobs
from holdoff.knobs import KnobError


def _static(**kw: int) -> dict[str, int]:
    return {"adaptive-rx": 0, "adaptive-tx": 0, **kw}


def test_defaults_are_adaptive_50us_no_rate_limit() -> None:
    for driver, chip in (("linux-ice", "e810-c"), ("linux-i40e", "x710")):
        d = knobs.decode(driver, {})
        assert d.chip.name == chip
        assert d.mode == "adaptive"
        assert d.settings["rx-usecs"] == 50
        assert d.settings["rx-usecs-high"] == 0
        assert d.scenario is not None
        assert d.scenario["moderation"]["kind"] == driver.removeprefix("linux-")


@pytest.mark.parametrize(
    ("driver", "settings", "key", "message"),
    [
        # Both drivers refuse a changed rx-usecs while adaptive-rx stays on.
        (
            "linux-ice",
            {"rx-usecs": 80},
            "rx-usecs",
            "rx interrupt throttling cannot be changed if adaptive-rx is enabled",
        ),
        (
            "linux-i40e",
            {"rx-usecs": 84},
            "rx-usecs",
            "RX interrupt moderation cannot be changed if adaptive-rx is enabled",
        ),
        # ice refuses a rate limit while either adaptive mode is on.
        (
            "linux-ice",
            {"rx-usecs-high": 100},
            "rx-usecs-high",
            "cannot be changed if adaptive-tx or adaptive-rx is enabled",
        ),
        ("linux-ice", _static(**{"rx-usecs-high": 237}), "rx-usecs-high", "4-236"),
        ("linux-i40e", {"rx-usecs-high": 240}, "rx-usecs-high", "range is 0-236"),
        ("linux-ice", _static(**{"rx-usecs": 8162}), "rx-usecs", "range is 0-8160"),
        ("linux-i40e", _static(**{"tx-usecs": 9000}), "tx-usecs", "range is 0-8160"),
    ],
)
def test_refusals_carry_the_driver_message(
    driver: str, settings: dict[str, int], key: str, message: str
) -> None:
    with pytest.raises(KnobError) as e:
        knobs.decode(driver, settings)
    assert e.value.key == key
    assert message in e.value.message


def test_the_25g_part_refuses_a_rate_limit_below_its_8us_granularity() -> None:
    # ice_get_itr_intrl_gran: 25G parts 8 us, 50G+ parts 4 us; ice_set_rc_coalesce
    # refuses a non-zero rx-usecs-high below it.
    with pytest.raises(KnobError, match="8-236"):
        knobs.decode("linux-ice", _static(**{"rx-usecs-high": 6}), chip="e810-xxv")
    d = knobs.decode("linux-ice", _static(**{"rx-usecs-high": 6}), chip="e810-c")
    # ice_write_intrl writes 6 / 4 = 1: 4 us acts.
    intrl = next(r for r in d.registers if r.name == "INTRL")
    assert (intrl.value, intrl.interval_ns) == (1, 4000)


def test_odd_usecs_round_down_on_ice_and_up_on_i40e() -> None:
    # ice ITR_REG_ALIGN = & 0x1FFE: 81 -> 80; i40e __ALIGN_MASK(x, ~0x1FFE): 81 -> 82.
    for driver, held in (("linux-ice", 80), ("linux-i40e", 82)):
        d = knobs.decode(driver, _static(**{"rx-usecs": 81, "tx-usecs": 81}))
        itr0 = d.registers[0]
        assert (itr0.value, itr0.interval_ns) == (held // 2, held * 1000), driver
        assert any(n.kind == "rounded" and n.key == "rx-usecs" for n in d.notes), driver


@pytest.mark.parametrize(
    ("driver", "usecs", "rate"),
    [
        # 700 Series guide: 84 us ~ 12,000/s (1e6/84 = 11 904.8), 62 us ~ 16,000/s (16 129.0).
        ("linux-i40e", 84, 11904.8),
        ("linux-i40e", 62, 16129.0),
        # 800 Series guide: 80 us ~ 12,500/s.
        ("linux-ice", 80, 12500.0),
    ],
)
def test_tuning_guide_baselines_as_closed_forms(driver: str, usecs: int, rate: float) -> None:
    d = knobs.decode(driver, _static(**{"rx-usecs": usecs, "tx-usecs": usecs}))
    assert d.mode == "static"
    assert d.to_dict()["max_interrupts_per_s_per_vector"] == rate


def test_rx_usecs_high_caps_the_rate_and_i40e_rounds_it_down() -> None:
    # ITR off, INTRL 100: 1e6 / 100 = 10 000/s.
    d = knobs.decode("linux-ice", _static(**{"rx-usecs": 0, "tx-usecs": 0, "rx-usecs-high": 100}))
    assert d.to_dict()["max_interrupts_per_s_per_vector"] == 10000.0
    # i40e: the rate limit holds with adaptive on; 62 is rounded down to 60:
    # 1e6 / 60 = 16 666.7/s at most, whatever the adaptive ITR.
    d = knobs.decode("linux-i40e", {"rx-usecs-high": 62})
    assert d.mode == "adaptive"
    assert d.to_dict()["max_interrupts_per_s_per_vector"] == 16666.7
    assert any("rounded down to 60" in n.message for n in d.notes)


def test_the_line_to_paste_turns_adaptive_off_in_the_same_command() -> None:
    d = knobs.decode("linux-ice", _static(**{"rx-usecs": 80, "tx-usecs": 80}))
    assert knobs.commands(d, "ens801f0") == [
        "ethtool -C ens801f0 adaptive-rx off adaptive-tx off rx-usecs 80 tx-usecs 80"
    ]
    # encode: a wanted 85 us interval -> the even value below, adaptive off.
    assert knobs.encode("linux-i40e", {"EITR_us": 85}) == {
        "adaptive-rx": 0,
        "adaptive-tx": 0,
        "rx-usecs": 84,
        "tx-usecs": 84,
    }
