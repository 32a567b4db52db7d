"""curriculab's dashboard: `streamlit run app.py` (or `curriculab dashboard --db PATH`).

A thin shell: pages live in `dashboard/views/`, every read goes through the read API, and the
store is only ever opened read-only. The store: $CURRICULAB_DB, else ./curriculab.duckdb.
"""

from curriculab.dashboard.app import main

main()
