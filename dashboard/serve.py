"""`python -m curriculab.dashboard.serve run app.py …`: Streamlit's own command line, in a process
that imports what every page needs while the server starts, so the first page a fresh server
serves does not pay those imports (about 2 s of the first page's time; the pages' reads are cached
per store version after their first run either way)."""

import threading


def _preload() -> None:
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401

    import curriculab.dashboard.common  # noqa: F401  (the read API, the taxonomy, the store)
    import curriculab.dashboard.viewer  # noqa: F401


def main() -> None:
    threading.Thread(target=_preload, name="curriculab-preload", daemon=True).start()
    from streamlit.web import cli

    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
