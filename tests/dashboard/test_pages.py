"""What an analyst relies on, page by page, through Streamlit's AppTest: every filter changes each
page's numbers or the page says it ignores it; training rollouts stay out of evaluation views; the
milestone funnel counts what a person would; failure modes explain an abstaining coder; the
trajectory viewer lists, searches, shows tests, diffs and long trajectories; labelling makes a code
reliable and changes the next plan."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from curriculab.analysis import queries
from curriculab.analysis.store import Store
from curriculab.taxonomy.versions import NEWEST
from tests.dashboard.test_app import _fresh as fresh_app
from tests.dashboard.test_app import _metric, _page

pytestmark = pytest.mark.slow  # pages rendered over the demo store

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
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
    "labelling",
    "sql",
]


def _display_values(table) -> pd.DataFrame:
    """What a styled table shows in its cells (the text people read), beside `table.value`'s numbers."""
    import pyarrow as pa

    return pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_all().to_pandas()


def _fresh(path: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("CURRICULAB_DB", str(path))
    return fresh_app()


def _fingerprint(at: AppTest) -> list[str]:
    """Everything a page shows that carries a number: tables, metrics, charts, notices, text."""
    return (
        [d.value.to_csv() for d in at.dataframe]
        + [f"{m.label}={m.value}" for m in at.metric]
        + [c.proto.spec for c in at.get("plotly_chart")]
        + [m.value for m in list(at.markdown) + list(at.subheader) if "curriculab-run-done" not in m.value]
        + [n.value for n in list(at.info) + list(at.success) + list(at.warning)]
    )


def _rollouts(path: Path, store_path: Path) -> None:
    """Two GRPO rollouts (agent curriculab-grpo) of a built-in problem, coded by the verifier, with metrics."""
    from curriculab.analysis.coding import run_verifier_coder
    from curriculab.analysis.ingest import ingest
    from curriculab.training.problems import builtin_problems
    from curriculab.training.rewards import Scorer
    from curriculab.training.rollouts import completion_record

    problem = next(p for p in builtin_problems() if p.entry_point == "add")
    texts = {
        "grpo-a": "def add(a, b):\n    return a + b\n",
        "grpo-b": "```python\ndef add(a, b):\n    return a - b\n```",
    }
    results = Scorer({problem.problem_id: problem}).run([problem.problem_id] * 2, list(texts.values()))
    path.write_text(
        "".join(
            json.dumps(
                completion_record(
                    trajectory_id=f"{run}/0",
                    run={"run_id": run, "agent": queries.TRAINING_AGENT, "model": "tiny", "config": {}},
                    model="tiny@step0",
                    problem=problem,
                    attempt=0,
                    prompt=problem.prompt,
                    completion=text,
                    result=result,
                    reward=0.5,
                )
            )
            + "\n"
            for (run, text), result in zip(texts.items(), results)
        )
    )
    with Store(store_path) as store:
        ingest(store, [path], workers=1)
        run_verifier_coder(store)
        for run in texts:
            store.save_training_metrics(
                run,
                [(run, step, "reward", 0.5) for step in (1, 2)]
                + [(run, step, "frac_reward_zero_std", 1.0) for step in (1, 2)],
            )


@pytest.fixture(scope="module")
def mixed_store(demo_store, tmp_path_factory) -> Path:
    """The demo store with two training runs' rollouts in it."""
    root = tmp_path_factory.mktemp("mixed")
    path = root / "mixed.duckdb"
    shutil.copy(demo_store, path)
    _rollouts(root / "rollouts.jsonl", path)
    return path


def _choices(path: Path) -> dict[str, str]:
    """A value for every filter that selects something other than the default view."""
    with Store(path, read_only=True) as store:
        attempts = queries.attempts(store, scope=queries.Scope())
    return {
        "kind": "training",
        "agent": "claude-code",
        "model": "atlas-7b-coder",
        "run": "sim-cirrus-large",
        "task_type": sorted(attempts["task_type"].unique())[0],
        "language": sorted(attempts["language"].unique())[0],
        "tier": sorted(attempts["tier"].unique())[0],
        "coder": "verifier",
    }


@pytest.mark.parametrize("name", PAGES)
def test_every_filter_changes_the_page_or_the_page_says_it_ignores_it(mixed_store, monkeypatch, name):
    from curriculab.dashboard.common import FILTERS

    at = _page(_fresh(mixed_store, monkeypatch), name)
    if name == "labelling":
        at.text_input(key="label_annotator").input("tester").run()
    base = _fingerprint(at)
    assert base or name == "sql", name  # the console shows nothing before a query runs
    for key, value in _choices(mixed_store).items():
        box = at.sidebar.selectbox(key=f"filter_{key}")
        default = box.value
        box.select(value).run()
        assert not at.exception, (name, key, [e.value for e in at.exception])
        declared = any("ignores the filter(s)" in c.value and FILTERS[key] in c.value for c in at.caption)
        assert declared or _fingerprint(at) != base, f"{name} neither applies nor declares the {key} filter"
        at.sidebar.selectbox(key=f"filter_{key}").select(default).run()
    if name not in ("trajectory", "curriculum"):  # (there, what was picked under a filter stays picked)
        assert _fingerprint(at) == base, name  # clearing the filters gives the first view back


def test_training_rollouts_stay_out_of_evaluation_views_unless_asked_for(mixed_store, monkeypatch):
    at = _page(_fresh(mixed_store, monkeypatch), "overview")
    assert _metric(at, "Models") == "3" and _metric(at, "Attempts") == "324"
    assert "tiny@step0" not in " ".join(at.dataframe[0].value["system"])
    at.sidebar.selectbox(key="filter_kind").select("training").run()
    assert _metric(at, "Attempts") == "2" and _metric(at, "Models") == "1"
    assert at.query_params["kind"] in ("training", ["training"])
    at.sidebar.selectbox(key="filter_kind").select("all").run()
    assert _metric(at, "Attempts") == "326"


def test_the_systems_leaderboard_ranks_by_the_leaderboards_figure_and_shows_percentages(mixed_store, monkeypatch):
    at = _page(_fresh(mixed_store, monkeypatch), "overview")
    board = next(d for d in at.dataframe if "leaderboard_accuracy" in d.value.columns)
    figures = list(board.value["leaderboard_accuracy"])
    assert figures == sorted(figures, reverse=True) and board.value["system"].iloc[0] == "terminus-2 · cirrus-large"
    # on screen at 1,500 px: the leaderboard's figure, its spread over runs, the judged rate
    assert list(board.value.columns[:4]) == ["system", "leaderboard_accuracy", "runs_spread", "pass_rate"]
    shown = _display_values(board)
    # every proportion is shown as a percentage with one decimal, rounded half-up from its value
    for column in ("leaderboard_accuracy", "pass_rate", "ci_low", "ci_high"):
        for value, text in zip(board.value[column], shown[column]):
            assert re.fullmatch(r"\d{1,3}\.\d%", text) and float(text[:-1]) == pytest.approx(value * 100, abs=0.05)
    # every system has a spread: over its runs, or over attempt i of every task where one run holds them
    assert all(
        re.fullmatch(r"\d+\.\d%–\d+\.\d% over \d+ (runs|attempt indices)|one attempt per task: no spread", t)
        for t in shown["runs_spread"]
    )
    assert all(board.value["ci_low"] <= board.value["pass_rate"]) and all(
        board.value["pass_rate"] <= board.value["ci_high"]
    )


def test_milestone_stages_match_a_hand_computed_funnel():
    nan = float("nan")
    funnel = pd.DataFrame(
        [  # model m: 3-milestone tasks (2 stop at 1, 1 at 2, 3 pass all); 4-milestone (1 at 1, 2 at 4, 1 all)
            ("m", 3, 1.0, 2),
            ("m", 3, 2.0, 1),
            ("m", 3, nan, 3),
            ("m", 4, 1.0, 1),
            ("m", 4, 4.0, 2),
            ("m", 4, nan, 1),
        ],
        columns=["model", "milestones_total", "first_failed_milestone", "attempts"],
    )
    stages = queries.milestone_stages(funnel)
    assert list(zip(stages["reached"], stages["passed"])) == [(10, 7), (7, 6), (6, 6), (3, 1)]
    assert stages["share_of_reached"].round(3).tolist() == [0.7, round(6 / 7, 3), 1.0, round(1 / 3, 3)]


def test_the_milestones_page_shows_shares_of_those_who_reached_each_stage(demo_store, monkeypatch):
    at = _page(_fresh(demo_store, monkeypatch), "milestones")
    stages = next(d.value for d in at.dataframe if "share_of_reached" in d.value.columns)
    atlas = stages[stages["model"] == "atlas-7b-coder"]
    with Store(demo_store, read_only=True) as store:
        attempts = store.frame("""select milestones_total as total, milestones_passed as passed from trajectories
                                  where model = 'atlas-7b-coder' and milestones_total > 0 and outcome <> 'error'""")
    first = atlas.iloc[0]
    assert first["reached"] == len(attempts) and first["passed"] == int((attempts["passed"] >= 1).sum())
    fourth = atlas[atlas["milestone"] == 4].iloc[0]
    assert fourth["reached"] == int(((attempts["total"] == 4) & (attempts["passed"] >= 3)).sum())
    stopped = next(d.value for d in at.dataframe if "stopped_at" in d.value.columns)
    assert "passed all" in set(stopped["stopped_at"]) and not stopped["stopped_at"].isna().any()


@pytest.fixture(scope="module")
def agents_store(tmp_path_factory) -> Path:
    """Real-shaped agent trajectories (Harbor ATIF from several agents, SWE-agent) and the
    Terminal-Bench leaderboard runs, coded by the rules; plus one 1,000-step trajectory."""
    from curriculab.analysis.coding import run_rule_coders
    from curriculab.analysis.ingest import ingest

    root = tmp_path_factory.mktemp("agents")
    long = root / "long.jsonl"
    steps = [
        {
            "step_idx": i,
            "source": "agent" if i % 2 else "env",
            "action": "run" if i % 2 else None,
            "command": f"echo {i}" if i % 2 else None,
            "output": f"line {i}\n" * 3,
        }
        for i in range(1000)
    ]
    long.write_text(
        json.dumps(
            {
                "trajectory_id": "long-1000",
                "run_id": "long-run",
                "task_id": "long-task",
                "model": "m-long",
                "outcome": "failed",
                "steps": steps,
            }
        )
        + "\n"
    )
    path = root / "agents.duckdb"
    with Store(path) as store:
        ingest(
            store, [FIXTURES / "harbor-agents", FIXTURES / "swe-agent", FIXTURES / "tb-leaderboard", long], workers=1
        )
        run_rule_coders(store)
    return path


def _installed_agents_store(tmp_path, *coders, passed_after_timeout: bool = False) -> Path:
    """The leaderboard's installed-agent trials (verdicts and per-test results, no actions), coded by
    `coders`; `passed_after_timeout` adds a trial whose tests passed although the harness recorded
    `agent_timeout` (378 of the real leaderboard's 1,614 agent faults are such)."""
    from curriculab.analysis import coding
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_with_a_pass_after_timeout

    source = leaderboard_with_a_pass_after_timeout(tmp_path) if passed_after_timeout else FIXTURES / "tb-leaderboard"
    path = tmp_path / "tb.duckdb"
    with Store(path) as store:
        ingest(store, [source], workers=1)
        for run in coders:
            getattr(coding, run)(store)
    return path


def test_failure_modes_explain_why_nothing_is_coded_on_installed_agents(tmp_path, monkeypatch):
    path = _installed_agents_store(tmp_path, "run_rule_coders")
    at = _page(_fresh(path, monkeypatch), "failures")
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    assert "No failure code to show: coder `rules`" in notes and "installed agents log only their verdicts" in notes
    # no empty share chart with an unlabelled whisker: the one chart is how failures ended (a crash, a timeout)
    assert [c.key for c in at.get("plotly_chart")] == ["endings"]


def test_failure_modes_show_what_the_tests_say_beside_the_rules_by_default(tmp_path, monkeypatch):
    # the same installed agents: the rules cannot see them, their per-test results can
    path = _installed_agents_store(tmp_path, "run_rule_coders", "run_verifier_coder")
    at = _page(_fresh(path, monkeypatch), "failures")
    assert not at.exception
    headers = [h.value for h in at.subheader]
    assert "What the behavioural rules found (`rules`)" in headers and "What the tests say (`verifier`)" in headers
    assert "No failure code to show: coder `rules`" in " ".join(i.value for i in at.info)
    assert at.get("plotly_chart")  # the verifier's shares
    assert at.selectbox(key="drill_code").value  # the drill-down opens on the verifier's codes


def test_the_failure_drill_down_starts_at_the_largest_code_and_splits_passed_from_failed(demo_store, monkeypatch):
    at = _page(_fresh(demo_store, monkeypatch), "failures")
    shares = next(d.value for d in at.dataframe if "share" in d.value.columns)
    largest = shares.groupby("code")["share"].mean().idxmax()
    assert at.selectbox(key="drill_code").value == largest
    attempts = next(d.value for d in at.dataframe if "confidence" in d.value.columns)
    assert set(attempts["outcome"]) == {"failed"}
    at.radio(key="drill_outcome").set_value("passed").run()
    attempts = next(d.value for d in at.dataframe if "confidence" in d.value.columns)
    assert set(attempts["outcome"]) == {"passed"}


def test_the_trajectory_viewer_lists_searches_and_shows_a_header_with_tests(agents_store, monkeypatch):
    at = _page(_fresh(agents_store, monkeypatch), "trajectory")
    listed = at.dataframe[0].value
    assert len(listed) > 10 and {"system", "outcome", "codes"} <= set(listed.columns)
    at.text_input(key="trajectory_search").input("crlf").run()
    listed = at.dataframe[0].value
    assert len(listed) == 1 and "crlf" in listed["task_id"].iloc[0]
    assert at.selectbox(key="trajectory_pick").value == listed["trajectory_id"].iloc[0]
    # long values are text, never a metric cut to its column ("Factory …", "agent_ti…")
    assert any(m.value.startswith("**System** openhands") for m in at.markdown)
    assert any(m.value.startswith("**Harness error** `") for m in at.markdown)
    assert _metric(at, "Outcome") in ("passed", "failed")
    codes = " ".join(c.value for c in at.code)
    assert "-text.split('\\n')" in codes and "+text.splitlines()" in codes  # the edit as a diff
    assert at.query_params["trajectory"] in (listed["trajectory_id"].iloc[0], [listed["trajectory_id"].iloc[0]])


def test_a_trajectory_past_the_step_limit_says_so_and_pages_through(agents_store, monkeypatch):
    from curriculab.dashboard.viewer import STEPS_PER_PAGE

    at = _fresh(agents_store, monkeypatch)
    at.query_params["trajectory"] = "long-1000"
    at = _page(at, "trajectory")
    assert at.selectbox(key="trajectory_pick").value == "long-1000"
    # it opens where its evidence is (premature_stop at the last step), and pages from there
    assert any("Showing steps 901–1000 of 1,000; evidence steps: #999" in c.value for c in at.caption)
    at.selectbox(key="viewer_range").select(0).run()
    assert any(f"Showing steps 1–{STEPS_PER_PAGE} of 1,000" in c.value for c in at.caption)
    at.selectbox(key="viewer_range").select(9).run()
    assert any("Showing steps 901–1000 of 1,000" in c.value for c in at.caption)
    heads = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert heads[0].startswith("**#901**") and heads[-1].startswith("**#997**")
    assert any(
        m.value.startswith(":orange-background[**evidence** for rules:premature_stop] **#999**") for m in at.markdown
    )
    harness = [e.label for e in at.expander if " · env · " in e.label]
    assert harness and all(not e.proto.expanded for e in at.expander if " · env · " in e.label)


def test_labelling_twenty_trajectories_makes_a_code_reliable_and_changes_the_plan(demo_store, tmp_path, monkeypatch):
    from curriculab.planner import plan as planning
    from curriculab.training.problems import builtin_problems

    path = tmp_path / "unlabelled.duckdb"
    shutil.copy(demo_store, path)
    with Store(path) as store:
        store.query("delete from labels")
        store.query("delete from code_reliability where coder = 'rules'")
        before = planning.build_plan(store, "atlas-7b-coder", builtin_problems(), "builtin").reasons
    at = _page(_fresh(path, monkeypatch), "labelling")
    # label the system the plan is for: the planner reads its own format family's measurement
    at.sidebar.selectbox(key="filter_model").select("atlas-7b-coder").run()
    at.text_input(key="label_annotator").input("tester").run()
    at.selectbox(key="label_code").select("skipped_verification").run()
    assert any("no labels yet" in m.value for m in at.markdown)
    for _ in range(20):
        says = next(c.value for c in at.caption if "the coder says" in c.value)
        key = "p" if "the coder says **present**" in says else "a"
        at.button(key=f"label_{key}").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
    with Store(path, read_only=True) as store:
        rows = {r["family"]: r for r in queries.records(queries.code_reliability(store, "rules"))}
        labels = queries.labels(store, annotator="tester")
    assert set(rows) == {"", "harbor/terminus-2"} and len(labels) == 20
    for row in rows.values():  # every label fell on atlas-7b-coder's family: pooled and family agree
        assert (row["code"], row["n"], row["reliable"]) == ("skipped_verification", 20, True), str(row)
    assert any("reliable (κ = 1.00 on 20 labels): the planner uses it" in m.value for m in at.markdown)
    assert any(
        "on `harbor/terminus-2` trajectories: reliable (κ = 1.00 on 20 labels): the planner uses it on "
        "harbor/terminus-2 trajectories" in m.value
        for m in at.markdown
    )
    with Store(path) as store:
        after = planning.build_plan(store, "atlas-7b-coder", builtin_problems(), "builtin").reasons
    ignored = "skipped_verification (rules): no labels yet: the planner cannot use this code"
    assert any(r.startswith(ignored) for r in before) and not any(r.startswith(ignored) for r in after)
    assert any("skipped_verification" in r and "reliable against labels" in r for r in after), after


def test_an_unsure_label_is_kept_and_left_out_of_agreement(demo_store, tmp_path):
    from curriculab.analysis.labels import label_and_measure

    path = tmp_path / "unsure.duckdb"
    shutil.copy(demo_store, path)
    with Store(path, read_only=True) as store:
        queue = queries.labelling_queue(store, "tool_misuse", "rules", NEWEST, "sam")
    assert set(queue["stratum"]) == set(queries.STRATA)
    first, second = queue["trajectory_id"].iloc[:2]
    label_and_measure(path, annotator="sam", trajectory_id=first, code="tool_misuse", present=None, coder="rules")
    result = label_and_measure(
        path,
        annotator="sam",
        trajectory_id=second,
        code="tool_misuse",
        present=queue["coder_says"].iloc[1] == "present",
        coder="rules",
    )
    assert [r.n for r in result if r.code == "tool_misuse" and r.family == ""] == [1]
    with Store(path, read_only=True) as store:
        kept = queries.labels(store, annotator="sam", include_unsure=True)
        assert len(kept) == 2 and kept["present"].isna().sum() == 1
        assert first not in set(queries.labelling_queue(store, "tool_misuse", "rules", NEWEST, "sam")["trajectory_id"])
    with pytest.raises(ValueError, match="an annotator name is needed"):
        label_and_measure(path, annotator=" ", trajectory_id=first, code="tool_misuse", present=True, coder="rules")


def test_systems_that_differ_only_in_agent_version_get_a_bar_each(agents_store, monkeypatch):
    at = _page(_fresh(agents_store, monkeypatch), "overview")
    board = next(d.value for d in at.dataframe if "leaderboard_accuracy" in d.value.columns)
    assert board.duplicated(["agent", "model"]).any()  # the store holds two versions of one agent with one model
    assert board["system"].is_unique and (board["pass_rate"].dropna() <= 1).all()


def test_an_empty_labelling_queue_says_why_when_the_coder_could_judge_nothing(tmp_path, monkeypatch):
    path = _installed_agents_store(tmp_path, "run_rule_coders")
    at = _page(_fresh(path, monkeypatch), "labelling")
    at.text_input(key="label_annotator").input("ann").run()
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    assert "Nothing to label: `rules` could judge none of these attempts" in notes
    assert not any("Nothing left to label" in s.value for s in at.success)


def test_the_drill_downs_coder_choice_changes_the_codes_and_attempts_offered(agents_store, tmp_path, monkeypatch):
    from curriculab.analysis.coding import run_verifier_coder

    path = tmp_path / "both.duckdb"
    shutil.copy(agents_store, path)
    with Store(path) as store:
        run_verifier_coder(store)
        verifier_codes = {
            c for (c,) in store.query("select distinct code from failure_codes where coder = 'verifier'").rows
        }
    at = _page(_fresh(path, monkeypatch), "failures")
    assert not at.exception and at.radio(key="drill_coder").value == "rules"
    rules_offered = set(at.selectbox(key="drill_code").options)
    assert rules_offered and not rules_offered & verifier_codes
    at.radio(key="drill_coder").set_value("verifier").run()
    offered = set(at.selectbox(key="drill_code").options)
    assert offered and offered <= verifier_codes
    attempts = next(d.value for d in at.dataframe if "confidence" in d.value.columns)
    with Store(path, read_only=True) as store:
        coded = {
            t
            for (t,) in store.query(
                "select trajectory_id from failure_codes where coder = 'verifier' and code = ?",
                [at.selectbox(key="drill_code").value],
            ).rows
        }
    assert set(attempts["trajectory_id"]) <= coded


def test_one_harness_number_on_the_overview_and_failure_modes_with_test_timeouts_among_the_faults(
    tmp_path, monkeypatch
):
    path = _installed_agents_store(tmp_path, "run_rule_coders", "run_verifier_coder", passed_after_timeout=True)
    with Store(path, read_only=True) as store:
        no_verdict, timeouts, agent_faults, despite = store.query(
            "select count(*) filter (outcome = 'error'), count(*) filter (outcome = 'error' and harness_error = 'test_timeout'), "
            "count(*) filter (outcome = 'failed' and harness_error is not null), "
            "count(*) filter (outcome = 'passed' and harness_error = 'agent_timeout') from trajectories"
        ).rows[0]
        coded = store.query("select count(*) from failure_codes where code = 'harness_failure'").scalar()
    assert (
        no_verdict and timeouts and agent_faults and despite == 1 and coded == no_verdict
    )  # v4: harness_failure = no verdict
    overview = _page(_fresh(path, monkeypatch), "overview")
    failures = _page(_fresh(path, monkeypatch), "failures")
    assert not overview.exception and not failures.exception
    assert _metric(overview, "Harness errors") == str(no_verdict)
    assert _metric(failures, "Harness errors: infrastructure faults") == str(no_verdict)
    assert _metric(failures, "Failed with an agent fault") == str(agent_faults)
    # an agent timeout on a trial whose tests passed is a pass: never shown among the failures
    assert _metric(failures, "Passed despite a recorded agent fault") == str(despite)
    faults = next(d.value for d in failures.dataframe if "harness_error" in d.value.columns)
    assert dict(zip(faults["harness_error"], faults["attempts"]))["test_timeout"] == timeouts


def test_the_viewer_says_whether_coders_found_nothing_abstained_or_never_ran(tmp_path):
    from curriculab.analysis import coding
    from curriculab.analysis.ingest import ingest
    from curriculab.dashboard.viewer import no_codes_caption

    with Store(tmp_path / "s.duckdb") as store:
        ingest(store, [FIXTURES / "tb-leaderboard"], workers=1)
        first = store.query("select min(trajectory_id) from trajectories").scalar()

        def caption(trajectory_id: str) -> str:
            return no_codes_caption(queries.records(queries.trajectory_coders(store, trajectory_id)))

        assert caption(first) == "No coder has coded this attempt yet (`curriculab code`)."
        coding.run_rule_coders(store)
        counts = queries.records(queries.trajectory_coders(store, first))
        assert [c["coder"] for c in counts] == ["rules"] and counts[0]["not_applicable"] > 0
        rules = counts[0]
        assert caption(first).endswith(
            f"(rules: {rules['absent']} absent, {rules['not_applicable']} not applicable "
            "(installed agent: actions not logged))."
        )
        store.query("update coding_status set status = 'not_applicable' where trajectory_id = ?", [first])
        assert caption(first).startswith("Every coder abstained on this attempt (rules: ")


def test_the_trajectory_pages_count_is_every_match_and_follows_its_outcome_filter(tmp_path, monkeypatch):
    path = _installed_agents_store(tmp_path)
    with Store(path, read_only=True) as store:
        total, failed = store.query("select count(*), count(*) filter (outcome = 'failed') from trajectories").rows[0]
    at = _page(_fresh(path, monkeypatch), "trajectory")

    def said() -> str:
        return next(e.label for e in at.expander if "trajectories match" in e.label)

    assert said() == f"{total:,} trajectories match"  # the default view: every trajectory, counted
    at.selectbox(key="trajectory_outcome").select("failed").run()
    assert said() == f"{failed:,} trajectories match" and 0 < failed < total


def test_one_reliability_statement_on_the_coders_and_labelling_pages_and_in_the_plan(tmp_path, monkeypatch):
    from curriculab.analysis.labels import agreement, planner_use
    from curriculab.planner.evidence import failure_targets

    path = _installed_agents_store(tmp_path, "run_rule_coders", "run_verifier_coder")
    coders_page = _page(_fresh(path, monkeypatch), "coders")
    # only the verifier's exact rows: no κ to draw, so no empty chart with a threshold at 1.00
    assert not coders_page.exception and not coders_page.get("plotly_chart")
    assert any("exact by construction" in c.value for c in coders_page.caption)
    with Store(path) as store:
        coded = [
            row
            for status in ("present", "absent")
            for row in store.query(
                "select trajectory_id, status = 'present' from coding_status "
                "where coder = 'verifier' and code = 'all_tests_fail' and status = ? order by trajectory_id limit 3",
                [status],
            ).rows
        ]
        store.save_labels("ann", NEWEST, {(t, "all_tests_fail"): present for t, present in coded})
        measured = next(r for r in agreement(store, "verifier", "ann") if r.code == "all_tests_fail")
        rows = queries.records(queries.code_reliability(store, "verifier"))
        decisions, _ = failure_targets(store, next(iter(queries.known_models(store))), "verifier")
    # six agreeing labels: κ 1.00 but too few to be reliable by labels; the code is exact all the same
    assert (measured.kappa, measured.reliable) == (1.0, False)
    use = planner_use([r for r in rows if r["code"] == "all_tests_fail"])
    assert use.used and use.status == "used: exact (verifier)"
    coders_page = _page(_fresh(path, monkeypatch), "coders")
    table = next(d.value for d in coders_page.dataframe if "annotator" in d.value.columns)
    mine = table[(table["annotator"] == "ann") & (table["code"] == "all_tests_fail")]
    assert set(mine["family"]) > {"all formats"}  # pooled, then each format family the labels fell on
    assert set(mine["for_planning"]) == {"used: exact (verifier)"}
    assert not any("UNRELIABLE" in str(v) for v in table.to_numpy().ravel())
    assert coders_page.get("plotly_chart")  # now one κ is measured against labels
    # test_timeout, exact but without a curriculum effect: the page and the plan give that reason
    timeouts = planner_use([r for r in rows if r["code"] == "test_timeout"])
    assert not timeouts.used and timeouts.why.startswith("no curriculum effect")
    assert set(table[table["code"] == "test_timeout"]["for_planning"]) == {"not used: no curriculum effect"}
    assert [d.reason for d in decisions if d.code == "test_timeout"] == [timeouts.why]
    # the Labelling page with no coder chosen speaks of every coder of the code, not only `rules`
    labelling = _page(_fresh(path, monkeypatch), "labelling")
    labelling.text_input(key="label_annotator").input("ann").run()
    labelling.selectbox(key="label_code").select("all_tests_fail").run()
    assert not labelling.exception
    yours = next(r for r in rows if r["annotator"] == "ann" and r["code"] == "all_tests_fail")
    verifier_says = planner_use([r for r in rows if r["code"] == "all_tests_fail"], yours).why
    assert verifier_says.endswith(f"your labels agree with it at κ = 1.00 on {measured.n}")
    assert f"**all_tests_fail** from `verifier`, over every format: {verifier_says}." in [
        m.value for m in labelling.markdown
    ]
    assert any(m.value.startswith("**all_tests_fail** from `rules`, over every format: ") for m in labelling.markdown)
    # per system: cursor-cli's one all_tests_fail ran out of time, so the time rule keeps it out of difficulty
    assert _metric(labelling, "For planning") == "used (verifier: 1 of 2 systems)"
    answers = next(d.value for d in labelling.dataframe if "format_families" in d.value.columns)
    verifier = answers[answers["coder"] == "verifier"].set_index("system")["for_planning"]
    assert verifier.to_dict() == {
        "cursor-cli · claude-sonnet-4-20250514": "not used: time (1 of 1 timed out)",
        "goose · claude-opus-4-1-20250805": "used: exact (verifier)",
    }


def test_failure_modes_show_how_each_systems_failures_ended_beside_the_tests_codes(tmp_path, monkeypatch):
    from curriculab.analysis import coding
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_that_mostly_times_out

    path = tmp_path / "tb.duckdb"
    with Store(path) as store:
        ingest(store, [leaderboard_that_mostly_times_out(tmp_path)], workers=1)
        coding.run_verifier_coder(store)
    at = _page(_fresh(path, monkeypatch), "failures")
    assert not at.exception
    assert "How failures ended: out of time, crashed, or at the tests' verdict" in [h.value for h in at.subheader]
    assert "endings" in [c.key for c in at.get("plotly_chart")] or any(
        "ran out of time" in c.proto.spec for c in at.get("plotly_chart")
    )
    ended = next(d.value for d in at.dataframe if "timeout_share" in d.value.columns).set_index("system")
    cursor = ended.loc["cursor-cli · claude-sonnet-4-20250514"]
    assert (cursor["failures"], cursor["timed_out"], cursor["to_verdict"]) == (4, 3, 1)
    warned = " ".join(w.value for w in at.warning)
    assert "1 system(s) ran out of time in half or more of their failures (cursor-cli · claude-sonnet-4" in warned
    tasks = next(d.value for d in at.dataframe if "task_id" in d.value.columns and "timed_out" in d.value.columns)
    assert set(tasks["task_id"]) == {"reshard-c4-data", "build-linux-kernel-qemu", "train-fasttext"}
    # the agent filter narrows it to goose, whose one agent fault is a crash: no system ran out of time
    at.sidebar.selectbox(key="filter_agent").select("goose").run()
    ended = next(d.value for d in at.dataframe if "timeout_share" in d.value.columns)
    assert list(ended["system"]) == ["goose · claude-opus-4-1-20250805"] and list(ended["crashed"]) == [1]
    assert not any("ran out of time in half or more" in w.value for w in at.warning)


def test_the_difficulty_page_flags_never_and_always_solved_tasks_and_shows_the_solve_matrix(tmp_path, monkeypatch):
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    path = tmp_path / "health.duckdb"
    with Store(path) as store:
        ingest(store, [leaderboard_with_a_broken_and_a_trivial_task(tmp_path)], workers=1)
    at = _page(_fresh(path, monkeypatch), "difficulty")
    assert not at.exception and "Task health" in [h.value for h in at.subheader]
    assert any(
        w.value.startswith("2 task(s) may be broken or trivial: 1 never solved, 1 always solved") for w in at.warning
    )
    flagged = next(d.value for d in at.dataframe if "systems_solved" in d.value.columns)
    assert set(flagged["task_id"]) == {"nginx-request-logging", "hello-world"}
    matrix = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if "Solve matrix" in c.proto.spec))
    heat = matrix["data"][0]
    assert heat["x"][0] == "⚑ hello-world" and heat["x"][-1] == "⚑ nginx-request-logging"
    assert len(heat["y"]) == 3 and (heat["zmin"], heat["zmax"]) == (0, 1)


