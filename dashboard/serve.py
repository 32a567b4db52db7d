"""`python -m curriculab.dashboard.serve run app.py …`: Streamlit's own command line, in a process
that has imported what every page needs before the server listens, so the first page a fresh
server serves does not pay those imports (most of its wait; the pages' reads are cached per store
version after their first run either way). They run first, in the main thread, before Streamlit
starts: when they ran in a thread beside its start, a server in the loaded test suite once did not
answer its health check within 60 s (the cause was not pinned down; this order leaves none)."""


def _preload() -> None:
    import pandas  # noqa: F401
    import pandas.io.formats.style  # noqa: F401  (tables' percentages; it brings jinja2 in)
    import plotly.graph_objects  # noqa: F401

    import curriculab.dashboard.common  # noqa: F401  (the read API, the taxonomy, the store)
    import curriculab.dashboard.viewer  # noqa: F401


def main() -> None:
    _preload()
    from streamlit.web import cli

    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
