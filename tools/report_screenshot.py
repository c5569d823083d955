"""Render a report from result directories and take a PNG screenshot of it, for the docs.

    python tools/report_screenshot.py results/demo-latency results/demo-produce --out docs/report.png
    python tools/report_screenshot.py results/run-quick-... --out docs/report.png --full-page
    python tools/report_screenshot.py tests/fixtures/results/tune --section tune --out docs/labs/tune.png

Needs Chromium (Debian's `chromium` package at /usr/bin/chromium, or --chromium PATH) and playwright.
The page is opened offline: any request other than the report file itself fails the screenshot.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from kafkabench.errors import KafkabenchError
from kafkabench.report.html import write_report

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def screenshot(html: Path, png: Path, chromium: Path, width: int, height: int, full_page: bool,
               section: str | None = None) -> list[str]:
    """Shoot the drawn page; the problems seen on the way (console errors, requests that left the file)."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
        page.on("console", lambda message: problems.append(f"console: {message.text}") if message.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.route("**/*", lambda route: route.continue_() if route.request.url == html.as_uri()
                   else (problems.append(f"request: {route.request.url}"), route.abort()))
        page.goto(html.as_uri())
        page.wait_for_function("document.body.dataset.charts !== 'pending'", timeout=60_000)
        if page.evaluate("document.body.dataset.charts") != "drawn":
            problems.append("the charts were not drawn")
        png.parent.mkdir(parents=True, exist_ok=True)
        if section:  # the first result of that lab, whole
            page.locator(f"section.result:has(.lab-{section})").first.screenshot(path=str(png))
        else:
            page.screenshot(path=str(png), full_page=full_page)
        browser.close()
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, help="result directories, or directories holding them")
    parser.add_argument("--out", type=Path, default=Path("docs/report.png"), help="the PNG to write (default: docs/report.png)")
    parser.add_argument("--html", type=Path, help="also keep the rendered report here (default: a temporary file)")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1800, help="the viewport: the part shot without --full-page")
    parser.add_argument("--full-page", action="store_true", help="the whole page, not only the top")
    parser.add_argument("--section", metavar="LAB", help="only the first result of this lab (its tables and charts)")
    parser.add_argument("--chromium", type=Path, default=Path("/usr/bin/chromium"))
    args = parser.parse_args()
    if not args.chromium.exists():
        print(f"error: {args.chromium} not found; install Debian's chromium package or give --chromium PATH", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="kafkabench-report-") as scratch:
        html = (args.html or Path(scratch) / "report.html").resolve()
        try:
            write_report(args.results, html, None)
        except KafkabenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        problems = screenshot(html, args.out, args.chromium, args.width, args.height, args.full_page, args.section)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    print(args.out)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
