"""Training: per-tier reward and pass-rate curves and α over steps; where each step's time went
(generation, reward, train, store); runs compared round over round; each run's rollout failure
codes (verifier) with their intervals."""

import plotly.graph_objects as go
import streamlit as st

from curriculab.dashboard.common import read, store_ready, table

st.title("Training")
if store_ready():
    curves = read("training_curves")
    if curves.empty:
        st.info("No training run has logged yet. Train on a plan: `curriculab train --config plan.yaml`; "
                "its metrics (reward, pass_rate/<tier>, alpha/<tier>) land here.")
    else:
        runs = sorted(curves["run_id"].unique())
        chosen = st.multiselect("Runs (rounds) to compare", runs, default=runs[-2:], key="training_runs")
        shown = curves[curves["run_id"].isin(chosen)]
        for prefix, title, y_title in (("pass_rate/", "Pass rate per tier over steps", "pass rate"),
                                       ("alpha/", "α per tier over steps", "α"),
                                       ("reward", "Reward over steps", "mean reward")):
            part = shown[shown["name"].str.startswith(prefix)]
            if part.empty:
                continue
            figure = go.Figure()
            for (run, name), line in part.groupby(["run_id", "name"]):
                figure.add_scatter(x=line["step"], y=line["value"], mode="lines+markers", name=f"{run} · {name}")
            figure.update_layout(title=title, xaxis_title="training step", yaxis_title=y_title, height=380)
            st.plotly_chart(figure, width="stretch", key=f"curve_{prefix}")
        timing = shown[shown["name"].str.startswith("time/")]
        if not timing.empty:
            run = chosen[-1] if chosen else runs[-1]
            figure = go.Figure()
            for name, part in timing[timing["run_id"] == run].groupby("name", sort=False):
                figure.add_bar(x=part["step"], y=part["value"], name=name.removeprefix("time/").removesuffix("_s"))
            figure.update_layout(title=f"Where each step's time went — {run}", barmode="stack", xaxis_title="training step",
                                 yaxis_title="seconds", height=380, xaxis={"dtick": 1})
            st.plotly_chart(figure, width="stretch", key="step_time_breakdown")
        last = shown.sort_values("step").groupby(["run_id", "name"]).tail(1)
        table(last.pivot_table(index="name", columns="run_id", values="value").reset_index(), "training_last_values",
              "Last logged value of each metric, per run")

        runs_table = read("training_runs")
        if not runs_table.empty:
            table(runs_table, "training_runs_table", "Runs: rollouts, pass rate, share of groups with no gradient (zero_std_share)")
        codes = read("rollout_codes")
        if codes.empty:
            st.info("No rollout has a failure code yet: rollouts are coded by the verifier as they land; "
                    "`curriculab code --coder verifier` codes older ones.")
        else:
            codes = codes[codes["run_id"].isin(chosen)] if chosen else codes
            figure = go.Figure()
            for run, part in codes.groupby("run_id", sort=False):
                figure.add_bar(x=part["code"], y=part["share"], name=run,
                               error_y={"type": "data", "symmetric": False, "array": part["ci_high"] - part["share"],
                                        "arrayminus": part["share"] - part["ci_low"]})
            figure.update_layout(title="Rollout failure codes per run (share of failed rollouts, 95% CI)", barmode="group",
                                 xaxis_title="verifier code", yaxis_title="share of failed rollouts", yaxis_range=[0, 1],
                                 height=420)
            st.plotly_chart(figure, width="stretch", key="rollout_codes")
            table(codes, "rollout_codes_table", "Rollout failure codes per run (the next round's plan acts on these)")
