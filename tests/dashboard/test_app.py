"""Every page of the dashboard on the demo store through Streamlit's AppTest: no exception, the
expected elements, filters that change the numbers and persist, guidance on an empty store, the
drill-down to evidence, and the SQL console's refusals."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from curriculab.analysis.store import Store

pytestmark = pytest.mark.slow  # pages rendered over the demo store

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGES = [
    "overview",
    "failures",
    "trajectory",
    "compare",
    "difficulty",
    "milestones",
    "coders",
    "curriculum",
    "training",
    "sql",
]


@pytest.fixture
def app(demo_store, monkeypatch):
    monkeypatch.setenv("CURRICULAB_DB", str(demo_store))
    return _fresh()


def _fresh() -> AppTest:
    from curriculab.dashboard import common

    common._cached.clear()
    common._LAST_GOOD.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    return at


def _page(at: AppTest, name: str) -> AppTest:
    return at.switch_page(f"dashboard/views/{name}.py").run()


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_every_page_renders_its_elements_without_an_exception(app):
    expected_charts = {"overview": 2, "failures": 2, "difficulty": 3, "milestones": 1, "coders": 1, "curriculum": 2}
    for name in PAGES:
        at = _page(app, name)
        assert not at.exception, (name, [e.value for e in at.exception])
        assert not at.error, (name, [e.value for e in at.error])
        assert len(at.get("plotly_chart")) >= expected_charts.get(name, 0), name
    overview = _page(app, "overview")
    assert _metric(overview, "Models") == "3" and _metric(overview, "Attempts") == "324"
    assert [t.value for t in overview.title] == ["Overview"]
    assert overview.get("download_button")  # every table has its CSV


def test_a_filter_changes_the_numbers_and_persists_across_pages_and_in_the_url(app):
    at = _page(app, "overview")
    all_attempts = int(_metric(at, "Attempts"))
    at.sidebar.selectbox(key="filter_model").select("atlas-7b-coder").run()
    assert int(_metric(at, "Attempts")) < all_attempts and _metric(at, "Models") == "1"
    assert at.query_params["model"] in ("atlas-7b-coder", ["atlas-7b-coder"])
    failures = _page(at, "failures")
    assert failures.sidebar.selectbox(key="filter_model").value == "atlas-7b-coder"
    shares = next(d.value for d in failures.dataframe if "share" in d.value.columns)
    assert set(shares["system"]) == {"terminus-2 · atlas-7b-coder"}


def test_the_url_sets_the_filters(demo_store, monkeypatch):
    monkeypatch.setenv("CURRICULAB_DB", str(demo_store))
    from curriculab.dashboard import common

    common._cached.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["model"] = "cirrus-large"
    at.run()
    assert _metric(at, "Models") == "1"


def test_a_failure_code_drills_down_to_its_evidence(app):
    at = _page(app, "failures")
    at.selectbox(key="drill_code").select("skipped_verification").run()
    trajectory = at.selectbox(key="drill_trajectory").value
    assert trajectory
    text = " ".join(m.value for m in at.markdown)
    assert "**evidence** for rules:skipped_verification" in text
    assert any("label: simulator" in str(list(d.value.columns)) for d in at.dataframe)


def test_the_curriculum_page_explains_a_plan_and_compares_two(app):
    at = _page(app, "curriculum")
    reasons = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert any("zero-variance guard" in r for r in reasons) and any("capability" in r for r in reasons)
    assert at.selectbox(key="plan_b").value
    assert any(b.label == "Download plan.yaml" for b in at.get("download_button"))


def test_an_empty_store_and_a_missing_one_show_guidance(tmp_path, monkeypatch):
    empty = tmp_path / "empty.duckdb"
    with Store(empty):
        pass
    for path, words in ((empty, "holds no attempts yet"), (tmp_path / "missing.duckdb", "No store at")):
        monkeypatch.setenv("CURRICULAB_DB", str(path))
        at = _fresh()
        for name in PAGES:
            at = _page(at, name)
            assert not at.exception, (name, [e.value for e in at.exception])
            notes = [n.value for n in list(at.info) + list(at.warning)]
            assert any(words in n for n in notes), (name, notes)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("select * from read_csv('/etc/passwd')", "reads the store only: no files, network, extensions or settings"),
        ("copy trajectories to '/tmp/curriculab-leak.csv'", "is a COPY statement"),
        ("attach '/tmp/other.duckdb' as other", "is a ATTACH statement"),
        ("install httpfs", "is a LOAD statement"),
        ("load httpfs", "is a LOAD statement"),
        ("set threads = 1", "is a SET statement"),
        ("pragma enable_profiling", "is a PRAGMA statement"),
        ("create table x (a int)", "is a CREATE statement"),
        ("insert into plans (plan_id) values ('x')", "is a INSERT statement"),
        ("delete from trajectories", "is a DELETE statement"),
        ("select 1; select 2", "holds 2 statements"),
    ],
)
def test_the_sql_console_refuses_unsafe_statements_with_a_message(app, sql, message):
    at = _page(app, "sql")
    at.text_area(key="sql_text").input(sql)
    at.button(key="sql_run").click().run()
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not Path("/tmp/curriculab-leak.csv").exists()


def test_the_sql_console_answers_a_select_with_a_row_cap(app):
    at = _page(app, "sql")
    at.text_area(key="sql_text").input("select range as n from range(5000)")
    at.button(key="sql_run").click().run()
    assert not at.error and len(at.dataframe[0].value) == 1000
    assert any("Only the first 1,000 rows" in w.value for w in at.warning)


def test_a_long_statement_is_stopped_at_its_timeout(demo_store):
    with Store(demo_store, read_only=True, sealed=True) as store:
        started = time.monotonic()
        with pytest.raises(Exception, match=r"ran over 0.5 s and was stopped"):
            store.query_one_select("select count(*) from range(100000000000) a", timeout_s=0.5)
        assert time.monotonic() - started < 5


def test_pages_show_a_notice_not_an_error_while_a_writer_holds_the_store(demo_store_copy, monkeypatch):
    # the writer takes the store before this process ever opens it (DuckDB shares one open file per process)
    from curriculab.dashboard import common

    monkeypatch.setenv("CURRICULAB_DB", str(demo_store_copy))
    monkeypatch.setattr(common, "READ_WAIT_S", 0.5)  # each page waits this long for the writer, then says so
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"""
import time
from curriculab.analysis.store import Store
with Store({str(demo_store_copy)!r}) as store:
    store.query("create table if not exists held (a int)")
    print("holding", flush=True)
    time.sleep(30)
