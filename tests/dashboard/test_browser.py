"""The dashboard in a real browser: headless Chromium (Debian's) through playwright drives
`streamlit run app.py` over the demo store and over a store of real agent runs (the
Terminal-Bench leaderboard submissions and Harbor trials of several agents), saves a screenshot of
every page under tests/artifacts/, clicks a failure code through to its evidence, and labels 20
trajectories with one key each until the code is reliable and the next plan acts on it.

Every wait is for a condition (the page's script run finished: no status widget, no stale
element; the charts drew; the text expected appeared), never a fixed settle."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from curriculab.analysis import queries
from curriculab.analysis.store import Store
from curriculab.dashboard import streamlit_command

pytestmark = pytest.mark.slow  # a Streamlit server and Chromium per test

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
FIXTURES = ROOT / "tests" / "fixtures"
CHROMIUM = "/usr/bin/chromium"
PAGES = [
    ("", "Overview"),
    ("failures", "Failure modes"),
    ("trajectory", "Trajectory"),
    ("compare", "Compare"),
    ("difficulty", "Difficulty"),
    ("milestones", "Milestones"),
    ("coders", "Coders"),
    ("curriculum", "Curriculum"),
    ("training", "Training"),
    ("labelling", "Labelling"),
    ("sql", "SQL"),
]
TIMEOUT_MS = 60_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(db: Path):
    """`streamlit run app.py` over `db` (the command `curriculab dashboard` runs), until the block ends."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: scripts/setup.sh installs it (apt-get install chromium)")
    port = _free_port()
    process = subprocess.Popen(
        streamlit_command(port),
        cwd=ROOT,
        env={**os.environ, "CURRICULAB_DB": str(db)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory) -> Path:
    """Real runs: Terminal-Bench leaderboard submissions (installed agents: verdicts only) and
    Harbor trials of eight agents (ATIF trajectories), coded by the rules and the verifier,
    difficulty fitted."""
    from curriculab.analysis.coding import run_rule_coders, run_verifier_coder
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.ingest import ingest

    path = tmp_path_factory.mktemp("real") / "real.duckdb"
    with Store(path) as store:
        ingest(store, [FIXTURES / "tb-leaderboard", FIXTURES / "harbor-agents", FIXTURES / "harbor"], workers=1)
        run_rule_coders(store)
        run_verifier_coder(store)
        fit_store(store)
    return path


def settle(page, charts: int = 0, after: int = 0) -> int:
    """Wait until a page run (numbered over `after`) has finished and what it drew is current, and
    return its number. The app ends every run with a marker numbered per run; a new run marks the
    old elements stale until it replaces them, so a marker that is not stale belongs to a finished
    run. Then wait for the charts to draw (their first paint is placeholders)."""
    page.wait_for_function(
        f"""() => {{
        const done = document.querySelector('.curriculab-run-done');
        return done && Number(done.dataset.run) > {after} && !done.closest('[data-stale="true"]')
               && !document.querySelector('[data-stale="true"]')
               && !document.querySelector('[data-testid="stStatusWidget"]');
    }}""",
        timeout=TIMEOUT_MS,
    )
    if charts:
        page.wait_for_function(
            f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}", timeout=TIMEOUT_MS
        )
    return int(page.locator(".curriculab-run-done").first.get_attribute("data-run"))


def visit_every_page(page, url: str, prefix: str, charts: dict[str, int]) -> None:
    for path, title in PAGES:
        page.goto(f"{url}/{path}")
        settle(page, charts.get(title, 0))
        page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=TIMEOUT_MS)
        assert page.locator("[data-testid='stException']").count() == 0, title
        assert page.get_by_text("Page script, title and icon").count() == 0  # no stray docstring
        assert page.get_by_text("Deploy", exact=True).count() == 0, "Streamlit's Deploy button is shown"
        page.screenshot(path=str(ARTIFACTS / f"{prefix}-{path or 'overview'}.png"), full_page=True)


def test_every_page_renders_and_a_code_leads_to_its_evidence(demo_store, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 2400})
    with serving(demo_store) as url:
        visit_every_page(
            page,
            url,
            "demo",
            {"Overview": 2, "Failure modes": 2, "Difficulty": 3, "Milestones": 1, "Coders": 1, "Curriculum": 2},
        )
        # click through: a failure code -> its attempts -> a trajectory with the evidence marked
        page.goto(f"{url}/failures")
        settle(page, 2)
        code_box = page.locator("[data-testid='stSelectbox']").filter(has_text="Failure code")
        code_box.locator("input").click()
        page.keyboard.type("skipped_verification")
        page.keyboard.press("Enter")
        evidence = page.get_by_text("for rules:skipped_verification").first
        evidence.wait_for(timeout=TIMEOUT_MS)  # the text of the new run, not whatever was there before it
        settle(page)
        evidence.scroll_into_view_if_needed()
        highlighted = page.locator("[class*='st-key-evidence-drill-']")
        assert highlighted.count() >= 1  # the whole evidence step is highlighted, not a tag in it
        page.screenshot(path=str(ARTIFACTS / "demo-drilldown-evidence.png"), full_page=True)

        # the filter is in the URL and survives a reload
        page.goto(f"{url}/?model=atlas-7b-coder")
        settle(page, 2)
        assert "atlas-7b-coder" in page.url
        metric = page.locator("[data-testid='stMetric']").filter(has_text="Models")
        assert metric.locator("[data-testid='stMetricValue']").inner_text().strip() == "1"
    page.close()


