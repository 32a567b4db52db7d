"""Coders: agreement with annotators per code; unreliable codes flagged; in-sample figures marked."""

import plotly.graph_objects as go
import streamlit as st

from curriculab.analysis.labels import planner_use_by_code
from curriculab.analysis.queries import records
from curriculab.dashboard.common import filters, ignored_filters, read, store_ready, table

st.title("Coders")
if store_ready():
    ignored_filters(("coder", "taxonomy_version"), "agreement is measured per code over every labelled trajectory.")
    reliability = read(
        "code_reliability", coder=filters().get("coder"), taxonomy_version=filters().get("taxonomy_version")
    )
    if reliability.empty:
        st.info("No agreement measured yet. Import labels (`curriculab labels import`) and run `curriculab agreement`.")
    else:
        view = reliability.assign(
            status=reliability.apply(
                lambda r: (
                    "in sample (not a measure)" if r["in_sample"] else "reliable" if r["reliable"] else "UNRELIABLE"
                ),
                axis=1,
            )
        )
        figure = go.Figure()
        for (coder, annotator), part in view.groupby(["coder", "annotator"]):
            figure.add_bar(
                x=part["code"],
                y=part["kappa"],
                name=f"{coder} vs {annotator}",
                text=part["status"],
                hovertemplate="%{x}: κ=%{y:.2f} (%{text})",
            )
        threshold = float(view["threshold"].max())
        figure.add_hline(y=threshold, line_dash="dash", annotation_text=f"threshold κ={threshold:.2f}")
        figure.update_layout(
            title="Cohen's κ per code (coder against annotator)",
            xaxis_title="code",
            yaxis_title="κ",
            barmode="group",
            height=420,
        )
        st.plotly_chart(figure, width="stretch", key="kappa")
        # the planner's own rule, per coder and code over every annotator (and the verifier's exactness)
        ignored = sorted(
            f"{coder}: {code}"
            for coder, part in reliability.groupby("coder")
            for code, (used, _, _) in planner_use_by_code(records(part)).items()
            if not used
        )
        if ignored:
            st.warning(
                f"{len(ignored)} code(s) are neither exact nor reliable out of sample: the planner ignores them "
                f"({', '.join(ignored[:12])}{', …' if len(ignored) > 12 else ''})."
            )
        table(
            view[
                [
                    "coder",
                    "annotator",
                    "code",
                    "taxonomy_version",
                    "n",
                    "kappa",
                    "f1",
                    "threshold",
                    "status",
                    "computed_at",
                ]
            ],
            "code_reliability",
        )
