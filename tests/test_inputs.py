"""holdoff.inputs: one way to open an input, its limits, its messages, one value per --set.

Expected messages follow from what each path is (a directory, a FIFO, a
device, a sparse file whose ``stat`` size is 8 GiB, ...), made here with OS
calls; none is copied from the module's output.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from holdoff import inputs, sweep_paths
from holdoff.inputs import InputError


def _refused(path: str | Path, what: str = "scenario file") -> str:
    with pytest.raises(InputError) as info:
        inputs.read_text(path, what)
    message = str(info.value)
    assert message.startswith(what), message
    return message


def test_a_regular_file_reads(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text('name = "x"\n', encoding="utf-8")
    assert inputs.read_text(f, "scenario file") == 'name = "x"\n'


def test_a_symlink_to_a_file_is_followed(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text("a = 1\n", encoding="utf-8")
    link = tmp_path / "link.toml"
    link.symlink_to(f)
    assert inputs.read_text(link, "profile file") == "a = 1\n"


def test_a_directory_is_named(tmp_path: Path) -> None:
    assert "is a directory" in _refused(tmp_path)


def test_a_device_is_named_not_missing() -> None:
    message = _refused("/dev/zero")
    assert "is a character device" in message
    assert "not found" not in message
    assert ".toml" not in message  # no path the user never gave


def test_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # Opening a FIFO for reading would wait for a writer: an alarm turns a
    # hang into a failure instead of a stuck test.
    signal.alarm(10)
    try:
        message = _refused(fifo)
    finally:
        signal.alarm(0)
    assert "is a FIFO" in message
    assert "empty" not in message


def test_a_symlink_loop_and_a_dangling_link(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    assert "symbolic link loop" in _refused(a)
    dangling = tmp_path / "d"
    dangling.symlink_to(tmp_path / "gone.toml")
    assert "gone.toml, which does not exist" in _refused(dangling)


def test_not_found_only_when_missing(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert _refused(missing) == f"scenario file not found: {missing}"


def test_a_sparse_8_gib_file_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(8 * 2**30)  # sparse: no disk used
    message = _refused(big)
    assert "is 8 GiB, the limit for a scenario file is 16 MiB" in message


def test_each_kind_has_its_limit(tmp_path: Path) -> None:
    f = tmp_path / "c.csv"
    with open(f, "wb") as h:
        h.truncate(20 * 2**20)  # over the scenario limit, under the CSV one
    assert inputs.check_file(f, "calibration CSV") == 20 * 2**20
    with pytest.raises(InputError, match="limit for a scenario file is 16 MiB"):
        inputs.check_file(f, "scenario file")


def test_the_read_is_bounded_when_stat_lies(tmp_path: Path) -> None:
    # /proc files report size 0 but yield bytes: the read stops at limit + 1.
    data = inputs.read_bytes("/proc/self/status", "x", limit=1_000_000)
    assert data
    with pytest.raises(InputError, match="grew past the limit"):
        inputs.read_bytes("/proc/self/status", "x", limit=10)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("a = 1\n".encode("utf-16"), "is UTF-16 text"),
        ("a = 1\n".encode("utf-16-le"), "is UTF-16 text"),
        (b"a = 1\n\xff", "byte 0xff at offset 6 (line 2)"),
        (b"a = 1\nb = \x00\n", "NUL character at line 2"),
    ],
)
def test_encodings_are_named(tmp_path: Path, data: bytes, expected: str) -> None:
    f = tmp_path / "e.toml"
    f.write_bytes(data)
    assert expected in _refused(f)


def test_a_utf8_bom_is_dropped(tmp_path: Path) -> None:
    f = tmp_path / "bom.toml"
    f.write_bytes(b"\xef\xbb\xbfa = 1\n")
    assert inputs.read_text(f, "scenario file") == "a = 1\n"


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * 20_000 + "]" * 20_000,
        "a = " + "{ b = " * 20_000 + "1" + " }" * 20_000,
        "a." * 10_000 + "b = 1",
        "a = " + "[" * 65 + "]" * 65,
    ],
    ids=["array", "inline-table", "dotted-keys", "65"],
)
def test_deep_toml_is_refused_without_echo(text: str) -> None:
    with pytest.raises(InputError) as info:
        inputs.check_toml_text(text, "scenario file", "deep.toml")
    message = str(info.value)
    assert "64 levels" in message
    assert len(message) < 200  # the input is not echoed back


def test_depth_64_and_brackets_in_strings_and_comments_pass() -> None:
    inputs.check_toml_text("a = " + "[" * 64 + "]" * 64, "scenario file", None)
    quoted = "[" * 5000
    inputs.check_toml_text(
        f'a = "{quoted}"\nb = \'{quoted}\'\n# {quoted}\nc = """\n{quoted}\n"""\n',
        "scenario file",
        None,
    )


def test_deep_json_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "deep.json"
    f.write_text("[" * 20_000 + "]" * 20_000, encoding="utf-8")
    with pytest.raises(InputError, match="64 levels"):
        inputs.read_json(f)
    ok = tmp_path / "ok.json"
    ok.write_text('{"a": "' + "[" * 1000 + '"}', encoding="utf-8")
    assert inputs.read_json_object(ok) == {"a": "[" * 1000}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[1, 2]", "holds a JSON array"), ('"x"', "holds a JSON string"), ("{", "not valid JSON")],
)
def test_json_shape_errors(tmp_path: Path, text: str, expected: str) -> None:
    f = tmp_path / "r.json"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=expected):
        inputs.read_json_object(f)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "too short for a Parquet file"),
        (b"name,value\nx,1\n", "does not start with PAR1"),
        (b"PAR1" + b"\0" * 100, "no PAR1 at its end"),
        (b"PAR1" + os.urandom(200) + b"PAR1", "damaged Parquet file"),
    ],
    ids=["empty", "text", "truncated", "garbage"],
)
def test_damaged_parquet(tmp_path: Path, data: bytes, expected: str) -> None:
    f = tmp_path / "t.parquet"
    f.write_bytes(data)
    with pytest.raises(InputError, match=expected):
        inputs.read_parquet(f)


def test_a_truncated_real_parquet_file(tmp_path: Path) -> None:
    import pandas as pd

    f = tmp_path / "t.parquet"
    pd.DataFrame({"a": list(range(100))}).to_parquet(f)
    assert list(inputs.read_parquet(f)["a"]) == list(range(100))
    f.write_bytes(f.read_bytes()[:-30])
    with pytest.raises(InputError, match="truncated"):
        inputs.read_parquet(f)


@pytest.mark.parametrize(
    "item",
    ['name="x"\n[[hosts]]', 'name="x"\nseed=7', 'name="x" # c\nseed=7', 'name="x"\r\nseed=7'],
)
def test_set_takes_one_value(item: str) -> None:
    with pytest.raises(InputError) as info:
        sweep_paths.parse_set(item)
    message = str(info.value)
    assert message.startswith("--set")
    assert "text after the value" in message
    assert "\n" not in message  # the newline is shown escaped


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ('name="x"', ("name", "x")),
        ("name=e1000-5x", ("name", "e1000-5x")),
        ('name="""a\nb"""', ("name", "a\nb")),
        ("seed=7 # a comment", ("seed", 7)),
        ("generators[0].rate_pps=[1, 2]", ("generators[0].rate_pps", [1, 2])),
    ],
)
def test_set_values_that_are_one_value(item: str, expected: tuple[str, object]) -> None:
    assert sweep_paths.parse_set(item) == expected


def test_set_path_length_is_bounded() -> None:
    with pytest.raises(InputError, match="10,001 parts, the limit is 64"):
        sweep_paths.parse_set("a" + ".a" * 10_000 + "=1")
    with pytest.raises(InputError, match="64 levels"):
        sweep_paths.parse_set("a=" + "[" * 20_000 + "]" * 20_000)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ok name", "ok name"),
        ("a\nb", "a\\nb"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f c1\x85", "del\\x7f c1\\x85"),
        ("rtl\u202eevil", "rtl\\u202eevil"),
        ("tab\there", "tab\\there"),
        ("ünïcode", "ünïcode"),
    ],
)
def test_printable(raw: str, shown: str) -> None:
    assert inputs.printable(raw) == shown


def test_shorten_and_sizes() -> None:
    assert inputs.shorten("x" * 50) == "x" * 50
    long = inputs.shorten("x" * 40_000)
    assert len(long) < 160 and "more characters" in long
    assert inputs.human_size(16 * 2**20) == "16 MiB"
    assert inputs.human_size(int(1.5 * 2**30)) == "1.5 GiB"
    assert inputs.human_size(512) == "512 B"


def test_output_paths(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    a_file = tmp_path / "f.txt"
    a_file.write_text("x", encoding="utf-8")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    # As an output file: a new or regular file only.
    assert inputs.output_problem(tmp_path / "new.html") is None
    assert inputs.output_problem(a_file) is None
    assert "is a FIFO" in (inputs.output_problem(fifo) or "")
    assert "is a character device" in (inputs.output_problem("/dev/null") or "")
    assert "is a directory" in (inputs.output_problem(tmp_path) or "")
    assert "symbolic link loop" in (inputs.output_problem(loop) or "")
    assert "a part of the path is a file" in (inputs.output_problem(a_file / "x.html") or "")
    # As an output folder: a new or existing folder only.
    assert inputs.output_folder_problem(tmp_path) is None
    assert inputs.output_folder_problem(tmp_path / "new" / "deeper") is None
    assert "is a file, not a folder" in (inputs.output_folder_problem(a_file) or "")
    assert "is a file, not a folder" in (inputs.output_folder_problem(fifo) or "")
    assert "symbolic link loop" in (inputs.output_folder_problem(loop) or "")
