"""Moderator specs (holdoff.modspec): built-ins, Python files, C files."""

from __future__ import annotations

from pathlib import Path

import pytest

from holdoff.modspec import ModSpecError, parse_moderator


def test_builtin_with_settings_is_its_scenario_table(tmp_path: Path) -> None:
    spec = parse_moderator("freebsd-aim:enable_aim=2,max_interrupt_rate=8000", tmp_path)
    assert spec.label == "freebsd-aim:enable_aim=2,max_interrupt_rate=8000"
    assert spec.moderation_table() == {
        "kind": "freebsd-aim",
        "enable_aim": 2,
        "max_interrupt_rate": 8000,
    }
    assert parse_moderator("dim", tmp_path).moderation_table() == {"kind": "dim"}


def test_values_are_toml_values(tmp_path: Path) -> None:
    table = parse_moderator("x:a=1,b=1.5,c=true,d=word", tmp_path).moderation_table()
    assert table == {"kind": "x", "a": 1, "b": 1.5, "c": True, "d": "word"}


def test_c_file_resolves_against_base(tmp_path: Path) -> None:
    (tmp_path / "my_itr.c").write_text("void f(void) {}\n")
    spec = parse_moderator("my_itr.c:my_update_itr:low=10", tmp_path)
    assert spec.moderation_table() == {
        "kind": "c",
        "source": str((tmp_path / "my_itr.c").resolve()),
        "entry": "my_update_itr",
        "params": {"low": 10},
    }


def test_python_file_is_imported_by_path(tmp_path: Path) -> None:
    (tmp_path / "my_aim.py").write_text("class MyAim:\n    pass\n")
    spec = parse_moderator("my_aim.py:MyAim:target=8000", tmp_path)
    table = spec.moderation_table()
    assert table == {"kind": "python", "class": "my_aim:MyAim", "params": {"target": 8000}}
    assert spec.classes["my_aim:MyAim"].__name__ == "MyAim"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("my_itr.c", "names no entry"),
        ("missing.c:f", "file not found"),
        ("ixgbe:rx_usecs", "not key=value"),
        ("some.dir/x", "expected a built-in kind"),
    ],
)
def test_bad_specs_name_the_fix(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ModSpecError, match=needle):
        parse_moderator(text, tmp_path)


def test_python_class_missing(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("X = 1\n")
    with pytest.raises(ModSpecError, match="has no class 'Nope'"):
        parse_moderator("m.py:Nope", tmp_path)
