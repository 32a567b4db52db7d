"""Looking at it: `dashboard` and `demo`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from curriculab.commands.common import CliError, db_option, echo_json, existing_store, out_console


@click.command()
@click.option("--port", type=int, default=8501, show_default=True, help="Port to serve on.")
@click.option("--headless/--browser", default=True, show_default=True, help="Open a browser window, or not.")
@db_option
def dashboard(port: int, headless: bool) -> None:
    """Serve the dashboard over the store (read-only): `streamlit run app.py`.

    \b
    Example:
      curriculab dashboard --db demo-output/curriculab.duckdb --port 8501
    """
    import socket

    from curriculab.dashboard import streamlit_command

    path = existing_store()
    with socket.socket() as probe:  # a taken port is refused before the URL is printed
        try:
            probe.bind(("", port))
        except OSError:
            raise CliError(f"port {port} is taken (another dashboard?). Pass a free one: --port {port + 1}") from None
    env = {**os.environ, "CURRICULAB_DB": str(path.resolve())}
    click.echo(f"curriculab dashboard on http://localhost:{port} over {path} (Ctrl-C to stop)")
    sys.stdout.flush()
    command = streamlit_command(port, headless)
    os.execve(command[0], command, env)  # streamlit takes this process: a signal to it stops the server


@click.command()
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("demo-output"),
    show_default=True,
    help="Where the simulated corpus and the demo store go.",
)
@click.option("--tasks", "n_tasks", default=36, show_default=True)
@click.option("--attempts", default=3, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the demo's summary as JSON.")
def demo(out: Path, n_tasks: int, attempts: int, seed: int, as_json: bool) -> None:
    """Run the loop on embedded data: simulate a corpus, ingest it, summarise it.

    Uses its own store under --out, never your --db.

    \b
    Example:
      curriculab demo --out /tmp/demo
    """
    from curriculab.demo import run_demo

    result = run_demo(out, n_tasks=n_tasks, attempts=attempts, seed=seed, console=None if as_json else out_console())
    if as_json:
        echo_json(result)
