"""Headless Chromium through Selenium, for checking the static site (tests, screenshot script).

Uses the system's browser and driver (Debian: ``apt-get install chromium chromium-driver``),
``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` unless ``$SOURCESUM_CHROMIUM`` /
``$SOURCESUM_CHROMEDRIVER`` say otherwise. The driver path is passed to Selenium explicitly, so
Selenium Manager never runs and nothing is downloaded. ``selenium`` is in the ``test`` extra.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sourcesum.errors import SourceSumError

CHROMIUM = Path(os.environ.get("SOURCESUM_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("SOURCESUM_CHROMEDRIVER", "/usr/bin/chromedriver"))
INSTALL_HINT = "apt-get update && apt-get install -y chromium chromium-driver"


def headless_chromium(width: int = 1280, height: int = 900) -> Any:
    """A Selenium ``webdriver.Chrome`` on headless Chromium with a ``width`` x ``height`` CSS-pixel
    viewport (scale factor 1, overlay scrollbars as on phones). The caller must ``quit()`` it."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if missing:
        raise SourceSumError(
            f"headless browser not found: {', '.join(missing)}; install with: {INSTALL_HINT}"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise SourceSumError("selenium is missing: pip install 'sourcesum-bench[test]'") from exc
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--disable-extensions",
        "--no-first-run",
        "--disable-background-networking",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    set_viewport(driver, width, height)
    return driver


def set_viewport(driver: Any, width: int, height: int) -> None:
    """Make the page's viewport exactly ``width`` x ``height`` CSS pixels."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def first_render_ms(driver: Any, timeout_s: float = 10.0) -> float:
    """Milliseconds from navigation start to the page's first render: the later of the first
    contentful paint and the ``data-rendered`` mark the site's scripts set after drawing (waits
    up to ``timeout_s`` for both; a page that never paints is an error)."""
    driver.set_script_timeout(timeout_s + 5)
    value = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "const limit = performance.now() + arguments[0] * 1000;"
        "function check() {"
        "  const paint = performance.getEntriesByName('first-contentful-paint')[0];"
        "  const mark = document.documentElement.getAttribute('data-rendered');"
        "  if (paint && mark !== null) return done(Math.max(paint.startTime, Number(mark)));"
        "  if (performance.now() > limit) return done(null);"
        "  requestAnimationFrame(() => setTimeout(check, 10));"
        "}"
        "check();",
        timeout_s,
    )
    if value is None:
        raise SourceSumError(
            f"{driver.current_url}: no first contentful paint and render mark within {timeout_s} s"
        )
    return float(value)


def horizontal_overflow(driver: Any) -> list[str]:
    """What scrolls horizontally: the page itself, or any element whose content is wider than
    its box; empty when nothing does."""
    overflowing: list[str] = driver.execute_script(
        "const out = [];"
        "const root = document.documentElement;"
        "if (root.scrollWidth > root.clientWidth) out.push(`page: ${root.scrollWidth} > ${root.clientWidth}`);"
        "for (const el of document.querySelectorAll('body *')) {"
        "  const style = getComputedStyle(el);"
        "  if (['auto', 'scroll'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1)"
        "    out.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`);"
        "}"
        "return out;"
    )
    return overflowing
