"""Curriculum: a stored plan in its own terms (a problem plan's α over training and weights; a task
plan's suite, tasks and held-out tasks), its reward terms, the failure codes it acted on
(rollout codes of the round before included), task mix and reasons; two plans side by side; the
plan.yaml to download."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from curriculab.dashboard.common import TIER_COLOURS, filters, ignored_filters, read, store_ready, table
from curriculab.planner.plan import TaskPlan, diff, parse, training_config
from curriculab.trajectory.vocabulary import TIERS

st.title("Curriculum")
if store_ready():
    ignored_filters(("model",), "a plan is made for one model from the whole store; the Model filter picks its plans.")
    plans = read("plans", target_model=filters().get("model"))
    if plans.empty:
        st.info("No plan stored yet. Make one: `curriculab plan --model M -o plan.yaml`.")
    else:
        # whom each plan is for: one system (`plan --system`) or a model's systems pooled
        labels = {
            row.plan_id: f"{row.plan_id} · {parse(row.plan).target} · {row.strategy} · {row.created_at:%Y-%m-%d %H:%M}"
            for row in plans.itertuples()
        }
        chosen = st.selectbox("Plan", list(labels), format_func=lambda plan_id: labels[plan_id], key="plan_a")
        row = plans[plans["plan_id"] == chosen].iloc[0]
        plan = parse(row["plan"])
        if isinstance(plan, TaskPlan):  # a terminal-task plan: milestone rewards per task, no tier schedule
            suite, tasks, rows, group, held = st.columns(5)
            suite.metric("Suite", plan.suite)
            tasks.metric("Tasks", len(plan.task_mix))
            rows.metric("Rows", sum(e.copies for e in plan.task_mix))
            group.metric("Group", plan.group_size, help="episodes per task in each GRPO group")
            held.metric(
                "Held out", len(plan.held_out), help="kept for the evaluation: " + (", ".join(plan.held_out) or "none")
            )
            st.caption(
                "A task plan: agentic GRPO over terminal tasks, each practised as often as its weight says; the "
                "reward is the episode's milestones (plus the process terms below), with no tier schedule."
            )
        else:
            columns = st.columns(4)
            columns[0].metric("Schedule", plan.schedule + (f" from {plan.start_tier}" if plan.start_tier else ""))
            columns[1].metric("Capability", f"{plan.capability['value']:.2f}", help=plan.capability["evidence"])
            columns[2].metric("Band", plan.band)
            columns[3].metric("Problems", f"{len(plan.task_mix)} ({sum(e.copies for e in plan.task_mix)} rows)")
            curriculum = training_config(plan).curriculum.tier_curriculum()  # the method `train` builds it with
            progress = [k / 100 for k in range(101)]
            figure = go.Figure()
            for tier in TIERS:
                figure.add_scatter(
                    x=progress,
                    y=[curriculum.allocation(p)[tier] * plan.weights[tier] for p in progress],
                    mode="lines",
                    name=tier,
                    line_shape="hv",
                    line=dict(color=TIER_COLOURS.get(tier)),
                )
            figure.update_layout(
                title="Share of the reward per tier over training (α·w)",
                xaxis_title="fraction of training done",
                yaxis_title="α·w (sums to 1)",
                height=380,
            )
            figure.update_xaxes(tickformat=".0%")
            st.plotly_chart(figure, width="stretch", key="alpha_over_training")
            weights = go.Figure(
                go.Bar(
                    x=list(TIERS), y=[plan.weights[t] for t in TIERS], marker_color=[TIER_COLOURS.get(t) for t in TIERS]
                )
            )
            weights.update_layout(title="Reward weight w per tier", xaxis_title="tier", yaxis_title="w", height=320)
            st.plotly_chart(weights, width="stretch", key="weights")
        st.caption(
            "Reward: " + " + ".join(f"{w:g} × {f}" for f, w in zip(plan.reward_functions, plan.reward_weights) if w)
        )
        if plan.codes:
            codes = pd.DataFrame(plan.codes).reindex(
                columns=[
                    "code",
                    "coder",
                    "used",
                    "share",
                    "ci_low",
                    "ci_high",
                    "coverage",
                    "tiers",
                    "reward_term",
                    "method",
                    "reason",
                ]
            )  # plans before v3 lack some
            codes["tiers"] = codes["tiers"].map(lambda tiers: ", ".join(tiers) if isinstance(tiers, list) else "")
            table(
                codes.sort_values(["used", "share"], ascending=False),
                f"codes-{plan.plan_id}",
                "Failure codes the plan read (verifier codes of the previous round's rollouts included): used or ignored, and why",
            )
        st.subheader("Why")
        for reason in plan.reasons:
            st.markdown(f"- {reason}")
        mix = pd.DataFrame([e.model_dump() for e in plan.task_mix])
        mix["tier_mix"] = mix["tier_mix"].map(lambda m: ", ".join(f"{t} {v:.0%}" for t, v in m.items() if v))
        left_out = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in plan.excluded.items() if n) or "none"
        table(mix, f"task_mix-{plan.plan_id}", f"Task mix; left out: {left_out}", height=300)
        st.download_button(
            "Download plan.yaml",
            row["config_yaml"] or "",
            file_name=f"plan-{plan.plan_id}.yaml",
            mime="text/yaml",
            key="download_yaml",
            icon=":material/download:",
        )
        if len(labels) > 1:
            st.subheader("Compare with another plan")
            other_id = st.selectbox(
                "Second plan",
                [p for p in labels if p != chosen],
                format_func=lambda plan_id: labels[plan_id],
                key="plan_b",
            )
            other = parse(plans[plans["plan_id"] == other_id].iloc[0]["plan"])
            changes = pd.DataFrame(diff(plan, other), columns=["what", chosen, other_id])
            if changes.empty:
                st.caption("The two plans make the same choices.")
            else:
                table(changes, "plan_diff")
