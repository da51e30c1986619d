"""Shared fixtures (see scenarios.py for the scenario inputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios import QUICKSTART


@pytest.fixture
def quickstart() -> Path:
    if not QUICKSTART.is_file():
        pytest.fail(f"example scenario missing: {QUICKSTART}")
    return QUICKSTART
