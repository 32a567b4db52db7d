"""What an analyst reads on the first screen of each page, over a real store (issue #58).

    python scripts/investigations/first_screens.py DB OUT [--width 1500 --height 900]

DB is a store (for the issue: the Terminal-Bench 1.0 leaderboard's `results/terminal-bench-core@0.1.1`
ingested and coded by the rules and the verifier); OUT a folder. Serves the dashboard over DB as
`curriculab dashboard` does, opens the Overview, Failure modes, Labelling (as annotator `analyst`),
Coders, Difficulty and Trajectory pages in headless Chromium at one screen's size, waits for each
page's run to finish, and writes OUT/<page>.png (the first screen only) and OUT/screens.json: per
page, the metrics, notices and headings visible without scrolling, and how many rows its first
table holds against how many it shows.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
CHROMIUM = "/usr/bin/chromium"
PAGES = (  # (page name, its path; the Overview is the root)
    ("overview", ""),
    ("failures", "failures"),
    ("labelling", "labelling?annotator=analyst"),
    ("coders", "coders"),
    ("difficulty", "difficulty"),
    ("trajectory", "trajectory"),
)
DONE = """() => { const d = document.querySelector('.curriculab-run-done');
  return d && !d.closest('[data-stale="true"]') && !document.querySelector('[data-stale="true"]')
         && !document.querySelector('[data-testid="stStatusWidget"]'); }"""
VISIBLE = """(height) => {
  const seen = (e) => { const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < height && r.width > 0; };
  const texts = (selector) => [...document.querySelectorAll(selector)].filter(seen).map((e) => e.innerText.trim());
  return {
    headings: texts('h1, h2, h3'),
    metrics: texts('[data-testid="stMetric"]').map((t) => t.replace(/\\n+/g, ': ')),
    notices: texts('[data-testid="stAlert"]'),
    captions: texts('[data-testid="stCaptionContainer"]').slice(0, 6),
    charts: [...document.querySelectorAll('.js-plotly-plot')].filter(seen).map(
      (e) => (e.querySelector('.gtitle') || {}).textContent || '(untitled chart)'),
    tables: [...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(seen).map((e) => {
      const r = e.getBoundingClientRect(); return {top: Math.round(r.top), bottom: Math.round(r.bottom),
        right_edge_cut: r.right > window.innerWidth}; }),
  };
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    from dashboard_first_page import serving  # bench/: the dashboard started as the bench starts it
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1500)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    screens = {}
    with serving(args.db, _free_port()) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        for name, path in PAGES:
            started = time.perf_counter()
            page.goto(f"{url}/{path}")
            page.wait_for_function(DONE, timeout=120_000)
            time.sleep(1.0)  # the charts' first paint
            screens[name] = {"seconds": round(time.perf_counter() - started, 1), **page.evaluate(VISIBLE, args.height)}
            page.screenshot(path=str(args.out / f"{name}.png"))
            print(f"{name}: {screens[name]['seconds']} s", flush=True)
        browser.close()
    (args.out / "screens.json").write_text(json.dumps(screens, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
