"""Milestones: where milestone-graded attempts stop."""

import plotly.graph_objects as go
import streamlit as st

from curriculab.dashboard.common import filters, read, store_ready, table

st.title("Milestones")
if store_ready():
    funnel = read("milestone_funnel", model=filters().get("model"), task_type=filters().get("task_type"))
    if funnel.empty:
        st.info("No milestone-graded attempts in the store (tasks with `n_milestones`).")
    else:
        for model, part in funnel.groupby("model"):
            total = part["attempts"].sum()
            deepest = int(part["milestones_total"].max())
            reached = [int(part[(part["first_failed_milestone"].isna()) | (part["first_failed_milestone"] > k)]["attempts"].sum())
                       for k in range(1, deepest + 1)]
            figure = go.Figure(go.Funnel(y=[f"milestone {k}" for k in range(1, deepest + 1)], x=reached,
                                         textinfo="value+percent initial"))
            figure.update_layout(title=f"{model}: attempts passing each milestone (of {total})", height=320,
                                 xaxis_title="attempts", yaxis_title="milestone")
            st.plotly_chart(figure, width="stretch", key=f"funnel_{model}")
        table(funnel, "milestone_funnel")
