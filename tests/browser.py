"""A page in headless Chromium for tests that look at a report as a person would.

Uses Debian's chromium (``/usr/bin/chromium``) through Playwright; tests
skip when either is missing (:data:`SKIP_NO_CHROMIUM`, and
:func:`chromium_page` skips when Playwright is not installed).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")

SKIP_NO_CHROMIUM = pytest.mark.skipif(
    not CHROMIUM.is_file(), reason="needs Debian's chromium (/usr/bin/chromium)"
)


@contextmanager
def chromium_page(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A fresh page of a headless Chromium, closed on leaving the block."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
