"""Debian's Chromium driven by Playwright, for the pages' browser tests (never
`playwright install`: .ci/run installs /usr/bin/chromium)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import service_missing

CHROMIUM = Path("/usr/bin/chromium")


@contextlib.contextmanager
def chromium_browser(artifacts: Path) -> Iterator[Any]:
    """A headless Chromium (a Playwright Browser) for one test module; `artifacts` is
    where its screenshots go."""
    if not CHROMIUM.exists():
        service_missing("Chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    artifacts.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            browser.close()


AXE = Path(__file__).parent.parent / "vendor" / "axe-core" / "axe.min.js"


def axe_violations(page: Any) -> list[str]:
    """axe-core's rules (all but the experimental ones: WCAG 2.x A and AA, best
    practices) on the page as it is now, each violation as `rule: help - targets`.
    Evaluated through the DevTools protocol, so the page's CSP stays as strict as ever;
    the page needs JavaScript on."""
    page.evaluate(_axe_source())
    result: list[str] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => v.id + ': ' + v.help + ' - ' + v.nodes.map(n => n.target.join(' '))"
        ".join(' | '))"
    )
    return result


@functools.cache
def _axe_source() -> str:
    return AXE.read_text()
