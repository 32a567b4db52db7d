"""Training: the diagnostics that say whether a run learns (zero-variance share, KL), per-tier
pass-rate and α curves in the curriculum page's tier colours, reward mean with its spread, where
each step's time went (an agentic run's environment included), runs compared round over round,
each run's rollout failure codes (the verifier's, and the environment's process codes on agentic
episodes), and an agentic run's episodes, each a link to the trajectory viewer."""

from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from curriculab.analysis.queries import Scope
from curriculab.dashboard.common import TIER_COLOURS, filters, ignored_filters, read, store_ready, table
from curriculab.dashboard.viewer import show_trajectory

# the agent whose runs are agentic GRPO (episodes in terminal tasks); a comment, not a docstring:
# Streamlit's magic would print a bare string on the page
AGENTIC = "curriculab-terminal"
EPISODES_SHOWN = 500

# the mean share of prompt groups whose completions all scored the same above which a run is
# flagged: GRPO's advantage is zero for such a group, so it teaches nothing
ZERO_SIGNAL_WARNING = 0.9
DASHES = ["solid", "dash", "dot", "dashdot"]

st.title("Training")


def _figure(title: str, y_title: str, *, percent: bool = False, y_range: list[float] | None = None) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(
        title=title, xaxis_title="training step", yaxis_title=y_title, height=360, legend=dict(orientation="h", y=-0.25)
    )
    figure.update_xaxes(tickformat="d", tick0=0, rangemode="tozero")
    if percent:
        figure.update_yaxes(tickformat=".0%", range=[0, 1.02])
    elif y_range:
        figure.update_yaxes(range=y_range)
    return figure


