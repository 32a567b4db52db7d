"""Failure modes: each model's failures split across codes, with intervals and coverage; bottleneck
codes; co-occurrence; a code's trajectories and their evidence."""

import plotly.graph_objects as go
import streamlit as st

from curriculab.dashboard.common import bars, coder_and_version, filters, read, show_trajectory, store_ready, table

st.title("Failure modes")
if store_ready():
    coder, version = coder_and_version()
    model = filters().get("model")
    if version is None:
        st.info(f"The coder `{coder}` has not coded this store. Run `curriculab code --coder {coder}`.")
    else:
        distribution = read("failure_distribution", coder=coder, model=model, taxonomy_version=version)
        shown = distribution[distribution["code"] != "harness_failure"]
        if shown.empty:
            st.info("No coded failures match the filters.")
        else:
            st.caption(f"Coder `{coder}`, taxonomy {version}. Share = failures with the code / failures the coder "
                       "could judge; coverage = judged / all failures.")
            bars(shown, "code", "share", low="ci_low", high="ci_high", color="model",
                 title="Share of judged failures per code (95% Wilson interval)", x_title="failure code",
                 y_title="share of judged failures", key="failure_shares")
            table(shown[["model", "code", "n", "applied", "failures", "share", "ci_low", "ci_high", "coverage"]],
                  "failure_distribution")
            st.subheader("Bottleneck codes")
            top = shown.sort_values("share", ascending=False).groupby("model").head(3)
            table(top[["model", "code", "share", "ci_low", "ci_high", "coverage"]], "bottlenecks",
                  "The three largest shares per model")
            pairs = read("code_cooccurrence", coder=coder, model=model, taxonomy_version=version)
            if not pairs.empty:
                codes = sorted(set(pairs["code_a"]) | set(pairs["code_b"]))
                grid = [[0] * len(codes) for _ in codes]
                for row in pairs.itertuples():
                    i, j = codes.index(row.code_a), codes.index(row.code_b)
                    grid[i][j] = grid[j][i] = row.attempts
                figure = go.Figure(go.Heatmap(z=grid, x=codes, y=codes, colorscale="Blues",
                                              colorbar=dict(title="attempts")))
                figure.update_layout(title="Codes found on the same failed attempt", xaxis_title="code",
                                     yaxis_title="code", height=460)
                st.plotly_chart(figure, width="stretch", key="cooccurrence")
            st.subheader("Drill down: a code's attempts and their evidence")
            code = st.selectbox("Failure code", sorted(shown["code"].unique()), key="drill_code")
            found = read("trajectories_with_code", code=code, coder=coder, model=model, taxonomy_version=version)
            if found.empty:
                st.caption("No attempt has this code under the filters.")
            else:
                view = found.assign(evidence_steps=found["evidence_steps"].map(
                    lambda s: ", ".join(str(x) for x in (s if s is not None else []))))
                table(view, f"attempts-{code}", f"{len(found)} attempts coded {code}", height=260)
                chosen = st.selectbox("Trajectory", list(found["trajectory_id"]), key="drill_trajectory")
                show_trajectory(chosen, highlight_code=code)
