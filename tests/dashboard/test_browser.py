"""The dashboard in a real browser: headless Chromium (Debian's) through playwright drives
`streamlit run app.py` over the demo store, clicks a failure code through to a trajectory with
its evidence highlighted, and saves a screenshot of every page under tests/artifacts/."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
PAGES = [("", "Overview"), ("failures", "Failure modes"), ("trajectory", "Trajectory"), ("difficulty", "Difficulty"),
         ("milestones", "Milestones"), ("coders", "Coders"), ("curriculum", "Curriculum"), ("training", "Training"),
         ("sql", "SQL")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(demo_store):
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: scripts/setup.sh installs it (apt-get install chromium)")
    port = _free_port()
    env = {**os.environ, "CURRICULAB_DB": str(demo_store)}
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
                                "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("streamlit did not start in 60 s")
    yield url
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _settle(page, charts: int = 0) -> None:
    """Wait until the app stopped running and its charts drew (the first paint is placeholders)."""
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=30_000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)
    if charts:
        page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}",
                               timeout=30_000)
    page.wait_for_timeout(500)


def test_every_page_renders_and_a_code_leads_to_its_evidence(server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1500, "height": 2200})
    charts = {"Overview": 2, "Failure modes": 2, "Difficulty": 3, "Milestones": 1, "Coders": 1, "Curriculum": 2}
    for path, title in PAGES:
        page.goto(f"{server}/{path}")
        _settle(page, charts.get(title, 0))
        assert page.locator("h1").first.inner_text().strip() == title
        assert page.locator("[data-testid='stException']").count() == 0, title
        page.screenshot(path=str(ARTIFACTS / f"page-{path or 'overview'}.png"), full_page=True)

    # click through: a failure code -> its attempts -> a trajectory with the evidence marked
    page.goto(f"{server}/failures")
    _settle(page, 2)
    code_box = page.locator("[data-testid='stSelectbox']").filter(has_text="Failure code")
    code_box.locator("input").click()
    page.keyboard.type("skipped_verification")
    page.keyboard.press("Enter")
    _settle(page, 2)
    evidence = page.get_by_text("evidence", exact=True).first
    evidence.wait_for(timeout=30_000)
    evidence.scroll_into_view_if_needed()
    assert page.get_by_text("for rules:skipped_verification").count() >= 1
    page.screenshot(path=str(ARTIFACTS / "drilldown-evidence.png"), full_page=True)

    # the filter is in the URL and survives a reload
    page.goto(f"{server}/?model=atlas-7b-coder")
    _settle(page, 2)
    assert "atlas-7b-coder" in page.url
    metric = page.locator("[data-testid='stMetric']").filter(has_text="Models")
    assert metric.locator("[data-testid='stMetricValue']").inner_text().strip() == "1"
    page.close()
