"""The first page of a fresh dashboard server against the same page warm, in a real browser, over
one store (issue #43: "the first page of a fresh server took ~17 s"; goal ≤ 3× warm).

    python bench/dashboard_first_page.py DIR [--repeat 3]

DIR is a directory to ingest (the bench used `results/terminal-bench-core@0.1.1` of
`laude-institute/terminal-bench-leaderboard`: 4,800 real trials); it is ingested into a fresh
store and coded as a user would (`curriculab code` with the rules and the verifier). Then, per
round: start the server `curriculab dashboard` runs (always on the same port), wait for its health
check, open the Overview in headless Chromium and time until the page's run finished and its
charts drew ("first": the fresh server's cost, in a browser that has loaded the dashboard before,
so its static files are cached as they are for the warm loads); reload the same page `--repeat`
times ("warm": the same server, its caches filled); and open it in a browser context of its own on
that warm server ("cold browser": Streamlit's and plotly's JavaScript fetched and compiled anew,
the cost of an analyst's very first visit, which no server change removes). Round 0 only fills the
browser's cache. Prints the seconds and first / warm, the ratio the issue bounds.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"
DONE = """() => { const d = document.querySelector('.curriculab-run-done');
  return d && !d.closest('[data-stale="true"]') && !document.querySelector('[data-stale="true"]')
         && !document.querySelector('[data-testid="stStatusWidget"]')
         && document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1; }"""


def build(source: Path) -> Path:
    from curriculab.analysis.coding import run_rule_coders, run_verifier_coder
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.store import Store

    db = Path(tempfile.mkdtemp()) / "first-page.duckdb"
    with Store(db) as store:
        ingest(store, [source])
        run_rule_coders(store)
        run_verifier_coder(store)
        trials = store.query("select count(*) from trajectories")[1][0][0]
    print(f"store: {trials:,} trials ({db})")
    return db


def timed_visit(page, url: str) -> float:
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_function(DONE, timeout=120_000)
    return time.perf_counter() - started


@contextmanager
def serving(db: Path, port: int) -> Iterator[str]:
    """The dashboard over `db` on `port`, started as `curriculab dashboard` starts it and answering its
    health check, until the block ends: its URL."""
    from curriculab.dashboard import streamlit_command

    server = subprocess.Popen(
        streamlit_command(port),
        cwd=ROOT,
        env={**os.environ, "CURRICULAB_DB": str(db)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def round_trip(db: Path, context, browser, port: int, repeat: int) -> tuple[float, list[float], float]:
    with serving(db, port) as url:
        page = context.new_page()
        first = timed_visit(page, url)
        warm = [timed_visit(page, url) for _ in range(repeat)]
        page.close()
        alone = browser.new_context(viewport={"width": 1500, "height": 1200})
        cold_browser = timed_visit(alone.new_page(), url)
        alone.close()
        return first, warm, cold_browser


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="fresh servers, one after another")
    args = parser.parse_args()
    db = build(args.source)
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1500, "height": 1200})
        round_trip(db, context, browser, port, 1)  # round 0: the browser has seen the dashboard once
        print("| round | first page (fresh server) | warm (median) | first / warm | cold browser, warm server |")
        print("|---|---|---|---|---|")
        for k in range(args.rounds):
            first, warm, cold_browser = round_trip(db, context, browser, port, args.repeat)
            middle = statistics.median(warm)
            print(f"| {k + 1} | {first:.2f} s | {middle:.2f} s | {first / middle:.2f}x | {cold_browser:.2f} s |")
        browser.close()


if __name__ == "__main__":
    main()