def test_thirteen_systems_get_thirteen_colours():
    from curriculab.dashboard.common import colours

    assert len(set(colours(13))) == 13 and len(set(colours(26))) == 26
    assert colours(3) == colours(10)[:3]  # a few series keep plotly's familiar first colours


def test_an_agent_fault_on_a_passed_trial_is_the_agents_and_a_pass_in_the_viewer():
    from curriculab.dashboard.viewer import _fault_words

    passed = {"harness_error": "agent_timeout", "outcome": "passed", "exception_type": None}
    text, hint = _fault_words(passed)
    assert text == "**Agent fault** `agent_timeout` (it passed all the same)" and "not a harness error" in hint
    assert _fault_words({**passed, "outcome": "failed"})[0].endswith("(counted as its failure)")
    infra = _fault_words({"harness_error": "test_timeout", "outcome": "error", "exception_type": None})[0]
    assert infra == "**Harness error** `test_timeout`"


def test_the_time_share_of_failures_reads_as_a_percentage(tmp_path, monkeypatch):
    from curriculab.analysis import coding
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_that_mostly_times_out

    path = tmp_path / "tb.duckdb"
    with Store(path) as store:
        ingest(store, [leaderboard_that_mostly_times_out(tmp_path)], workers=1)
        coding.run_verifier_coder(store)
    at = _page(_fresh(path, monkeypatch), "failures")
    ended = next(d for d in at.dataframe if "timeout_share" in d.value.columns)
    shown = _display_values(ended).set_index(ended.value["system"].to_numpy())
    assert shown.loc["cursor-cli · claude-sonnet-4-20250514", "timeout_share"] == "75.0%"  # 3 of 4, not 0.75