def test_every_page_renders_over_real_agent_runs(real_store, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 2400})
    with serving(real_store) as url:
        visit_every_page(page, url, "real", {"Overview": 1, "Difficulty": 2})
        page.goto(f"{url}/failures?agent=cursor-cli")  # an installed agent: verdicts only, nothing to code
        settle(page)
        # the default view: the rules say why they could not judge, the tests say how the trials failed
        page.get_by_text("No failure code to show: coder rules").wait_for(timeout=TIMEOUT_MS)
        page.get_by_role("heading", name="What the tests say (verifier)").wait_for(timeout=TIMEOUT_MS)
        page.locator(".st-key-failure_shares_verifier").wait_for(timeout=TIMEOUT_MS)
        page.screenshot(path=str(ARTIFACTS / "real-failures-installed-agent.png"), full_page=True)
        page.goto(f"{url}/?agent=cursor-cli")
        settle(page, 1)
        board = page.locator("[data-testid='stMetric']").filter(has_text="Systems")
        assert board.locator("[data-testid='stMetricValue']").inner_text().strip() == "1"
    page.close()


def test_the_labels_that_make_a_code_reliable_are_given_in_the_browser(demo_store, tmp_path, browser):
    # 17 of the 20 labels a code needs are stored beforehand (agreeing with the coder, both ways),
    # the last 3, which cross the threshold, are given in the browser by key; the whole 20 by
    # keyboard is the AppTest test's (tests/dashboard/test_pages.py), at a fraction of the time
    from curriculab.planner import plan as planning
    from curriculab.taxonomy.taxonomy import load_taxonomy
    from curriculab.training.problems import builtin_problems

    db = tmp_path / "labelling.duckdb"
    shutil.copy(demo_store, db)
    with Store(db) as store:
        store.query("delete from labels")
        store.query("delete from code_reliability where coder = 'rules'")
        before = planning.build_plan(store, "atlas-7b-coder", builtin_problems(), "builtin").reasons
        version = load_taxonomy().version
        judged = [
            r
            for r in queries.records(queries.coded_for_labelling(store, "rules", version))
            if r["code"] == "skipped_verification"
        ]
        seeded = [r for r in judged if r["flagged"]][:9] + [r for r in judged if not r["flagged"]][:8]
        assert len(seeded) == 17
        store.save_labels("browser", version, {(r["trajectory_id"], r["code"]): bool(r["flagged"]) for r in seeded})
    page = browser.new_page(viewport={"width": 1440, "height": 2400})
    with serving(db) as url:
        page.goto(f"{url}/labelling?annotator=browser")
        settle(page)
        heading = page.get_by_role("heading", name=re.compile(r"Is `?skipped_verification`? present"))
        for _ in range(3):
            heading.wait_for(timeout=TIMEOUT_MS)
            page.get_by_role("button", name="Present (p)").wait_for(timeout=TIMEOUT_MS)
            queued = int(re.search(r"\(([\d,]+) in the queue\)", heading.inner_text()).group(1).replace(",", ""))
            item = page.get_by_role("heading", name=re.compile("attempt")).inner_text()
            says = page.get_by_text("the coder says").first.inner_text()
            run = settle(page)
            page.evaluate("document.activeElement && document.activeElement.blur()")  # the key goes to the page
            page.keyboard.press("p" if "the coder says present" in says else "a")
            settle(page, after=run)  # the click's run, then the rerun the label asks for
            page.get_by_role("heading", name=re.compile(rf"\({queued - 1:,} in the queue\)")).wait_for(
                timeout=TIMEOUT_MS
            )
            assert page.get_by_role("heading", name=re.compile("attempt")).inner_text() != item
        page.get_by_text("reliable (κ = 1.00 on 20 labels): the planner uses it").first.wait_for(timeout=TIMEOUT_MS)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "demo-labelling.png"), full_page=True)
    page.close()
    with Store(db) as store:
        row = queries.records(queries.code_reliability(store, "rules"))[0]
        after = planning.build_plan(store, "atlas-7b-coder", builtin_problems(), "builtin").reasons
    assert (row["annotator"], row["code"], row["n"], row["reliable"]) == ("browser", "skipped_verification", 20, True)
    ignored = "skipped_verification (rules): no labels yet: the planner cannot use this code"
    assert any(r.startswith(ignored) for r in before) and not any(r.startswith(ignored) for r in after)
