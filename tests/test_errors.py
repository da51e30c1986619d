"""Errors: the exception classes, and messages that say what is wrong and what is allowed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import holdoff
from scenarios import inline_scenario


def test_exception_hierarchy() -> None:
    assert issubclass(holdoff.ScenarioError, holdoff.HoldoffError)
    assert issubclass(holdoff.ScenarioError, ValueError)
    assert issubclass(holdoff.SimulationError, holdoff.HoldoffError)
    assert issubclass(holdoff.SimulationError, RuntimeError)
    assert issubclass(holdoff.HoldoffError, Exception)
    assert holdoff.ScenarioError.__module__ == "holdoff"


def test_the_inline_scenario_is_valid() -> None:
    holdoff.validate(inline_scenario())


def test_bad_chip_names_the_field_and_the_allowed_values() -> None:
    with pytest.raises(holdoff.ScenarioError) as info:
        holdoff.run(inline_scenario(chip="99999"))
    err = info.value
    assert err.field is not None
    assert "hosts" in err.field and err.field.endswith("chip")
    message = str(err)
    assert err.field in message
    assert "99999" in message
    assert "82546" in message  # a valid chip is among the allowed values listed


def test_bad_driver_lists_the_allowed_drivers() -> None:
    text = inline_scenario(driver="no-such-driver")
    with pytest.raises(holdoff.ScenarioError) as info:
        holdoff.validate(text)
    message = str(info.value)
    # Enum values are checked while parsing: the message points at the line
    # instead of carrying a field path.
    assert info.value.field is None or info.value.field.endswith("driver")
    line = text.splitlines().index('driver = "no-such-driver"') + 1
    assert re.search(rf"\bline {line}\b", message), message
    assert "no-such-driver" in message
    assert "napi" in message


def test_type_error_in_a_dict_names_the_field_path() -> None:
    # A scenario given as a dict reaches the core as TOML; a value of the
    # wrong type is reported with its field path, not only a line.
    scenario = tomllib.loads(inline_scenario())
    scenario["apps"][0]["rcvbuf_bytes"] = -5
    with pytest.raises(holdoff.ScenarioError) as info:
        holdoff.validate(scenario)
    assert info.value.field == "apps[0].rcvbuf_bytes"
    assert "got -5" in str(info.value)


def test_out_of_range_value_names_the_field_and_the_bounds() -> None:
    scenario = tomllib.loads(inline_scenario())
    scenario["hosts"][0]["bsd"] = {"poll_hz": 4294967295}
    with pytest.raises(holdoff.ScenarioError) as info:
        holdoff.validate(scenario)
    assert info.value.field == "hosts[0].bsd.poll_hz"
    assert "1 to 100000" in str(info.value)


def test_scenario_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        holdoff.run(inline_scenario(chip="99999"))


def test_toml_syntax_error_names_the_line() -> None:
    text = inline_scenario().replace('chip = "82546"', 'chip = = "82546"')
    line = text.splitlines().index('chip = = "82546"') + 1
    with pytest.raises(holdoff.ScenarioError) as info:
        holdoff.run(text)
    assert info.value.field is None
    assert re.search(rf"\bline {line}\b", str(info.value)), str(info.value)


def test_validate_raises_the_same_error_as_run() -> None:
    text = inline_scenario(chip="99999")
    with pytest.raises(holdoff.ScenarioError) as by_run:
        holdoff.run(text)
    with pytest.raises(holdoff.ScenarioError) as by_validate:
        holdoff.validate(text)
    assert str(by_run.value) == str(by_validate.value)
    assert by_run.value.field == by_validate.value.field


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        holdoff.run(tmp_path / "nope.toml")
    with pytest.raises(FileNotFoundError):
        holdoff.run(str(tmp_path / "nope.toml"))


@pytest.mark.parametrize(
    ("seed", "error"),
    [(-1, ValueError), (2**64, ValueError), (1.5, TypeError), ("1", TypeError), (True, TypeError)],
)
def test_bad_seed_override(seed: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="seed"):
        holdoff.run(inline_scenario(), seed=seed)  # type: ignore[arg-type]


def test_scenario_of_the_wrong_type() -> None:
    with pytest.raises(TypeError, match="scenario must be"):
        holdoff.run(42)  # type: ignore[arg-type]


def test_dict_with_values_toml_cannot_hold() -> None:
    with pytest.raises(TypeError):
        holdoff.run({"name": "x", "bad": object()})