def test_the_difficulty_page_counts_tried_and_fitted_tasks_apart_and_draws_no_empty_tier_heatmap(tmp_path, monkeypatch):
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    path = tmp_path / "health.duckdb"
    with Store(path) as store:
        ingest(store, [leaderboard_with_a_broken_and_a_trivial_task(tmp_path)], workers=1)
        fit_store(store)
        fitted = store.query("select count(*) from irt_tasks").scalar()
        tried = store.query("select count(distinct task_id) from trajectories").scalar()
    at = _page(_fresh(path, monkeypatch), "difficulty")
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert fitted < tried  # the never and always solved tasks are flagged, out of the fit
    assert any(c.startswith(f"{fitted} fitted tasks of the {tried} the filtered attempts tried") for c in captions)
    # leaderboard runs ship no task metadata: no authored tiers, so no heatmap of one empty row
    assert "tier_crosstab" not in [c.key for c in at.get("plotly_chart")]
    assert any(c.startswith("No task here has an authored tier") for c in captions)


def test_the_curriculum_page_says_what_the_mix_left_out_in_words(demo_store, monkeypatch):
    at = _page(_fresh(demo_store, monkeypatch), "curriculum")
    said = next(c.value for c in at.caption if c.value.startswith("Task mix; "))
    assert said.startswith("Task mix; left out: ") and "{" not in said and "_" not in said