def _integer_steps(figure: go.Figure, steps: pd.Series) -> None:
    """Integer ticks only (a step is a whole number); at most ~12 of them."""
    span = max(int(steps.max()) if len(steps) else 1, 1)
    figure.update_xaxes(dtick=max(1, -(-span // 12)))


if store_ready():
    curves = read("training_curves")
    if curves.empty:
        st.info(
            "No training run has logged yet. Train on a plan: `curriculab train --config plan.yaml`; "
            "its metrics (reward, pass_rate/<tier>, alpha/<tier>) land here."
        )
    else:
        runs = sorted(curves["run_id"].unique())
        picked = filters().get("run")
        ignored_filters(
            ("run",) if picked in runs else (),
            "training curves are per training run: pick runs below "
            "(the Run filter preselects one when it names a training run).",
        )
        chosen = st.multiselect(
            "Runs (rounds) to compare", runs, default=[picked] if picked in runs else runs[-2:], key="training_runs"
        )
        shown = curves[curves["run_id"].isin(chosen)]
        dash = {run: DASHES[i % len(DASHES)] for i, run in enumerate(chosen)}
        summary = read("training_runs")
        summary = summary[summary["run_id"].isin(chosen)]

        for row in summary.itertuples():
            if (
                row.zero_std_share is not None
                and row.zero_std_share == row.zero_std_share
                and row.zero_std_share >= ZERO_SIGNAL_WARNING
            ):
                st.warning(
                    f"`{row.run_id}`: no gradient signal. In {row.zero_std_share:.0%} of prompt groups every "
                    "completion scored the same, so GRPO's advantage was zero and the step taught nothing. Give it "
                    "problems it solves sometimes (a lower tier, more generations per prompt), or a graded reward.",
                    icon=":material/block:",
                )
        columns = st.columns(4)
        last = shown.sort_values("step").groupby("name").tail(1).set_index("name")["value"]
        zero = shown[shown["name"] == "frac_reward_zero_std"]["value"]
        columns[0].metric(
            "Zero-variance share",
            f"{zero.mean():.0%}" if len(zero) else "–",
            help="Mean share of prompt groups with no reward spread: they give GRPO no gradient.",
        )
        columns[1].metric("Last reward", f"{last['reward']:.3f}" if "reward" in last else "–")
        columns[2].metric(
            "Last KL",
            f"{last['kl']:.4f}" if "kl" in last else "not logged",
            help="KL to the reference model; TRL logs it only with beta > 0.",
        )
        columns[3].metric("Steps", int(shown["step"].max()) if len(shown) else 0)

        def tier_curves(prefix: str, title: str, y_title: str, percent: bool) -> None:
            part = shown[shown["name"].str.startswith(prefix)]
            if part.empty:
                return
            figure = _figure(title, y_title, percent=percent)
            for (run, name), line in part.groupby(["run_id", "name"]):
                tier = name.removeprefix(prefix)
                figure.add_scatter(
                    x=line["step"],
                    y=line["value"],
                    mode="lines+markers",
                    name=f"{tier} · {run}",
                    line=dict(color=TIER_COLOURS.get(tier), dash=dash[run]),
                )
            _integer_steps(figure, part["step"])
            st.plotly_chart(figure, width="stretch", key=f"curve_{prefix}")

        tier_curves(
            "pass_rate/", "Pass rate per tier over steps (share of rollouts passing every test)", "pass rate", True
        )
        tier_curves("alpha/", "α per tier over steps (the schedule's tier weights)", "α", False)
        reward = (
            shown[shown["name"].isin(["reward", "reward_std"])]
            .pivot_table(index=["run_id", "step"], columns="name", values="value")
            .reset_index()
        )
        if "reward" in reward:
            figure = _figure("Reward over steps: batch mean, band ± one standard deviation", "reward")
            for run, line in reward.groupby("run_id"):
                if "reward_std" in line:
                    upper, lower = line["reward"] + line["reward_std"], line["reward"] - line["reward_std"]
                    figure.add_scatter(
                        x=list(line["step"]) + list(line["step"])[::-1],
                        y=list(upper) + list(lower)[::-1],
                        fill="toself",
                        line=dict(width=0),
                        opacity=0.2,
                        name=f"± std · {run}",
                        hoverinfo="skip",
                    )
                figure.add_scatter(
                    x=line["step"],
                    y=line["reward"],
                    mode="lines+markers",
                    name=f"mean · {run}",
                    line=dict(dash=dash[run]),
                )
            _integer_steps(figure, reward["step"])
            st.plotly_chart(figure, width="stretch", key="curve_reward")
        diagnostics = shown[shown["name"].isin(["kl", "frac_reward_zero_std"])]
        if not diagnostics.empty:
            figure = _figure("Zero-variance share and KL over steps", "share of groups / KL")
            for (run, name), line in diagnostics.groupby(["run_id", "name"]):
                label = "zero-variance share" if name == "frac_reward_zero_std" else "KL"
                figure.add_scatter(
                    x=line["step"],
                    y=line["value"],
                    mode="lines+markers",
                    name=f"{label} · {run}",
                    line=dict(dash=dash[run]),
                )
            figure.add_hline(y=ZERO_SIGNAL_WARNING, line_dash="dot", annotation_text="no-signal warning")
            _integer_steps(figure, diagnostics["step"])
            st.plotly_chart(figure, width="stretch", key="curve_diagnostics")
        if "kl" not in set(shown["name"]):
            st.caption("KL is not logged: TRL computes it only with beta > 0 (its default is 0, no reference model).")
        timing = shown[shown["name"].str.startswith("time/")]
        if not timing.empty:
            run = chosen[-1] if chosen else runs[-1]
            figure = _figure(f"Where each step's time went — {run}", "seconds")
            for name, part in timing[timing["run_id"] == run].groupby("name", sort=False):
                figure.add_bar(x=part["step"], y=part["value"], name=name.removeprefix("time/").removesuffix("_s"))
            figure.update_layout(barmode="stack")
            _integer_steps(figure, timing["step"])
            st.plotly_chart(figure, width="stretch", key="step_time_breakdown")
        last_values = shown.sort_values("step").groupby(["run_id", "name"]).tail(1)
        table(
            last_values.pivot_table(index="name", columns="run_id", values="value").reset_index(),
            "training_last_values",
            "Last logged value of each metric, per run",
        )
        if not summary.empty:
            table(
                summary,
                "training_runs_table",
                "Runs: rollouts, pass rate, share of groups with no gradient (zero_std_share)",
            )
        codes = read("rollout_codes")
        if codes.empty:
            st.info(
                "No rollout has a failure code yet: rollouts are coded by the verifier as they land; "
                "`curriculab code --coder verifier` codes older ones."
            )
        else:
            codes = codes[codes["run_id"].isin(chosen)] if chosen else codes
            figure = go.Figure()
            for run, part in codes.groupby("run_id", sort=False):
                figure.add_bar(
                    x=part["code"],
                    y=part["share"],
                    name=run,
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": part["ci_high"] - part["share"],
                        "arrayminus": part["share"] - part["ci_low"],
                    },
                )
            figure.update_layout(
                title="Rollout failure codes per run (share of failed rollouts, 95% CI)",
                barmode="group",
                xaxis_title="code (the verifier's; on agentic episodes also the environment's process codes)",
                yaxis_title="share of failed rollouts",
                height=420,
            )
            figure.update_yaxes(tickformat=".0%", range=[0, 1.02])
            st.plotly_chart(figure, width="stretch", key="rollout_codes")
            table(codes, "rollout_codes_table", "Rollout failure codes per run (the next round's plan acts on these)")
        agentic = [r for r in summary.itertuples() if r.agent == AGENTIC]
        if agentic:
            st.subheader("Episodes of an agentic run")
            run = st.selectbox(
                "Agentic run", [r.run_id for r in agentic], index=len(agentic) - 1, key="training_agentic_run"
            )  # the newest by default
            episodes = read("trajectory_list", scope=Scope(run_id=run, kind="training"), limit=EPISODES_SHOWN)
            table(
                episodes,
                "training_episodes",
                f"{len(episodes):,} episodes of {run}, each a Harbor trial (ATIF), with every coder's codes",
                height=260,
            )
            if not episodes.empty:
                chosen = st.selectbox("Episode", list(episodes["trajectory_id"]), key="training_episode")
                st.markdown(
                    f"[:material/open_in_new: Open in the trajectory viewer](trajectory?trajectory={quote(chosen)})"
                )
                show_trajectory(chosen, key="training_episode")
