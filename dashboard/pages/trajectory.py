"""One trajectory, by id (`?trajectory=ID` in the URL): steps, evidence, rationale, labels."""

import streamlit as st

from curriculab.dashboard.common import show_trajectory, store_ready

st.title("Trajectory")
if store_ready():
    wanted = st.text_input("Trajectory id", value=st.query_params.get("trajectory", ""), key="trajectory_id")
    if wanted:
        try:
            show_trajectory(wanted.strip())
        except ValueError as exc:
            st.error(str(exc))
    else:
        st.caption("Give a trajectory id, or drill down from Failure modes.")
