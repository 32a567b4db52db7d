"""SQL: the analyst console. One read-only SELECT on a sealed connection (no files, network,
extensions or settings), a row cap and a statement timeout; refusals come as messages."""

import pandas as pd
import streamlit as st

from curriculab.analysis import queries
from curriculab.analysis.store import StoreError
from curriculab.dashboard.common import db_path, ignored_filters, store_ready, table

MAX_ROWS = 1000
TIMEOUT_S = 10.0

st.title("SQL")
if store_ready():
    ignored_filters((), "a query says what it selects.")
    st.caption(
        f"One SELECT over the store; at most {MAX_ROWS:,} rows shown; stopped after {TIMEOUT_S:g} s. "
        "Tables: `curriculab db schema`."
    )
    sql = st.text_area(
        "Query",
        value="select model, outcome, count(*) as attempts from trajectories group by all order by all",
        height=120,
        key="sql_text",
    )
    if st.button("Run", type="primary", key="sql_run"):
        try:
            columns, rows, truncated = queries.select_from(
                db_path(), sql, max_rows=MAX_ROWS, timeout_s=TIMEOUT_S, wait_s=3.0
            )
        except StoreError as exc:
            st.error(str(exc))
        else:
            frame = pd.DataFrame(rows, columns=columns)
            if truncated:
                st.warning(f"Only the first {MAX_ROWS:,} rows are shown. Add a LIMIT or aggregate.")
            table(frame, "query_result")