def test_the_coders_page_gives_the_planners_answer_per_system_with_the_time_rule(tmp_path, monkeypatch):
    from curriculab.analysis import coding
    from curriculab.analysis.ingest import ingest
    from curriculab.planner.evidence import failure_targets
    from tests.conftest import leaderboard_that_mostly_times_out

    path = tmp_path / "tb.duckdb"
    with Store(path) as store:
        ingest(store, [leaderboard_that_mostly_times_out(tmp_path)], workers=1)
        coding.run_verifier_coder(store)
        decisions, _ = failure_targets(store, "claude-sonnet-4-20250514", "verifier", agent="cursor-cli")
    at = _page(_fresh(path, monkeypatch), "coders")
    assert not at.exception
    uses = next(d.value for d in at.dataframe if "why" in d.value.columns)
    cursor = uses[(uses["system"] == "cursor-cli · claude-sonnet-4-20250514") & (uses["code"] == "all_tests_fail")]
    (status,) = cursor["for_planning"]
    assert status.startswith("not used: time (")  # most of its all_tests_fail ran out of time
    # `plan` gives the same sentence for the same system
    (decision,) = [d for d in decisions if d.code == "all_tests_fail"]
    assert not decision.used and decision.reason == cursor["why"].iloc[0]
    assert decision.reason.startswith("not read as difficulty: ")


