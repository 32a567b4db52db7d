"""Failure modes: each system's failures split across codes, with intervals and coverage; why a
coder could not judge; bottleneck codes; co-occurrence; a code's attempts and their evidence."""

from urllib.parse import quote

import plotly.graph_objects as go
import streamlit as st

from curriculab.analysis.queries import AGENT_FAULT_FAILED, AGENT_FAULT_PASSED, INFRASTRUCTURE_FAULT, TIME_BOUND
from curriculab.dashboard.common import bars, coders_and_versions, read, scope, store_ready, table
from curriculab.dashboard.viewer import show_trajectory
from curriculab.taxonomy.versions import NEWEST

st.title("Failure modes")

TITLES = {
    "rules": "What the behavioural rules found",
    "verifier": "What the tests say",
    "judge": "What the LLM judge found",
    "classifier": "What the classifier found",
}


def coder_section(coder: str, version: str, suffix: str) -> list[str]:
    """One coder's failure shares, bottlenecks and co-occurrence; its codes, largest share first.
    `suffix` keeps the widget keys of each coder's section apart (the first coder's is empty)."""
    distribution = read("failure_distribution", coder=coder, taxonomy_version=version, scope=scope())
    # infrastructure faults are not failures of the agent: shown once, above the coders (infrastructure_faults)
    behaviour = distribution[(distribution["code"] != "harness_failure") & (distribution["applied"] > 0)]
    found = behaviour[behaviour["n"] > 0]
    if distribution.empty:
        st.info("No failed attempts match the filters.")
    if not distribution.empty and found.empty:
        coverage = read("coder_coverage", coder=coder, taxonomy_version=version, scope=scope())
        reasons = "; ".join(
            f"{r.model}: {r.coded_failures} of {r.failures} failures judged"
            + (f" ({r.why_not_coded})" if r.why_not_coded else "")
            for r in coverage.itertuples()
        )
        why = (
            "Its rules need the agent's actions (commands, edits, reads); installed agents log only their verdicts."
            if coder == "rules"
            else ""
        )
        st.info(
            f"No failure code to show: coder `{coder}` judged none of these failures, or found nothing. {why} "
            f"{reasons}",
            icon=":material/visibility_off:",
        )
        return []
    if found.empty:
        return []
    order: list[str] = found.groupby("code")["share"].mean().sort_values(ascending=False).index.tolist()
    shown = behaviour[behaviour["code"].isin(order)].copy()
    shown["code"] = shown["code"].astype("category").cat.set_categories(order)
    shown = shown.sort_values(["code", "system"])
    older = "" if version == NEWEST else f" (older than {NEWEST}: `curriculab code --coder {coder}` recodes)"
    st.caption(
        f"Coder `{coder}`, taxonomy {version}{older}. Share = failures with the code / failures the coder "
        "could judge; coverage = judged / all failures. Codes found at least once, largest first."
    )
    bars(
        shown.assign(code=shown["code"].astype(str)),
        "code",
        "share",
        low="ci_low",
        high="ci_high",
        color="system",
        title=f"Share of judged failures per code, {coder} (95% Wilson interval)",
        x_title="failure code",
        y_title="share of judged failures",
        key=f"failure_shares{suffix}",
    )
    table(
        shown.assign(code=shown["code"].astype(str))[
            ["system", "code", "n", "applied", "failures", "share", "ci_low", "ci_high", "coverage"]
        ],
        f"failure_distribution{suffix}",
    )
    top = found.sort_values("share", ascending=False).groupby("system").head(3)
    table(
        top[["system", "code", "share", "ci_low", "ci_high", "coverage"]],
        f"bottlenecks{suffix}",
        "Bottleneck codes: the three largest shares per system",
    )
    pairs = read("code_cooccurrence", coder=coder, taxonomy_version=version, scope=scope())
    if not pairs.empty:
        codes = [c for c in order if c in set(pairs["code_a"]) | set(pairs["code_b"])]
        grid = [[0] * len(codes) for _ in codes]
        for row in pairs.itertuples():
            if row.code_a in codes and row.code_b in codes:
                i, j = codes.index(row.code_a), codes.index(row.code_b)
                grid[i][j] = grid[j][i] = row.attempts
        figure = go.Figure(
            go.Heatmap(
                z=grid, x=codes, y=codes, colorscale="Blues", texttemplate="%{z}", colorbar=dict(title="attempts")
            )
        )
        figure.update_layout(
            title=f"Codes found on the same failed attempt, {coder}", xaxis_title="code", yaxis_title="code", height=460
        )
        st.plotly_chart(figure, width="stretch", key=f"cooccurrence{suffix}")
    return order


def infrastructure_faults() -> None:
    """The one "harness" number (the Outcomes policy, docs/formats.md, taxonomy v4's harness_failure): attempts
    the infrastructure failed, with no verdict, outside pass rates; the Overview shows the same count.
    Agent timeouts and crashes are the agent's failures and sit among the codes below."""
    errors = read("harness_errors", scope=scope())
    faults = errors[errors["verdict"] == INFRASTRUCTURE_FAULT]
    agents = errors[errors["verdict"] == AGENT_FAULT_FAILED]
    despite = errors[errors["verdict"] == AGENT_FAULT_PASSED]
    columns = st.columns(3)
    columns[0].metric(
        "Harness errors: infrastructure faults",
        int(faults["attempts"].sum()),
        help="Attempts with no verdict because the infrastructure failed (environment, install, test "
        "timeout, verifier, reward): outside pass rates and failure shares. The Overview counts the same.",
    )
    columns[1].metric(
        "Failed with an agent fault",
        int(agents["attempts"].sum()),
        help="Failed attempts whose record names the agent's own fault (a timeout, a crash, an unparseable "
        "reply): the agent's failures, counted in pass rates and coded below like any failure.",
    )
    columns[2].metric(
        "Passed despite a recorded agent fault",
        int(despite["attempts"].sum()),
        help="Attempts whose tests passed although the harness recorded an agent fault (e.g. an agent "
        "timeout): passes, counted as passes, never coded as failures.",
    )
    if not faults.empty:
        by_kind = (
            faults.groupby("harness_error", as_index=False)["attempts"].sum().sort_values("attempts", ascending=False)
        )
        table(
            by_kind,
            "infrastructure_faults",
            "Infrastructure faults by kind (test timeouts among them): fix the "
            "harness; no training data addresses them",
        )


