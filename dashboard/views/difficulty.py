"""Difficulty: measured against authored tiers, task difficulty against ability and each informative
band per system (agent · model; models pooled only when asked, naming what they pool), misplaced
tasks, and whether the IRT fit predicts better than pass rates."""

from collections.abc import Iterable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from curriculab.analysis.queries import HEALTH_MIN_ATTEMPTS, HEALTH_MIN_SYSTEMS
from curriculab.dashboard.common import SCOPE_FILTERS, ignored_filters, read, scope, store_ready, table

TIER_ORDER = ["basic", "easy", "intermediate", "medium", "complex", "hard", "edge", "expert", "(none)"]


def task_health() -> None:
    """Tasks never or always solved, with the evidence, and the system × task solve matrix: a broken
    or trivial task is seen before its fitted difficulty is read (flagged ones are not in the fit)."""
    health = read("task_health")
    if health.empty:
        return
    flagged = health[health["flagged"]]
    st.subheader("Task health")
    if flagged.empty:
        st.caption(
            f"No task is flagged: none was never or always solved in {HEALTH_MIN_ATTEMPTS}+ attempts by "
            f"{HEALTH_MIN_SYSTEMS}+ systems (or a person checked it)."
        )
    else:
        never = int(flagged["health"].str.startswith("never").sum())
        timed = int((flagged["health"] == "never solved: time-bound").sum())
        bound = f" ({timed} time-bound: most attempts ran out of time)" if timed else ""
        st.warning(
            f"{len(flagged)} task(s) may be broken or trivial: {never} never solved{bound}, {len(flagged) - never} "
            "always solved, by every system that tried them. They are kept out of the difficulty fit, capability "
            "evidence and task mixes until checked (`curriculab tasks checked ID`).",
            icon=":material/report:",
        )
        table(
            flagged[
                ["task_id", "health", "attempts", "systems", "passes", "systems_solved", "harness_faults", "timed_out"]
            ],
            "flagged_tasks",
        )
    matrix = read("solve_matrix")
    wide = matrix.pivot_table(index="system", columns="task_id", values="solved", aggfunc="first")
    flagged_ids = set(flagged["task_id"])
    columns = sorted(wide.columns, key=lambda t: (-wide[t].mean(), t))  # easiest first, left to right
    figure = go.Figure(
        go.Heatmap(
            z=wide[columns].values,
            x=[f"⚑ {t}" if t in flagged_ids else t for t in columns],
            y=list(wide.index),
            zmin=0,
            zmax=1,
            colorscale="RdYlGn",
            colorbar=dict(title="solved", tickformat=".0%"),
            hovertemplate="%{y} on %{x}: %{z:.0%} of its attempts solved<extra></extra>",
        )
    )
    figure.update_layout(
        title="Solve matrix: share of each system's attempts that solved each task (⚑ flagged)",
        xaxis_title="task (easiest first)",
        height=max(300, 28 * len(wide) + 200),
        xaxis_tickangle=-60,
    )
    st.plotly_chart(figure, width="stretch", key="solve_matrix")


def tier_crosstab(tasks: pd.DataFrame) -> None:
    """Authored tier against measured tier, as a heatmap of task counts."""
    crosstab = tasks.assign(tier_authored=tasks["tier_authored"].fillna("(none)")).pivot_table(
        index="tier_authored", columns="measured_tier", values="task_id", aggfunc="count", fill_value=0
    )

    def order(values: Iterable[Any]) -> list[Any]:
        return sorted(values, key=lambda v: (TIER_ORDER.index(v) if v in TIER_ORDER else 99, str(v)))

    crosstab = crosstab.reindex(index=order(crosstab.index), columns=order(crosstab.columns), fill_value=0)
    figure = go.Figure(
        go.Heatmap(
            z=crosstab.values,
            x=list(crosstab.columns),
            y=list(crosstab.index),
            zmin=0,
            colorscale="Greens",
            colorbar=dict(title="tasks"),
            texttemplate="%{z}",
        )
    )
    figure.update_layout(
        title="Authored tier against measured tier (tasks)",
        xaxis_title="measured tier",
        yaxis_title="authored tier",
        height=380,
    )
    st.plotly_chart(figure, width="stretch", key="tier_crosstab")


