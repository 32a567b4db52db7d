"""The dashboard's navigation: pages by section, the filters in the sidebar. `app.py` at the
repository root calls `main()`; `curriculab dashboard` runs this file."""

import streamlit as st

from curriculab.dashboard import PAGES_DIR
from curriculab.dashboard.common import sidebar_filters

PAGES = {
    "Analysis": [
        ("overview.py", "Overview", ":material/dashboard:"),
        ("failures.py", "Failure modes", ":material/bug_report:"),
        ("trajectory.py", "Trajectory", ":material/timeline:"),
        ("compare.py", "Compare", ":material/compare_arrows:"),
        ("difficulty.py", "Difficulty", ":material/stairs:"),
        ("milestones.py", "Milestones", ":material/flag:"),
        ("coders.py", "Coders", ":material/fact_check:"),
    ],
    "Training": [
        ("curriculum.py", "Curriculum", ":material/route:"),
        ("training.py", "Training", ":material/monitoring:"),
    ],
    "Tools": [("labelling.py", "Labelling", ":material/label:"), ("sql.py", "SQL", ":material/terminal:")],
}  # page script, title and icon, by section (a comment: Streamlit would draw a bare string)


def main() -> None:
    st.set_page_config(page_title="curriculab", page_icon=":material/school:", layout="wide")
    navigation = st.navigation(
        {
            section: [
                st.Page(PAGES_DIR / name, title=title, icon=icon, default=name == "overview.py")
                for name, title, icon in pages
            ]
            for section, pages in PAGES.items()
        }
    )
    sidebar_filters()
    try:
        navigation.run()
    finally:  # the page's run is over: a marker a browser (or a test) can wait on, numbered per run
        runs = st.session_state["_runs"] = st.session_state.get("_runs", 0) + 1
        st.markdown(f'<span class="curriculab-run-done" data-run="{runs}"></span>', unsafe_allow_html=True)


if __name__ == "__main__":
    main()
