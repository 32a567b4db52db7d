"""The Streamlit dashboard (`streamlit run app.py`, or `curriculab dashboard`): read-only pages
over the read API. Page scripts live in `pages/`; `common.py` holds what they share."""

from pathlib import Path

PAGES_DIR = Path(__file__).parent / "pages"