# the unit abilities and informative bands are given for: systems, unless pooling is asked for
UNITS = ("systems (agent · model)", "models, pooled")


def ability_chart(difficulty: pd.Series, unsolved: pd.Series, abilities: pd.DataFrame, unit: str, title: str) -> None:
    """Task difficulty b over ability θ per `unit` (a column of `abilities`) on one logit axis, never-solved
    tasks apart (their b is a floor)."""
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35], vertical_spacing=0.06)
    figure.add_histogram(
        x=difficulty[~unsolved], nbinsx=30, name="tasks solved at least once", marker_color="#8fa9c4", row=1, col=1
    )
    if unsolved.any():
        figure.add_histogram(
            x=difficulty[unsolved], nbinsx=30, name="never solved (b is a floor)", marker_color="#d62728", row=1, col=1
        )
    figure.add_scatter(
        x=abilities["ability"],
        y=abilities[unit],
        mode="markers",
        name=f"{unit} ability θ (95% CI)",
        marker=dict(size=10, color="#222"),
        error_x=dict(type="data", array=1.96 * abilities["ability_se"]),
        row=2,
        col=1,
    )
    figure.update_layout(
        title=title, barmode="stack", height=max(520, 360 + 22 * len(abilities)), legend=dict(orientation="h", y=-0.15)
    )
    figure.update_yaxes(title_text="tasks", row=1, col=1)
    figure.update_yaxes(title_text=unit, row=2, col=1, automargin=True, autorange="reversed")  # ablest on top
    figure.update_xaxes(title_text=f"logits (higher: harder task / abler {unit})", row=2, col=1)
    st.plotly_chart(figure, width="stretch", key="difficulty_ability")
    if unsolved.any():
        st.caption(
            f"{int(unsolved.sum())} task(s) no {unit} solved: the fit only knows they are harder than every "
            "ability, so their b sits where its prior stops it, not at a measured value."
        )


def band_chart(counts: pd.DataFrame, unit: str, title: str) -> None:
    """Share of each unit's fitted tasks in its informative band, highest first."""
    counts = counts.sort_values("share_in_band", ascending=False)
    figure = go.Figure(go.Bar(x=counts[unit], y=counts["share_in_band"]))
    figure.update_layout(title=title, xaxis_title=unit, yaxis_title="share of tasks", height=380)
    figure.update_yaxes(tickformat=".0%", rangemode="tozero")
    st.plotly_chart(figure, width="stretch", key="informative_band")
    table(counts, "informative_band")


def by_system(tasks: pd.DataFrame) -> None:
    """Abilities and informative bands per system (agent · model), from a fit whose unit is the system:
    where agents share a model, the stored fit (its unit is the model, which the planner reads) pools them."""
    fit = read("difficulty.system_fit", scope=scope())
    abilities = pd.DataFrame(fit.abilities)
    if abilities.empty:
        st.info(
            "No fit per system: it needs two systems (agent · model) and two unflagged tasks with verdicts. "
            "Choose “models, pooled” for the stored fit."
        )
        return
    fitted = pd.DataFrame(fit.tasks)
    fitted = fitted[fitted["task_id"].isin(tasks["task_id"])]
    ability_chart(
        fitted["difficulty"],
        fitted["pass_rate"] == 0,
        abilities,
        "system",
        "Task difficulty b against system ability θ (IRT, logits; a fit whose unit is the system: agent · model)",
    )
    table(
        abilities[["system", "ability", "ability_se", "tasks"]],
        "system_abilities",
        "Abilities per system (IRT ability θ, not a pass rate) with standard errors; the fit is over every attempt "
        "in the store, flagged tasks left out",
    )
    lo, hi = fit.band
    band_chart(
        abilities[["system", "tasks", "in_band", "share_in_band"]],
        "system",
        f"Share of each system's fitted tasks in its informative band (predicted pass rate {lo:.0%}–{hi:.0%})",
    )


