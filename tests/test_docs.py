"""Every code block of README.md and docs/ runs; generated pages are fresh.

- ``sh`` blocks run in bash (``set -e``) in a fresh temporary folder, with the
  repository's ``examples/`` linked there and the interpreter running these
  tests first on the PATH (so ``holdoff`` and ``python`` are this install's):
  every file a block writes lands in the temporary folder.
- ``python`` blocks run with this interpreter in such a folder too.
- ``toml`` blocks must parse (they are fragments of scenario and sweep files).
- ``text`` blocks are layouts and pseudo-code, not run.
- A block just below a ``<!-- norun: reason -->`` comment is not run (install
  commands, changing the calling shell); the README's quick-start block
  (``<!-- quickstart -->``) is run verbatim by ``.ci/run`` instead.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from readme_commands import MARKER, quickstart_commands
from scenarios import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
RUNNABLE = ("sh", "python", "toml", "text")
NORUN = re.compile(r"<!--\s*(norun\b|quickstart\b)")
TIMEOUT_S = 300


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    code: str
    norun: bool

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            lang = line[3:].strip()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            found.append(
                Block(
                    path=path,
                    line=i + 1,
                    lang=lang,
                    code="\n".join(lines[i + 1 : end]) + "\n",
                    norun=bool(NORUN.search(before)),
                )
            )
            i = end + 1
        else:
            i += 1
    return found


ALL = [b for p in DOCS for b in blocks(p)]


def test_every_block_has_a_known_language_and_few_are_skipped() -> None:
    unknown = [f"{b.id} ({b.lang or 'no language'})" for b in ALL if b.lang not in RUNNABLE]
    assert not unknown, f"label these blocks with one of {RUNNABLE}: {unknown}"
    skipped = [b.id for b in ALL if b.norun]
    assert len(skipped) <= 5, f"too many blocks marked norun: {skipped}"


def _workdir(tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["COLUMNS"] = "120"
    env.pop("HOLDOFF_BLESS", None)
    return env


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.lang == "sh" and not b.norun], ids=lambda b: b.id
)
def test_shell_block_runs(block: Block, tmp_path: Path) -> None:
    shim = tmp_path / ".bin"
    shim.mkdir()
    # `python` in a block is the interpreter running the tests. A wrapper
    # script, not a symlink: started through a symlink in another folder, a
    # virtual environment's interpreter does not find its `pyvenv.cfg` (it
    # looks beside the path it was started by) and runs as the base Python,
    # without holdoff.
    wrapper = shim / "python"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    wrapper.chmod(0o755)
    env = _env()
    env["PATH"] = str(shim) + os.pathsep + env["PATH"]
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=_workdir(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, f"{block.id} failed:\n{block.code}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.lang == "python" and not b.norun], ids=lambda b: b.id
)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block.code],
        cwd=_workdir(tmp_path),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, f"{block.id} failed:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "toml"], ids=lambda b: b.id)
def test_toml_block_parses(block: Block) -> None:
    tomllib.loads(block.code)


def test_readme_quickstart_is_install_and_run_then_test() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert MARKER in readme
    install, test = quickstart_commands(readme)
    # The user install into a virtual environment, then the main job; then the tests.
    assert install.startswith("make install && .venv/bin/holdoff reproduce")
    assert test.split("#")[0].strip() == "make test"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "tests/readme_commands.py" in ci


def test_scenario_reference_is_fresh() -> None:
    command = "python scripts/scenario_reference.py"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "scenario_reference.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, f"docs/scenario-reference.md is stale: run `{command}`"


def test_scenario_reference_lists_every_field_of_the_schema() -> None:
    import holdoff

    page = (REPO / "docs" / "scenario-reference.md").read_text(encoding="utf-8")

    def names(node: object) -> set[str]:
        found: set[str] = set()
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                found.add(key)
                found |= names(value)
            for value in node.values():
                if isinstance(value, dict | list):
                    found |= names(value)
        elif isinstance(node, list):
            for item in node:
                found |= names(item)
        return found

    missing = [n for n in names(holdoff.schema()) if n != "kind" and f"`{n}`" not in page]
    assert not missing, missing


def test_docs_cite_no_private_notes() -> None:
    for path in [*DOCS, *sorted((REPO / "python" / "holdoff").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        for private in ("seed-scenarios.md", "algorithms.md"):
            assert private not in text, f"{path.relative_to(REPO)} cites {private}"


def test_index_links_every_page() -> None:
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    for path in sorted((REPO / "docs").rglob("*.md")):
        rel = path.relative_to(REPO / "docs").as_posix()
        if rel != "index.md":
            assert f"({rel})" in index or f"({rel}#" in index, f"docs/index.md does not link {rel}"
    for target in re.findall(r"\]\(([^)#]+)", index):
        if not target.startswith("http"):
            assert (REPO / "docs" / target).resolve().exists(), target
