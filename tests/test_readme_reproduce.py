"""The README's reproduction tables are the output of the current cases."""

from __future__ import annotations

from holdoff import reproduce as rp
from scenarios import REPO

COMMAND = "python -m holdoff.reproduce --update-readme README.md"


def test_readme_reproduction_tables_are_fresh() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    fresh = rp.replace_between_markers(readme, rp.to_markdown(rp.run_all()))
    assert fresh == readme, f"README.md's reproduction tables are stale: run `{COMMAND}`"