def endings() -> None:
    """How each system's failures ended by the harness's record — out of time, another fault of the
    agent's own, or at the tests' verdict — beside the tests' codes below: a failure that ran out of
    time reads as time, whatever code the tests then gave it."""
    ended = read("failure_endings", scope=scope())
    ended = ended[ended["failures"] > 0]
    if ended.empty or not (ended["timed_out"].sum() + ended["crashed"].sum()):
        return
    st.subheader("How failures ended: out of time, crashed, or at the tests' verdict")
    figure = go.Figure()
    for column, name in (
        ("timed_out", "ran out of time"),
        ("crashed", "another agent fault"),
        ("to_verdict", "at the tests' verdict"),
    ):
        figure.add_bar(
            y=ended["system"],
            x=ended[column] / ended["failures"],
            name=name,
            orientation="h",
            customdata=ended[[column, "failures"]],
            hovertemplate="%{y}: %{customdata[0]} of %{customdata[1]} failures (%{x:.1%})",
        )
    figure.update_layout(
        title="How each system's failures ended (share of its failures, from the harness's record)",
        barmode="stack",
        xaxis_title="share of the system's failures",
        xaxis_tickformat=".0%",
        height=max(240, 40 * len(ended) + 120),
        legend_orientation="h",
    )
    st.plotly_chart(figure, width="stretch", key="endings")
    mostly = ended[ended["timeout_share"] >= TIME_BOUND]
    if not mostly.empty:
        st.warning(
            f"{len(mostly)} system(s) ran out of time in half or more of their failures "
            f"({', '.join(mostly['system'].head(5))}{', …' if len(mostly) > 5 else ''}): their failures are about time "
            "and long tasks; the tests' codes below say what was left undone, not that the tasks were too hard."
        )
    table(
        ended[["system", "failures", "timed_out", "crashed", "to_verdict", "timeout_share", "ci_low", "ci_high"]],
        "failure_endings",
    )
    by_task = read("failure_endings", by="task", scope=scope())
    long_tasks = by_task[by_task["timed_out"] > 0].sort_values(["timed_out", "task_id"], ascending=[False, True])
    if not long_tasks.empty:
        table(
            long_tasks[["task_id", "system", "attempts", "failures", "timed_out"]],
            "timeouts_by_task",
            "Where they ran out of time: tasks and systems, most timeouts first",
            height=260,
        )


if store_ready():
    infrastructure_faults()
    endings()
    shown_coders = coders_and_versions()
    orders: dict[str, list[str]] = {}
    for index, (coder, version) in enumerate(shown_coders):
        if len(shown_coders) > 1:
            st.subheader(f"{TITLES.get(coder, coder)} (`{coder}`)")
        if version is None:
            st.info(f"The coder `{coder}` has not coded this store. Run `curriculab code --coder {coder}`.")
            continue
        orders[coder] = coder_section(coder, version, "" if index == 0 else f"_{coder}")
    if any(orders.values()):
        st.subheader("Drill down: a code's attempts and their evidence")
        with_codes = [c for c, order in orders.items() if order]
        coder = (
            with_codes[0] if len(with_codes) == 1 else st.radio("Coder", with_codes, horizontal=True, key="drill_coder")
        )
        version = dict(shown_coders)[coder]
        order = orders[coder]
        left, right = st.columns([2, 1])
        code = left.selectbox("Failure code (largest share first)", order, key="drill_code")
        outcome = right.radio(
            "Attempts",
            ["failed", "passed", "both"],
            horizontal=True,
            key="drill_outcome",
            help="A code on a passed attempt is behaviour that did not cost the verdict.",
        )
        attempts = read(
            "trajectories_with_code",
            code=code,
            coder=coder,
            taxonomy_version=version,
            scope=scope(),
            outcome=None if outcome == "both" else outcome,
        )
        if attempts.empty:
            st.caption(f"No {'' if outcome == 'both' else outcome + ' '}attempt has this code under the filters.")
        else:
            view = attempts.drop(columns="total").assign(
                evidence_steps=attempts["evidence_steps"].map(
                    lambda s: ", ".join(str(x) for x in (s if s is not None else []))
                )
            )
            total = int(attempts["total"].iloc[0])
            shown = "" if total == len(attempts) else f" (the first {len(attempts):,} shown)"
            table(view, f"attempts-{code}", f"{total:,} attempts coded {code}{shown}", height=260)
            chosen = st.selectbox("Trajectory", list(attempts["trajectory_id"]), key="drill_trajectory")
            st.markdown(
                f"[:material/open_in_new: Open in the trajectory viewer](trajectory?trajectory={quote(chosen)}"
                f"&code={quote(code)})"
            )
            show_trajectory(chosen, highlight_code=code, key="drill")
