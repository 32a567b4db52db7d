"""The Compare page and the trajectory viewer's terminal (issue #68 items 4, 5, 7), through
Streamlit's AppTest over stores ingested from Terminal-Bench files in their real shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from curriculab.analysis.ingest import ingest
from curriculab.analysis.store import Store
from tests.analysis.test_compare import MINI_RUN, A, B, C, _leaderboard, _task_folders
from tests.dashboard.test_app import _metric, _page
from tests.dashboard.test_pages import _fresh

pytestmark = pytest.mark.slow  # pages rendered in AppTest


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    path = root / "store.duckdb"
    with Store(path) as store:
        ingest(store, [_leaderboard(root / "board"), MINI_RUN], workers=1)
    return path


def test_the_compare_page_shows_rates_the_difference_and_tasks_linked_to_their_attempts(board, monkeypatch):
    at = _page(_fresh(board, monkeypatch), "compare")
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="compare_a").select(A).run()
    at.selectbox(key="compare_b").select(B).run()
    assert _metric(at, "A: pass rate (judged)") == "33.3%"  # 8 of 24
    assert _metric(at, "B: pass rate (judged)") == "20.0%"  # 4 of 20
    assert _metric(at, "A − B (shared tasks)") == "+10.0 points"  # 6/20 − 4/20 over the five shared tasks
    tasks = at.dataframe[0].value
    assert dict(zip(tasks["task_id"], tasks["verdict"]))["a-only"] == "A only"
    assert set(tasks["attempts"]) >= {"trajectory?search=a-only", "trajectory?search=slow-task"}
    assert any("import the benchmark's task folders" in i.value for i in at.info)  # no limits known yet
    # the same agent under two models: B offers only the systems that share A's agent
    at.radio(key="compare_pair").set_value("the same agent, two models").run()
    assert at.selectbox(key="compare_b").options == [C]


def test_the_viewer_shows_the_agents_final_screen_and_its_time(board, tmp_path, monkeypatch):
    with Store(board) as store:
        ingest(store, [_task_folders(tmp_path / "tasks")], "tasks")
        hello = store.query("select trajectory_id from trajectories where task_id = 'hello-world'").rows[0][0]
        slow = store.query(
            "select trajectory_id from trajectories where task_id = 'slow-task' and harness_error = 'agent_timeout'"
        ).rows[0][0]
    at = _fresh(board, monkeypatch)
    at.query_params["trajectory"] = hello
    at = _page(at, "trajectory")
    assert not at.exception, [e.value for e in at.exception]
    screen = " ".join(c.value for c in at.code)
    assert "mini-swe-agent (step 4, $0.02):" in screen and "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in screen
    assert any(c.value.startswith("Recording: `") and "agent.cast" in c.value for c in at.caption)
    assert any(c.value == "Time: the agent ran 2m 15s." for c in at.caption)
    at.query_params["trajectory"] = slow
    at.run()
    assert any(c.value == "Time: the agent ran 10m 0s of the task's 10m 0s limit (100%)." for c in at.caption)


def test_the_difficulty_page_tells_time_bound_tasks_from_possibly_broken_ones(board, monkeypatch):
    at = _page(_fresh(board, monkeypatch), "difficulty")
    assert any("2 never solved (1 time-bound: most attempts ran out of time)" in w.value for w in at.warning)
    health = at.dataframe[0].value
    assert dict(zip(health["task_id"], health["health"]))["slow-task"] == "never solved: time-bound"
