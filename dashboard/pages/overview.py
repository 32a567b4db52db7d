"""Overview: runs, models, attempts, pass rates with intervals; harness errors kept apart."""

import streamlit as st

from curriculab.dashboard.common import bars, filtered_attempts, filters, pass_rate_frame, read, store_ready, table

st.title("Overview")
if store_ready():
    attempts = filtered_attempts()
    judged = attempts[attempts["outcome"] != "error"]
    columns = st.columns(5)
    columns[0].metric("Runs", attempts["run_id"].nunique())
    columns[1].metric("Models", attempts["model"].nunique())
    columns[2].metric("Attempts", len(attempts))
    columns[3].metric("Pass rate", f"{(judged['outcome'] == 'passed').mean():.1%}" if len(judged) else "–")
    columns[4].metric("Harness errors", int((attempts["outcome"] == "error").sum()),
                      help="Attempts the harness failed (no verdict): never counted as the agent's failures.")
    if attempts.empty:
        st.info("No attempts match the filters. Clear some in the sidebar.")
    else:
        rates = pass_rate_frame(attempts)
        bars(rates, "model", "pass_rate", low="ci_low", high="ci_high", title="Pass rate per model (95% Wilson interval)",
             x_title="model", y_title="pass rate", key="overview_pass_rates")
        table(rates, "pass_rates", "Pass rates over attempts with a verdict; harness errors apart")
        by_tier = pass_rate_frame(attempts.assign(tier=attempts["tier"].fillna("(none)")), by="tier")
        if len(by_tier) > 1:
            bars(by_tier, "tier", "pass_rate", low="ci_low", high="ci_high", title="Pass rate per authored tier",
                 x_title="authored tier", y_title="pass rate", key="overview_tiers")
        errors = read("harness_errors", model=filters().get("model"))
        st.subheader("Harness errors")
        if errors.empty:
            st.caption("None: every attempt reached a verdict without a harness fault.")
        else:
            table(errors, "harness_errors", "Faults outside the agent: left out of pass rates unless a verdict still stands (flagged)")