""",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        at = _fresh()
        for name in ("overview", "failures", "coders", "curriculum"):
            at = _page(at, name)
            assert not at.exception and not at.error, (name, [e.value for e in at.error])
            assert any("being written" in w.value for w in at.warning), (name, [w.value for w in at.warning])
    finally:
        holder.kill()
        holder.wait()
    at = _page(at, "overview")  # the writer is gone: the data shows
    assert _metric(at, "Models") == "3"


def test_the_run_selector_filters_the_rollout_codes(demo_store_copy, monkeypatch):
    import json

    from curriculab.analysis.coding import run_verifier_coder
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.store import Store
    from curriculab.training.problems import builtin_problems
    from curriculab.training.rewards import Scorer
    from curriculab.training.rollouts import completion_record

    problem = next(p for p in builtin_problems() if p.entry_point == "add")
    texts = {
        "run-a": "def add(a, b):\n    return a + b\n```\nprose",
        "run-b": "```python\ndef add(a, b):\n    return a - b\n```",
    }
    results = Scorer({problem.problem_id: problem}).run([problem.problem_id] * 2, list(texts.values()))
    path = demo_store_copy.parent / "rollouts.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                completion_record(
                    trajectory_id=f"{run}/0",
                    run={"run_id": run, "agent": "curriculab-grpo", "model": "m", "config": {}},
                    model="m",
                    problem=problem,
                    attempt=0,
                    prompt=problem.prompt,
                    completion=text,
                    result=result,
                    reward=0.0,
                )
            )
            + "\n"
            for (run, text), result in zip(texts.items(), results)
        )
    )
    with Store(demo_store_copy) as store:
        ingest(store, [path], workers=1)
        run_verifier_coder(store)
        store.save_training_metrics("run-a", [("run-a", 1, "reward", 0.0), ("run-a", 1, "time/generation_s", 1.25)])
        store.save_training_metrics("run-b", [("run-b", 1, "reward", 0.0), ("run-b", 1, "time/generation_s", 2.5)])
    monkeypatch.setenv("CURRICULAB_DB", str(demo_store_copy))
    at = _page(_fresh(), "training")

    def shown_runs() -> set[str]:
        table = next(d.value for d in at.dataframe if "code" in d.value.columns and "run_id" in d.value.columns)
        return set(table["run_id"])

    def step_time_chart() -> dict:  # the "where each step's time went" chart follows the last chosen run
        import base64
        import json as _json

        import numpy as np

        chart = next(_json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Where each step" in c.proto.spec)
        for trace in chart["data"]:  # plotly ships numbers as typed arrays: {"dtype", "bdata"}
            if isinstance(trace["y"], dict):
                trace["y"] = np.frombuffer(base64.b64decode(trace["y"]["bdata"]), dtype=trace["y"]["dtype"]).tolist()
        return chart

    assert shown_runs() == {"run-a", "run-b"}  # both runs by default
    chart = step_time_chart()
    assert "run-b" in chart["layout"]["title"]["text"] and chart["data"][0]["y"] == [2.5]
    at.multiselect(key="training_runs").set_value(["run-a"]).run()
    chart = step_time_chart()
    assert "run-a" in chart["layout"]["title"]["text"] and chart["data"][0]["y"] == [1.25]
    at.multiselect(key="training_runs").set_value(["run-b"]).run()
    assert shown_runs() == {"run-b"}


def test_a_read_that_waited_for_a_writer_says_the_numbers_may_be_partial(demo_store_copy, monkeypatch):
    monkeypatch.setenv("CURRICULAB_DB", str(demo_store_copy))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"""
import time
from curriculab.analysis.store import Store
with Store({str(demo_store_copy)!r}) as store:
    store.query("create table if not exists held (a int)")
    print("holding", flush=True)
    time.sleep(1.0)
""",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        at = _fresh()  # its first read waits (up to READ_WAIT_S) for the writer, then reads
    finally:
        holder.wait(timeout=30)
    assert not at.exception and not at.error
    assert any("numbers are partial" in i.value for i in at.info), [i.value for i in at.info]
    assert _metric(at, "Models") == "3"


def test_no_page_has_a_bare_string_streamlits_magic_would_print():
    """A string statement in a page script (an attribute docstring below a constant) is written on
    the page by Streamlit's magic, above the title; only the module's docstring is exempt."""
    import ast

    views = Path(__file__).resolve().parents[2] / "dashboard" / "views"
    printed = {}
    for page in sorted(views.glob("*.py")):
        body = ast.parse(page.read_text()).body
        strings = [
            node.lineno
            for node in body[1:]
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        ]
        if strings:
            printed[page.name] = strings
    assert printed == {}
