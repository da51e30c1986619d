"""`holdoff examples`: list the bundled examples, copy one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from holdoff.api import examples_dir
from holdoff.cli.common import (
    _CONTEXT,
    _check_output_folder,
    _Command,
    _fail,
    _Group,
    _stdout,
    _toml_or_none,
    app,
)

examples_app = typer.Typer(
    cls=_Group,
    context_settings=_CONTEXT,
    add_completion=False,
    help="List the bundled examples, or copy one to the current folder.",
)
app.add_typer(examples_app, name="examples")


def _example_files() -> list[Path]:
    try:
        folder = examples_dir()
    except FileNotFoundError as err:
        _fail(str(err), 2)
    return sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".py") and p.is_file())


def _example_description(path: Path) -> str:
    """The first sentence of an example's opening comment (or docstring)."""
    text = path.read_text(encoding="utf-8")
    lines: list[str] = []
    if path.suffix == ".py":
        body = text.split('"""')
        lines = body[1].strip().splitlines() if len(body) > 2 else []
    else:
        data = _toml_or_none(text) or {}
        if isinstance(data.get("description"), str) and data["description"]:
            lines = [data["description"]]
        else:
            for line in text.splitlines():
                if not line.startswith("#"):
                    break
                lines.append(line.lstrip("#").strip())
    joined = " ".join(line for line in lines if line)
    for end in (". ", ": "):
        if end in joined:
            joined = joined.split(end, 1)[0]
    return joined.rstrip(".")


def _example_name(path: Path) -> str:
    return path.stem if path.suffix == ".toml" else path.name


@examples_app.callback(invoke_without_command=True)
def examples_command(ctx: typer.Context) -> None:
    """List the bundled examples (scenarios, sweeps, a Python moderator) with a line each."""
    if ctx.invoked_subcommand is not None:
        return
    t = Table(
        title="bundled examples (holdoff examples copy NAME writes one here)",
        title_justify="left",
        header_style="bold",
    )
    t.add_column("name", no_wrap=True)
    t.add_column("what it shows")
    for path in _example_files():
        t.add_row(_example_name(path), _example_description(path))
    _stdout().print(t)


@examples_app.command("copy", cls=_Command)
def examples_copy_command(
    name: Annotated[
        str, typer.Argument(help="Example name (see `holdoff examples`).", show_default=False)
    ],
    to: Annotated[Path, typer.Option("--to", help="Folder to write to.")] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Overwrite an existing file.")
    ] = False,
) -> None:
    """Copy a bundled example to the current folder (a sweep brings its base scenario)."""
    files = {_example_name(p): p for p in _example_files()}
    files.update({p.name: p for p in files.values()})
    source = files.get(name)
    if source is None:
        _fail(
            f"unknown example {name!r}; available: "
            + ", ".join(sorted({_example_name(p) for p in files.values()})),
            2,
        )
    # (file, path relative to the target folder)
    wanted = [(source, Path(source.name))]
    data = _toml_or_none(source.read_text(encoding="utf-8")) or {}
    base = data.get("base")
    if isinstance(base, str) and (source.parent / base).is_file():
        wanted.append((source.parent / base, Path(Path(base).name)))
    # A replay example brings its capture, at the same relative path.
    for gen in data.get("generators", []) if isinstance(data.get("generators"), list) else []:
        capture = gen.get("capture") if isinstance(gen, dict) else None
        if isinstance(capture, str) and not Path(capture).is_absolute():
            path = (source.parent / capture).resolve()
            if path.is_file() and path.is_relative_to(source.parent.resolve()):
                wanted.append((path, Path(capture)))
    _check_output_folder(to, "--to")
    try:
        # Every target is checked before any is written: a refused copy
        # writes nothing. A file already there with the same bytes (the base
        # scenario a second sweep example shares) is kept, not refused.
        plan: list[tuple[Path, bytes, bool]] = []
        for path, rel in wanted:
            target = to / rel
            data_bytes = path.read_bytes()
            if target.is_dir():
                _fail(f"{target} is a folder; remove it or copy to another --to folder", 2)
            same = target.is_file() and target.read_bytes() == data_bytes
            if target.exists() and not same and not force:
                _fail(
                    f"{target} exists and differs from the bundled one; nothing was written "
                    "(use --force to overwrite it)",
                    2,
                )
            plan.append((target, data_bytes, same))
        to.mkdir(parents=True, exist_ok=True)
        for target, data_bytes, same in plan:
            if same:
                _stdout().print(f"kept {target} (the same as the bundled one)")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data_bytes)
            _stdout().print(f"wrote {target}")
    except OSError as err:
        # A file where a folder of the path should be, no permission, a full disk.
        _fail(f"cannot write the example to --to {to}: {err.strerror or err}", 2)
