"""Print the README's quick-start commands, one per line, exactly as written.

The commands are the lines of the first ``sh`` code block after the README's
``<!-- quickstart -->`` marker. ``.ci/run`` executes them verbatim on a fresh
checkout (the proof that the README's install and test commands work), and
``tests/test_docs.py`` checks that there are two: install-and-run, then test.
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- quickstart -->"


def quickstart_commands(text: str) -> list[str]:
    """The command lines of the first ``sh`` block after the quick-start marker."""
    after = text.split(MARKER, 1)
    if len(after) != 2:
        raise ValueError(f"README.md has no {MARKER} marker")
    lines = after[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "```sh")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "```")
    return [line for line in lines[start + 1 : end] if line.strip()]


if __name__ == "__main__":
    sys.stdout.write("\n".join(quickstart_commands(README.read_text(encoding="utf-8"))) + "\n")
