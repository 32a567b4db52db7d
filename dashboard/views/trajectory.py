"""Trajectories: a searchable, filterable list and the viewer (`?trajectory=ID` in the URL, from
everywhere; `&code=CODE` highlights that code's evidence; `?search=TEXT` lists a task's attempts)."""

import streamlit as st

from curriculab.dashboard.common import SCOPE_FILTERS, ignored_filters, read, scope, store_ready, table
from curriculab.dashboard.viewer import show_trajectory

LIST_LIMIT = 1000

st.title("Trajectory")
if store_ready():
    ignored_filters(SCOPE_FILTERS, "the viewer shows every coder's codes.")
    wanted = st.query_params.get("trajectory")
    search_box, outcome_box, code_box = st.columns([3, 1, 2])
    search = search_box.text_input(
        "Search id, task, model or agent", value=st.query_params.get("search", ""), key="trajectory_search"
    )
    outcome = outcome_box.selectbox("Outcome", ["(all)", "failed", "passed", "error"], key="trajectory_outcome")
    code = code_box.text_input(
        "Has code",
        value=st.query_params.get("code", ""),
        key="trajectory_code",
        help="Trajectories any coder gave this code, e.g. skipped_verification",
    )
    listed = read(
        "trajectory_list",
        scope=scope(),
        search=search.strip() or None,
        outcome=None if outcome == "(all)" else outcome,
        code=code.strip() or None,
        limit=LIST_LIMIT,
    )
    matched = int(listed["matched"].iloc[0]) if len(listed) else 0
    note = f" (the first {len(listed):,} listed; narrow the search)" if matched > len(listed) else ""
    listed = listed.drop(columns=["matched"])
    with st.expander(f"{matched:,} trajectories match{note}", expanded=not wanted):
        table(listed, "trajectories", height=300)
    ids = list(listed["trajectory_id"])
    linked = wanted and wanted != st.session_state.get("_trajectory_shown")  # from a link, not this page's last pick
    if linked:
        if wanted not in ids:
            ids.insert(0, wanted)  # a link from elsewhere opens even when the filters would hide it
        st.session_state["trajectory_pick"] = wanted
    if not ids:
        st.info("No trajectory matches. Clear the search or the sidebar filters.")
    else:
        chosen = st.selectbox("Trajectory", ids, key="trajectory_pick")
        st.session_state["_trajectory_shown"] = chosen
        st.query_params["trajectory"] = chosen
        try:
            show_trajectory(chosen, highlight_code=code.strip() or None)
        except ValueError as exc:
            st.error(str(exc))
