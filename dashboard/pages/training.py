"""Training: per-tier reward and pass-rate curves and α over steps; runs compared round over round."""

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
        last = shown.sort_values("step").groupby(["run_id", "name"]).tail(1)
        table(last.pivot_table(index="name", columns="run_id", values="value").reset_index(), "training_last_values",
              "Last logged value of each metric, per run")
