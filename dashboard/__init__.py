"""The Streamlit dashboard (`streamlit run app.py`, or `curriculab dashboard`): pages over the
read API, read-only except the labelling page. Page scripts live in `views/` (not `pages/`: Streamlit
would also serve a `pages/` folder beside the app as pages of its own, without the navigation and
the filters); `common.py` holds what they share, `viewer.py` the trajectory viewer."""

import sys
from pathlib import Path

PAGES_DIR = Path(__file__).parent / "views"
APP = PAGES_DIR.parent / "app.py"


def streamlit_command(port: int, headless: bool = True) -> list[str]:
    """The command that serves the dashboard (Streamlit's `run`, its imports made while it starts:
    `serve.py`): no usage statistics, no Deploy button."""
    return [
        sys.executable,
        "-m",
        "curriculab.dashboard.serve",
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.headless",
        str(headless).lower(),
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "minimal",
    ]
