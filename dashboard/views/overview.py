"""Overview: runs, systems, attempts and pass rates with intervals; the systems leaderboard (agent ×
model, in the leaderboard's order); harness errors kept apart."""

import streamlit as st

from curriculab.dashboard.common import (
    KIND_LABELS,
    SCOPE_FILTERS,
    bars,
    filtered_attempts,
    filters,
    ignored_filters,
    percent,
    percent_of,
    read,
    rows_height,
    scope,
    store_ready,
    table,
)

st.title("Overview")
if store_ready():
    ignored_filters(SCOPE_FILTERS, "pass rates come from verdicts, not codes.")
    attempts = filtered_attempts()
    judged = attempts[attempts["outcome"] != "error"]
    st.caption(
        f"Showing {KIND_LABELS[scope().kind]}"
        + ("" if scope().kind != "evaluation" else " (training rollouts: set Attempts in the sidebar)")
        + "."
    )
    leaderboard = read("systems", scope=scope())
    columns = st.columns(7)
    columns[0].metric(
        "Replicate runs",
        int(leaderboard["replicates"].sum()),
        help=f"Over every system: its runs where run ids separate them, else its attempts per task (attempt i of "
        f"every task as one replicate). Run ids in the store: {attempts['run_id'].nunique()}.",
    )
    columns[1].metric("Systems", attempts["system"].nunique(), help="A system is an agent with a model.")
    columns[2].metric("Models", attempts["model"].nunique())
    columns[3].metric("Attempts", len(attempts))
    columns[4].metric(
        "Pass rate (judged)",
        percent(int((judged["outcome"] == "passed").sum()), len(judged)),
        help="Passes over attempts with a verdict: attempts the infrastructure failed are left out.",
    )
    columns[5].metric(
        "Solved (every trial)",
        percent(int((attempts["outcome"] == "passed").sum()), len(attempts)),
        help="The leaderboard's accounting: passes over every trial, an infrastructure fault counted as a "
        "failure (Terminal-Bench's accuracy is this per run, averaged over runs: see each system below).",
    )
    columns[6].metric(
        "Harness errors",
        int((attempts["outcome"] == "error").sum()),
        help="Infrastructure faults (taxonomy v4's harness_failure): attempts with no verdict because "
        "the environment, install, tests or verifier failed; outside pass rates. An agent timeout "
        "or crash is the agent's failure and counts.",
    )
    if attempts.empty:
        st.info("No attempts match the filters. Clear some in the sidebar.")
    else:
        system = leaderboard["agent"] + " · " + leaderboard["model"]
        versioned = leaderboard["agent"] + " " + leaderboard["agent_version"] + " · " + leaderboard["model"]
        leaderboard = leaderboard.assign(
            system=system.where(~system.duplicated(keep=False), versioned),
            runs_spread=[
                f"{percent_of(lo)}–{percent_of(hi)} over {n} {'runs' if how == 'replicate runs' else 'attempt indices'}"
                if n > 1
                else "one attempt per task: no spread"
                for lo, hi, n, how in zip(
                    leaderboard["spread_low"],
                    leaderboard["spread_high"],
                    leaderboard["replicates"],
                    leaderboard["spread_method"],
                )
            ],
        )
        bars(
            leaderboard,
            "system",
            "leaderboard_accuracy",
            low="spread_low",
            high="spread_high",
            title="Systems in the leaderboard's order: its accuracy (every trial counts, an error is a failure); "
            "whiskers: the lowest and highest replicate (runs, or attempt i of every task where one run holds all)",
            x_title="system (agent · model)",
            y_title="leaderboard accuracy",
            key="overview_pass_rates",
        )
        # the leaderboard's figure first, where a 1,500 px screen shows it
        shown = ["system", "leaderboard_accuracy", "runs_spread", "pass_rate", "ci_low", "ci_high", "attempts"]
        shown += ["passes", "errors", "trials", "runs", "agent"]
        shown += ["agent_version"] if leaderboard["agent_version"].astype(bool).any() else []  # none on leaderboards
        table(
            leaderboard[shown + ["model"]],
            "systems",
            "Systems leaderboard, in the leaderboard's order: leaderboard_accuracy counts every trial (an error as "
            "a failure), averaged over runs, as Terminal-Bench publishes, with the spread between its replicates "
            "(runs where run ids separate them, else attempt i of every task); pass_rate is the judged pass rate "
            "(with its 95% interval), over attempts with a verdict",
            height=rows_height(len(leaderboard)),
        )
        pooled = read("model_pooling", model=filters().get("model"))
        pooled = pooled[pooled["agents"] > 1]
        if not pooled.empty:
            st.warning(
                "Some models are run by several agents: compare systems (above), not models. "
                + "; ".join(f"{r.model}: {r.agent_names}" for r in pooled.itertuples())
            )
        by_tier = read("authored_tier_pass_rates", scope=scope())
        if len(by_tier) > 1:
            bars(
                by_tier,
                "tier",
                "pass_rate",
                low="ci_low",
                high="ci_high",
                title="Pass rate per authored tier",
                x_title="authored tier",
                y_title="pass rate",
                key="overview_tiers",
            )
        else:
            st.caption(
                "No authored tiers to compare: every task in scope has the same tier "
                f"({by_tier['tier'].iloc[0] if len(by_tier) else 'none'})."
            )
        errors = read("harness_errors", scope=scope())
        st.subheader("Harness errors")
        if errors.empty:
            st.caption("None: every attempt reached a verdict without a harness fault.")
        else:
            table(
                errors,
                "harness_errors",
                "Every fault a record names: infrastructure faults have no verdict and are "
                "left out of pass rates; the agent's own faults (timeouts, crashes) are its failures and count; "
                "an infrastructure fault after which the tests still gave a verdict keeps it (flagged)",
            )
