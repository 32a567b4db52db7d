"""Coders: what the planner does with each code for each system (the one rule, `planner_use`, that
`plan` and the report follow: docs/taxonomy.md, "Which codes the planner uses"), and agreement with
annotators per code and format family; in-sample figures marked."""

from typing import Any

import plotly.graph_objects as go
import streamlit as st

from curriculab.analysis.labels import planner_use
from curriculab.analysis.queries import records
from curriculab.dashboard.common import filters, ignored_filters, read, rows_height, store_ready, table


def per_system() -> None:
    """The planner's answer for each system, in the words `plan --system` and the report print."""
    uses = read("labels.planner_uses_by_system")
    st.subheader("What the planner does with each code, per system")
    if uses.empty:
        st.caption("No coder has found a failure code yet (`curriculab code`).")
        return
    left_out = uses[~uses["used"]]
    st.caption(
        f"{int(uses['used'].sum())} of {len(uses)} (system, code) pairs are used; "
        f"{len(left_out)} left out. A code is read for a system only where it is reliable on that system's "
        "format family (or exact by construction), has a curriculum effect, and most of the system's failures "
        "with it did not run out of time (the rule, described once: docs/taxonomy.md, 'Which codes the planner "
        "uses')."
    )
    table(uses, "planner_use_by_system", height=rows_height(min(len(uses), 12)))


st.title("Coders")
if store_ready():
    per_system()
    ignored_filters(("coder", "taxonomy_version"), "agreement is measured per code over every labelled trajectory.")
    reliability = read(
        "code_reliability", coder=filters().get("coder"), taxonomy_version=filters().get("taxonomy_version")
    )
    if reliability.empty:
        st.info("No agreement measured yet. Import labels (`curriculab labels import`) and run `curriculab agreement`.")
    else:
        every = records(reliability)
        by_code: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for r in every:
            by_code.setdefault((r["coder"], r["code"], r["taxonomy_version"]), []).append(r)
        # each row's status is the planner's decision on its coder's code for the row's format family
        # (a measurement on one agent's logs vouches for that family alone), spoken from this row
        view = reliability.assign(
            family=[r.get("family") or "all formats" for r in every],
            for_planning=[
                planner_use(
                    by_code[(r["coder"], r["code"], r["taxonomy_version"])], r, family=r.get("family") or None
                ).status
                for r in every
            ],
        )
        measured = view[(view["method"] == "labels") & view["kappa"].notna()]
        if measured.empty:
            st.caption(
                "No coder has been measured against people's labels yet: the rows below are exact by construction "
                "(verifier, environment) and need none. Label on the Labelling page to measure the others."
            )
        else:
            figure = go.Figure()
            for (coder, annotator, family), part in measured.groupby(["coder", "annotator", "family"]):
                figure.add_bar(
                    x=part["code"],
                    y=part["kappa"],
                    name=f"{coder} vs {annotator} ({family})",
                    text=part["for_planning"],
                    hovertemplate="%{x}: κ=%{y:.2f} (%{text})",
                )
            threshold = float(measured["threshold"].max())
            figure.add_hline(y=threshold, line_dash="dash", annotation_text=f"threshold κ={threshold:.2f}")
            figure.update_layout(
                title="Cohen's κ per code (coder against annotator), pooled and per format family",
                xaxis_title="code",
                yaxis_title="κ",
                yaxis_range=[min(0.0, float(measured["kappa"].min())) - 0.05, 1.05],
                barmode="group",
                height=420,
            )
            st.plotly_chart(figure, width="stretch", key="kappa")
        table(
            view[
                [
                    "coder",
                    "annotator",
                    "code",
                    "taxonomy_version",
                    "method",
                    "family",
                    "n",
                    "kappa",
                    "f1",
                    "threshold",
                    "for_planning",
                    "computed_at",
                ]
            ],
            "code_reliability",
        )
