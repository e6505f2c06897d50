"""Build the site from the score store `sourcesum leaderboard` uses, measure it, and screenshot it:
prints the build time, then for each page (the leaderboard and every split's explorer) its size
(the leaderboard's with its plot), its first-render time in headless Chromium (median and max
over ``--loads`` fresh loads) and whether it scrolls horizontally at 390 px, then where the two
screenshots went.

    python scripts/site_screenshot.py [--site DIR] [--docs docs] [--loads 5]

Writes ``docs/site.png`` (the leaderboard) and ``docs/site-explorer.png`` (a pair in the
CNN/DM-PEGASUS explorer); the sizes and first-render times (see ``tests/support/browser.py``) are the
numbers the README quotes. Needs chromium and chromium-driver (``.ci/run`` installs them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sourcesum.cli import main as cli
from sourcesum.outputs.site import INDEX_FILE, PLOT_FILE, explorer_file
from sourcesum.paths import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "tests"))  # the headless Chromium driver the site's tests use
from support.browser import first_render_ms, headless_chromium, horizontal_overflow, set_viewport  # noqa: E402


def measure(driver, page: Path, loads: int) -> list[float]:
    times = []
    for _ in range(loads):
        driver.get("about:blank")
        driver.get(page.as_uri())
        times.append(first_render_ms(driver))
    return times


def main() -> int:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--site", help="folder for the site (default: a temporary folder)")
    parser.add_argument("--docs", default=str(PROJECT_ROOT / "docs"), help="where the screenshots go")
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()
    site = Path(args.site or tempfile.mkdtemp(prefix="sourcesum-site-"))
    started = time.perf_counter()
    if cli(["site", "-o", str(site)]) != 0:
        return 1
    print(f"built in {time.perf_counter() - started:.1f} s")
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    pages = [site / INDEX_FILE] + sorted(site.glob("explore-*.html"))
    driver = headless_chromium(1280, 900)
    try:
        for page in pages:
            size = page.stat().st_size + ((site / PLOT_FILE).stat().st_size if page.name == INDEX_FILE else 0)
            times = measure(driver, page, args.loads)
            set_viewport(driver, 390, 844)
            driver.get(page.as_uri())
            overflow = horizontal_overflow(driver)
            set_viewport(driver, 1280, 900)
            print(
                f"{page.name:<30} {size / 1024:7.0f} KB{' (with plot)' if page.name == INDEX_FILE else ''}  "
                f"first render median {statistics.median(times):.0f} ms, max {max(times):.0f} ms  "
                f"390 px: {'no horizontal scrolling' if not overflow else overflow}"
            )
        driver.get((site / INDEX_FILE).as_uri())
        driver.save_screenshot(str(docs / "site.png"))
        explorer = site / explorer_file("cnn_pegasus")
        driver.get(explorer.as_uri())
        driver.find_element("css selector", "#pairs li:first-child button").click()
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(docs / "site-explorer.png"))
    finally:
        driver.quit()
    print(f"wrote {docs / 'site.png'} and {docs / 'site-explorer.png'}; site in {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
