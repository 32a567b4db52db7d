"""Compare: two systems side by side, task by task (the dashboard's `curriculab compare`): pass
rates with Wilson intervals, the difference over the tasks both attempted with a task-resampled
interval, how failures ended and their codes, time against the tasks' limits, and every task solved
by A only, by B only, by both or by neither, linked to its attempts in the trajectory viewer."""

from urllib.parse import quote

import pandas as pd
import streamlit as st

from curriculab.dashboard.common import SCOPE_FILTERS, ignored_filters, percent_of, read, scope, store_ready, table

PAIRS = ("any two systems", "the same model, two agents", "the same agent, two models")

st.title("Compare")
if store_ready():
    ignored_filters(SCOPE_FILTERS, "failure codes are shown for every coder.")
    systems = read("compare.known_systems", scope=scope())
    if len(systems) < 2:
        st.info("Comparing needs two systems (agent · model) with attempts: ingest another run, or clear filters.")
        st.stop()
    pair = st.radio("Compare", PAIRS, horizontal=True, key="compare_pair")
    left, right = st.columns(2)
    wanted_a = st.query_params.get("a")
    a = left.selectbox("A", systems, index=systems.index(wanted_a) if wanted_a in systems else 0, key="compare_a")
    agent_a, _, model_a = a.partition(" · ")
    others = [
        s
        for s in systems
        if s != a
        and (pair == PAIRS[0] or (pair == PAIRS[1]) == (s.partition(" · ")[2] == model_a))
        and (pair != PAIRS[2] or s.partition(" · ")[0] == agent_a)
    ]
    if not others:
        st.info(f"No other system shares {'the model' if pair == PAIRS[1] else 'the agent'} of {a}.")
        st.stop()
    wanted_b = st.query_params.get("b")
    b = right.selectbox("B", others, index=others.index(wanted_b) if wanted_b in others else 0, key="compare_b")
    st.query_params.update({"a": a, "b": b})
    c = read("compare.compare", a=a, b=b, scope=scope())

    ra, rb = c.rates
    d = c.difference
    columns = st.columns(3)
    for column, side, r in ((columns[0], "A", ra), (columns[1], "B", rb)):
        column.metric(
            f"{side}: pass rate (judged)",
            percent_of(r["pass_rate"]),
            help=f"{r['passes']} passes in {r['attempts']} attempts with a verdict over {r['tasks']} tasks; "
            f"leaderboard accuracy (every trial) {percent_of(r['leaderboard_accuracy'])}.",
        )
        column.caption(f"95% CI {percent_of(r['ci_low'])}–{percent_of(r['ci_high'])} (Wilson)")
    if d["difference"] is None:
        columns[2].metric("A − B", "–", help="No task both systems attempted.")
    else:
        columns[2].metric(
            "A − B (shared tasks)",
            f"{100 * d['difference']:+.1f} points",
            help="Pass rate A − B over the tasks both attempted; the interval resamples tasks.",
        )
        interval = (
            f"95% CI {100 * d['ci_low']:+.1f} to {100 * d['ci_high']:+.1f}"
            if d["ci_low"] is not None
            else "no interval (fewer than two shared tasks)"
        )
        columns[2].caption(
            f"{interval} over {d['tasks']} tasks: "
            + ("**distinguishable**" if d["distinguishable"] else "not distinguishable")
        )

    st.subheader("Tasks")
    st.caption(", ".join(f"{k}: {v}" for k, v in c.counts.items() if v) + ". Open a task's attempts from its row.")
    tasks = pd.DataFrame(c.tasks)
    tasks.insert(1, "attempts", [f"trajectory?search={quote(t)}" for t in tasks["task_id"]])
    verdict = st.multiselect(
        "Show", list(c.counts), default=[k for k, v in c.counts.items() if v], key=f"compare_show_{a}_{b}"
    )
    st.dataframe(
        tasks[tasks["verdict"].isin(verdict)],
        hide_index=True,
        width="stretch",
        column_config={"attempts": st.column_config.LinkColumn("attempts", display_text="open")},
    )

    st.subheader("How failures ended")
    endings = pd.DataFrame(c.endings).rename(columns={"timeout_share": "share_timed_out"})
    table(
        endings[["system", "attempts", "failures", "timed_out", "crashed", "to_verdict", "share_timed_out"]],
        "compare-endings",
        caption="Failures that ran out of time, ended in another fault of the agent's own, or at the tests' verdict.",
    )
    if c.codes:
        codes = pd.DataFrame(c.codes)
        codes["side"] = codes["system"].map({a: "A", b: "B"})
        side_by_side = codes.pivot_table(index=["coder", "code"], columns="side", values="share").reset_index()
        side_by_side.columns = [str(x) if x not in ("A", "B") else f"share {x}" for x in side_by_side.columns]
        table(
            side_by_side, "compare-codes", caption="Failure codes: share of each system's failures they were found on."
        )

    st.subheader("Time")
    time = pd.DataFrame(c.time).rename(
        columns={"median_share": "share_of_limit_median", "timed_out_share": "share_timed_out"}
    )
    seconds = [c for c in ("median_s", "p90_s", "max_s") if c in time]
    time[seconds] = time[seconds].astype(float).round(1)
    table(
        time,
        "compare-time",
        caption="The agent's own time where the run recorded it (clock `agent`), else the trial's.",
    )
    if len(time) and (time["with_limit"] < time["attempts"]).any():
        st.info(
            "Some tasks have no time limit here: import the benchmark's task folders at the version the runs name "
            "(`curriculab tasks import DIR`) to read time against limits, categories and authored tiers.",
            icon=":material/schedule:",
        )

    coverage = read("task_metadata_coverage")
    coverage = coverage[
        coverage["system"].isin([a, b]) & (coverage["without_metadata"] + coverage["other_version"] > 0)
    ]
    if len(coverage):
        with st.expander(f"Task metadata: {len(coverage)} run(s) of these systems lack some", expanded=False):
            table(
                coverage,
                "compare-task-metadata",
                caption="Categories, authored tiers and time limits come from the benchmark's task folders, "
                "imported at the version each run names (`curriculab tasks import DIR --dataset NAME==VERSION`).",
            )
