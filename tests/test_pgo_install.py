"""`scripts/pgo-install.sh`: which profile merger the user install picks, and
the plain build it falls back to (checked with ``PGO=check``, which installs
nothing), and the build kind the extension and `holdoff bench` report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from holdoff import _core
from holdoff.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "pgo-install.sh"


def _check(env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", str(SCRIPT), sys.executable, "check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def _fake_rustc(tmp_path: Path, llvm_line: str) -> dict[str, str]:
    """A PATH whose `rustc` reports `llvm_line` (and a sysroot with no tools)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    rustc = bin_dir / "rustc"
    rustc.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--print" ]; then echo {tmp_path}; exit 0; fi\n'
        f"printf 'rustc 1.0.0\\n{llvm_line}\\n'\n"
    )
    rustc.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_compiler_llvm_without_its_profile_merger_builds_plain_naming_the_package(
    tmp_path: Path,
) -> None:
    # No llvm-profdata reports LLVM 999: a merger of another major version
    # cannot read that compiler's profiles, so none may be used.
    out = _check(_fake_rustc(tmp_path, "LLVM version: 999.1.0"))
    assert out.startswith("pgo-install: plain build:")
    assert "no llvm-profdata of LLVM 999" in out and "apt install llvm-999" in out


def test_a_compiler_that_names_no_llvm_builds_plain(tmp_path: Path) -> None:
    out = _check(_fake_rustc(tmp_path, "host: x86_64-unknown-linux-gnu"))
    assert out == "pgo-install: plain build: rustc -vV names no LLVM version"


def test_the_merger_picked_is_of_the_compilers_llvm_version() -> None:
    # `make test` builds the core with cargo first, so the compiler is here.
    rustc = shutil.which("rustc")
    assert rustc is not None, "rustc is not on PATH"
    vv = subprocess.run([rustc, "-vV"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"^LLVM version: (\d+)\.", vv, re.MULTILINE)
    assert found, vv
    major = found.group(1)
    out = _check(dict(os.environ))
    if out.startswith("pgo-install: plain build:"):
        # No merger of this LLVM is installed: the plain build, naming the
        # package that would provide one.
        assert f"no llvm-profdata of LLVM {major}" in out, out
        return
    tool = re.fullmatch(r"pgo-install: profile-guided build with (\S+) \(LLVM (\d+)\)", out)
    assert tool, out
    assert tool.group(2) == major
    version = subprocess.run([tool.group(1), "--version"], capture_output=True, text=True)
    assert f"LLVM version {major}." in version.stdout


def test_bench_reports_the_build_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from scenarios import inline_scenario

    scenario = tmp_path / "small.toml"
    scenario.write_text(inline_scenario(name="small-bench"))
    code = main(["bench", "-n", "1", "--scenario", str(scenario), "--json"])
    out = capsys.readouterr().out
    assert code == 0
    # The installer names the build when compiling (HOLDOFF_BUILD); a build
    # nobody named is plain.
    assert _core.build() in {"plain", "instrumented", "profile-guided"}
    assert json.loads(out)["build"] == _core.build()