def pooled_by_model(tasks: pd.DataFrame) -> None:
    """The stored fit (its unit is the model: what the planner reads), each model row naming the systems it pools."""
    abilities = read("model_abilities", scope=scope())
    agents = read("model_pooling").set_index("model")["agent_names"]
    systems = {
        m: ", ".join(f"{a} · {m}" for a in str(agents.get(m, "(unknown)")).split(", ")) for m in abilities["model"]
    }
    abilities = abilities.assign(pools=abilities["model"].map(systems))
    st.caption(
        "Pooled by model: each model's ability is fitted over every system (agent · model) that ran it — "
        + "; ".join(f"{m} pools {pooled}" for m, pooled in systems.items())
        + ". Systems are the unit by default."
    )
    ability_chart(
        tasks["difficulty"],
        tasks["pass_rate"] == 0,
        abilities,
        "model",
        "Pooled by model — task difficulty b against model ability θ (IRT, logits; the stored fit)",
    )
    table(
        abilities.rename(columns={"pass_rate": "judged_pass_rate_fitted"}),
        "model_abilities",
        "Pooled by model — abilities with standard errors (judged_pass_rate_fitted: over the fitted tasks only; "
        "pools: the systems each model row pools)",
    )
    informative = read("informative_tasks", scope=scope())
    if not informative.empty:
        counts = informative.groupby("model").agg(tasks=("task_id", "count"), in_band=("in_band", "sum")).reset_index()
        counts["share_in_band"] = counts["in_band"] / counts["tasks"]
        band_chart(
            counts,
            "model",
            "Pooled by model — share of tasks in each model's informative band (predicted pass rate 20–80%)",
        )


st.title("Difficulty")
if store_ready():
    ignored_filters(SCOPE_FILTERS, "difficulty is fitted from verdicts, not codes.")
    task_health()
    tasks = read("task_difficulty", scope=scope())
    if tasks.empty:
        st.info("No difficulty fit for these tasks yet. Run `curriculab difficulty` (or `curriculab report --refit`).")
    else:
        tried = read("tasks_tried", scope=scope())
        st.caption(
            f"{len(tasks)} fitted tasks of the {tried} the filtered attempts tried (flagged tasks stay out of the "
            "fit until checked), and the systems they hold; each fit is over every attempt in the store."
        )
        try:
            held = read("difficulty.held_out_check")
        except ValueError:
            held = None
        if held is not None and held.irt_log_loss > held.baseline_log_loss:
            st.warning(
                f"Out of sample, the IRT fit predicts attempts worse than each task's pass rate (log-loss "
                f"{held.irt_log_loss:.3f} against {held.baseline_log_loss:.3f} over {held.held_out} held-out "
                "attempts): read measured tiers and abilities as rough.",
                icon=":material/warning:",
            )
        if tasks["tier_authored"].isna().all():  # nothing to set against the measured tiers: no empty heatmap
            st.caption(
                "No task here has an authored tier (the runs did not ship their tasks' metadata): measured tiers "
                "only, in the task table below."
            )
        else:
            tier_crosstab(tasks)

        pooled = st.radio("Unit", UNITS, horizontal=True, key="difficulty_unit") == UNITS[1]
        if pooled:
            pooled_by_model(tasks)
        else:
            by_system(tasks)
        misplaced = read("misplaced_tasks")
        if misplaced.empty:
            st.caption(
                "No misplaced tasks: "
                + (
                    "no task has an authored tier to compare."
                    if tasks["tier_authored"].isna().all()
                    else "every authored tier matches the measured one."
                )
            )
        else:
            table(
                misplaced,
                "misplaced_tasks",
                "Tasks whose authored tier disagrees with the measured one, furthest first",
            )