def test_the_difficulty_page_gives_abilities_and_bands_per_system_and_pools_by_model_only_when_asked(
    tmp_path, monkeypatch
):
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.ingest import ingest
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    # goose and terminus both ran claude-opus-4-1: the stored fit (its unit is the model) pools them
    shared = ("20250818_goose_claude-opus-4-1", "20250820_terminus_claude-opus-4-1", "20250821_codex_o3")
    path = tmp_path / "shared.duckdb"
    with Store(path) as store:
        ingest(store, [leaderboard_with_a_broken_and_a_trivial_task(tmp_path, submissions=shared)], workers=1)
        store.check_tasks(["hello-world"])  # two unflagged tasks: enough for a fit whose unit is the system
        fit_store(store)
    opus = "claude-opus-4-1-20250805"
    systems = {f"goose · {opus}", f"terminus · {opus}", "codex · o3"}
    at = _page(_fresh(path, monkeypatch), "difficulty")
    assert not at.exception and at.radio(key="difficulty_unit").value == "systems (agent · model)"
    abilities = next(d.value for d in at.dataframe if {"system", "ability"} <= set(d.value.columns))
    assert set(abilities["system"]) == systems and (abilities["ability_se"] > 0).all()
    charts = {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert set(charts["difficulty_ability"]["data"][-1]["y"]) == systems  # θ per system on the task axis
    assert "system ability" in charts["difficulty_ability"]["layout"]["title"]["text"]
    band = next(d.value for d in at.dataframe if {"system", "share_in_band"} <= set(d.value.columns))
    assert set(band["system"]) == systems and set(charts["informative_band"]["data"][0]["x"]) == systems
    # the agent filter keeps that agent's system, from the same fit
    at.sidebar.selectbox(key="filter_agent").select("goose").run()
    narrowed = next(d.value for d in at.dataframe if {"system", "ability"} <= set(d.value.columns))
    assert list(narrowed["system"]) == [f"goose · {opus}"]
    assert narrowed["ability"].iloc[0] == abilities.set_index("system").loc[f"goose · {opus}", "ability"]
    at.sidebar.selectbox(key="filter_agent").select("(all)").run()
    # models pooled only when asked, labelled as pooled with the systems each row pools
    at.radio(key="difficulty_unit").set_value("models, pooled").run()
    assert not at.exception
    pooled = next(d.value for d in at.dataframe if "pools" in d.value.columns).set_index("model")
    assert set(pooled.index) == {opus, "o3"}
    assert pooled.loc[opus, "pools"] == f"goose · {opus}, terminus · {opus}"
    assert any(
        c.value.startswith("Pooled by model: ") and f"{opus} pools goose · {opus}" in c.value for c in at.caption
    )
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert all(t.startswith("Pooled by model — ") for t in titles if "ability" in t or "band" in t)


def test_the_labelling_page_answers_per_system_through_each_systems_format_family(demo_store, tmp_path, monkeypatch):
    from curriculab.analysis.labels import agreement

    # labels on terminus-2's trajectories only: they vouch for the terminus-2 systems, not for claude-code's
    path = tmp_path / "one-family.duckdb"
    shutil.copy(demo_store, path)
    with Store(path) as store:
        store.query(
            "delete from labels where trajectory_id in (select t.trajectory_id from trajectories t "
            "join runs r using (run_id) where r.agent = 'claude-code')"
        )
        agreement(store, "rules", "simulator")
        families = {r["family"] for r in queries.records(queries.code_reliability(store, "rules"))}
    assert families == {"", "harbor/terminus-2"}
    at = _page(_fresh(path, monkeypatch), "labelling")
    at.text_input(key="label_annotator").input("simulator").run()
    at.selectbox(key="label_code").select("skipped_verification").run()
    assert not at.exception
    answers = next(d.value for d in at.dataframe if "format_families" in d.value.columns)
    rules = answers[answers["coder"] == "rules"].set_index("system")
    assert set(rules.index) == {
        "claude-code · borealis-32b",
        "terminus-2 · atlas-7b-coder",
        "terminus-2 · cirrus-large",
    }
    assert rules.loc["claude-code · borealis-32b", "format_families"] == "harbor/claude-code"
    assert rules.loc["claude-code · borealis-32b", "for_planning"] == "not used: no labels on harbor/claude-code"
    assert "label some of its trajectories" in rules.loc["claude-code · borealis-32b", "why"]
    assert set(rules.loc[["terminus-2 · atlas-7b-coder", "terminus-2 · cirrus-large"], "for_planning"]) == {
        "used: reliable (κ 1.00 on 210)"
    }
    # the pooled measurement alone would say "used" for every system; the answer counts the systems
    assert _metric(at, "For planning") == "used (rules: 2 of 3 systems)"
    # the filters choose the systems answered for
    at.sidebar.selectbox(key="filter_model").select("borealis-32b").run()
    answers = next(d.value for d in at.dataframe if "format_families" in d.value.columns)
    assert set(answers["system"]) == {"claude-code · borealis-32b"}
    assert _metric(at, "For planning") == "not used"
