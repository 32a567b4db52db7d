"""What an analyst sees first, over the real Terminal-Bench 1.0 leaderboard submissions (issue #43).

    python scripts/investigations/leaderboard_defaults.py DIR

DIR is `results/terminal-bench-core@0.1.1` of a checkout of `laude-institute/terminal-bench-leaderboard`
(its `results.json`, `run_metadata.json` and `commands.txt` files suffice; never commit them). Prints
the counts the issue asks to be 0 (outcome codes on passed attempts, "absent" behavioural codes on
trials without logged agent actions), the systems in the order the store gives them with the
leaderboard's figure beside the judged pass rate, and how many failures each coder of the default
report could judge.
"""

import sys
import tempfile
import time
from pathlib import Path

from curriculab.analysis import queries
from curriculab.analysis.coding import run_rule_coders, run_verifier_coder
from curriculab.analysis.ingest import ingest
from curriculab.analysis.report import build_report
from curriculab.analysis.store import Store

if len(sys.argv) != 2:
    raise SystemExit(__doc__)
root = Path(sys.argv[1])
db = Path(tempfile.mkdtemp()) / "lb.duckdb"
with Store(db) as store:
    t = time.perf_counter()
    rep = ingest(store, [root])
    print(f"ingest: {rep.inserted} trials in {time.perf_counter() - t:.1f} s; refused {rep.quarantined}")
    run_rule_coders(store)  # the newest taxonomy, as `curriculab code` codes by default
    run_verifier_coder(store)

    def q(sql):
        return store.query(sql)[1]

    print("trials", q("select count(*), count(*) filter (actions_logged) from trajectories"))
    print(
        "outcome codes on passed attempts:",
        q("""select count(*) from failure_codes f join trajectories t using (trajectory_id)
        where t.outcome = 'passed' and f.code in ('harness_failure', 'all_tests_fail', 'near_miss', 'partial_pass', 'test_timeout', 'wrong_answer_basic')""")[
            0
        ][0],
        "| harness_failure on passes:",
        q("""select count(*) from failure_codes f join trajectories t using (trajectory_id)
        where t.outcome = 'passed' and f.code = 'harness_failure'""")[0][0],
        "| any verifier code on passes:",
        q("""select count(*) from failure_codes f join trajectories t using (trajectory_id)
        where t.outcome = 'passed' and f.coder = 'verifier'""")[0][0],
    )
    print(
        "'absent' behavioural codes on trials without logged agent actions:",
        q("""select count(*) from coding_status c join trajectories t using (trajectory_id)
        where not t.actions_logged and c.coder = 'rules' and c.code <> 'harness_failure' and c.status = 'absent'""")[0][
            0
        ],
    )
    print(
        "premature_stop absent on trials with zero agent steps:",
        q("""select count(*) from coding_status c join trajectories t using (trajectory_id)
        where c.code = 'premature_stop' and c.status = 'absent' and t.trajectory_id not in (select trajectory_id from steps where source = 'agent')""")[
            0
        ][0],
    )
    errors = q("select count(*) from trajectories where outcome = 'error'")[0][0]
    coded = q("select count(*) from failure_codes where code = 'harness_failure' and coder = 'rules'")[0][0]
    faults = queries.records(queries.harness_errors(store))
    infra = sum(f["attempts"] for f in faults if f["verdict"] == queries.INFRASTRUCTURE_FAULT)
    timeouts = sum(
        f["attempts"]
        for f in faults
        if f["verdict"] == queries.INFRASTRUCTURE_FAULT and f["harness_error"] == "test_timeout"
    )
    agents = sum(f["attempts"] for f in faults if f["verdict"] == queries.AGENT_FAULT_FAILED)
    print(
        f"one harness number: outcome error {errors}, harness_failure coded {coded}, infrastructure faults shown {infra} "
        f"(test_timeout among them: {timeouts}); agent faults counted as failures: {agents}"
    )
    run_rule_coders(store, taxonomy_version="v3")  # the baseline, in the same run: v3's meaning of harness_failure
    before = q(
        "select count(*) from failure_codes where code = 'harness_failure' and coder = 'rules' and taxonomy_version = 'v3'"
    )[0][0]
    print(
        f"baseline (v3's harness_failure, as before this change): {before} coded, against {errors} attempts with no verdict"
    )
    store.query("delete from failure_codes where taxonomy_version = 'v3' and coder = 'rules'")
    store.query("delete from coding_status where taxonomy_version = 'v3' and coder = 'rules'")
    print(
        "taxonomy versions coded:",
        q("select coder, list(distinct taxonomy_version) from coding_status group by 1 order by 1"),
    )
    systems = queries.records(queries.systems(store))
    print(f"{'agent':<14} {'model':<32} {'leaderboard':>11} {'pass_rate':>9}")
    for s in systems:
        print(f"{s['agent']:<14} {s['model']:<32} {s['leaderboard_accuracy']:>11.4f} {s['pass_rate']:>9.4f}")
    figures = [s["leaderboard_accuracy"] for s in systems]
    print("ordered by the leaderboard's figure:", figures == sorted(figures, reverse=True))
    report = build_report(store, coder="all")
    cov = {v["coder"]: sum(c["coded_failures"] for c in v["coverage"]) for v in [report.as_dict(), *report["beside"]]}
    fails = sum(c["failures"] for c in report["coverage"])
    print(
        "default report coders:",
        [report["coder"]] + [v["coder"] for v in report["beside"]],
        "judged failures:",
        cov,
        "of",
        fails,
    )
