"""Difficulty: measured against authored tiers, task difficulty against model ability, misplaced
tasks, and each model's informative band."""

import plotly.graph_objects as go
import streamlit as st

from curriculab.dashboard.common import filters, read, store_ready, table

TIER_ORDER = ["basic", "easy", "intermediate", "medium", "complex", "hard", "edge", "expert", "(none)"]

st.title("Difficulty")
if store_ready():
    tasks = read("task_difficulty", task_type=filters().get("task_type"))
    if tasks.empty:
        st.info("No difficulty fit yet. Run `curriculab difficulty` (or `curriculab report --refit`).")
    else:
        crosstab = tasks.assign(tier_authored=tasks["tier_authored"].fillna("(none)")) \
            .pivot_table(index="tier_authored", columns="measured_tier", values="task_id", aggfunc="count", fill_value=0)
        order = lambda values: sorted(values, key=lambda v: (TIER_ORDER.index(v) if v in TIER_ORDER else 99, str(v)))  # noqa: E731
        crosstab = crosstab.reindex(index=order(crosstab.index), columns=order(crosstab.columns), fill_value=0)
        figure = go.Figure(go.Heatmap(z=crosstab.values, x=list(crosstab.columns), y=list(crosstab.index),
                                      colorscale="Greens", colorbar=dict(title="tasks"), texttemplate="%{z}"))
        figure.update_layout(title="Authored tier against measured tier (tasks)", xaxis_title="measured tier",
                             yaxis_title="authored tier", height=380)
        st.plotly_chart(figure, width="stretch", key="tier_crosstab")
        abilities = read("model_abilities", model=filters().get("model"))
        figure = go.Figure(go.Histogram(x=tasks["difficulty"], nbinsx=30, name="tasks", marker_color="#9ab"))
        for row in abilities.itertuples():
            figure.add_vline(x=row.ability, line_dash="dash", annotation_text=f"{row.model} θ={row.ability:.2f}")
        figure.update_layout(title="Task difficulty b against model ability θ (IRT, logits)", xaxis_title="logits",
                             yaxis_title="tasks", height=420)
        st.plotly_chart(figure, width="stretch", key="difficulty_ability")
        table(abilities, "model_abilities", "Abilities with standard errors")
        table(read("misplaced_tasks"), "misplaced_tasks", "Tasks whose authored tier disagrees with the measured one")
        informative = read("informative_tasks", model=filters().get("model"))
        if not informative.empty:
            counts = informative.groupby("model").agg(tasks=("task_id", "count"), in_band=("in_band", "sum")).reset_index()
            counts["share_in_band"] = counts["in_band"] / counts["tasks"]
            figure = go.Figure(go.Bar(x=counts["model"], y=counts["share_in_band"]))
            figure.update_layout(title="Share of tasks in each model's informative band (predicted pass rate 0.2–0.8)",
                                 xaxis_title="model", yaxis_title="share of tasks", height=380)
            figure.update_yaxes(tickformat=".0%")
            st.plotly_chart(figure, width="stretch", key="informative_band")
            table(counts, "informative_band")
