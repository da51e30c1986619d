"""`holdoff validate`, `schema` and `version`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from holdoff import _core
from holdoff.cli.common import (
    _Command,
    _fail,
    _read,
    _stdout,
    app,
)
from holdoff.inputs import scenario_name


@app.command("validate", cls=_Command)
def validate_command(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
) -> None:
    """Check a scenario file without running it: every problem found, one per
    host, generator, link or application (a TOML or type error stops the
    parser, so it comes alone)."""
    text = _read(file)
    # The first problem is the ScenarioError a run raises, word for word.
    problems = _core.validate_problems(text, os.fspath(file.resolve().parent))
    if problems:
        count = [f"{len(problems)} problems"] if len(problems) > 1 else []
        _fail("\n".join([*problems, *count]), 2)
    _stdout().print(Text(f"ok: {scenario_name(text) or file.stem}", style="green"))


@app.command("schema", cls=_Command)
def schema_command() -> None:
    """Print the JSON Schema of scenario files."""
    sys.stdout.write(_core.schema_json().rstrip("\n") + "\n")


@app.command("version", cls=_Command)
def version_command() -> None:
    """Print the version."""
    sys.stdout.write(f"holdoff {_core.version()}\n")
