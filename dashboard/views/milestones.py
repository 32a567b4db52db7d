"""Milestones: where milestone-graded attempts stop. Each stage counts the attempts on tasks that
have that milestone; its share is of the attempts that reached it."""

import plotly.graph_objects as go
import streamlit as st

from curriculab.analysis.queries import milestone_stages
from curriculab.dashboard.common import SCOPE_FILTERS, ignored_filters, read, scope, store_ready, table

st.title("Milestones")
if store_ready():
    ignored_filters(SCOPE_FILTERS, "milestones come from verdicts, not codes.")
    funnel = read("milestone_funnel", scope=scope())
    if funnel.empty:
        st.info("No milestone-graded attempts match the filters (tasks with `n_milestones`).")
    else:
        stages = milestone_stages(funnel)
        funnel = funnel.assign(
            first_failed_milestone=funnel["first_failed_milestone"].map(
                lambda k: "passed all" if k != k or k is None else f"milestone {int(k)}"
            )
        )
        for model, part in stages.groupby("model"):
            first = int(part["reached"].iloc[0])
            figure = go.Figure(
                go.Funnel(
                    y=[f"milestone {k}" for k in part["milestone"]],
                    x=part["passed"],
                    text=[
                        f"{p} of {r} ({p / r:.0%})" if r else "none reached"
                        for p, r in zip(part["passed"], part["reached"])
                    ],
                    textinfo="text",
                )
            )
            figure.update_layout(
                title=f"{model}: attempts passing each milestone, of those that reached it ({first} started)",
                height=320,
                xaxis_title="attempts",
                yaxis_title="milestone",
            )
            st.plotly_chart(figure, width="stretch", key=f"funnel_{model}")
        table(
            stages, "milestone_stages", "Per milestone: attempts that reached it (on tasks that have it) and passed it"
        )
        table(
            funnel.rename(columns={"first_failed_milestone": "stopped_at"}),
            "milestone_funnel",
            "Where each group of attempts stopped",
        )
