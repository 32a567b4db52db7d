"""Rows as a rich table, written once for the command line and the demo."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

PIPED_MAX_WIDTH = 400
"""Widest a table printed to a pipe or file gets; wider cells fold."""

_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0, 9), *range(11, 32), 127)}
"""Control characters (escape sequences among them) shown as text, never sent to the terminal raw."""


def safe_text(value: Any) -> str:
    """A value as inert text for a terminal: control characters (escape sequences) shown, not sent."""
    return str(value).translate(_CONTROL)


def print_table(
    console: Console,
    title: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    render: Callable[[Any], Any] = lambda v: v,
    right: Callable[[str], bool] = lambda column: False,
) -> None:
    """Print `rows` under `columns`; `render` turns a value into what is shown, `right` picks the
    columns to right-align (numbers). Missing values print as blanks."""
    from rich.markup import escape  # rich loads where a table is printed: JSON output never needs it
    from rich.measure import Measurement
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(escape(safe_text(column)), justify="right" if right(column) else "left", overflow="fold")
    for row in rows:  # rich markup in a value ("[red]") is text too
        table.add_row(*("" if v is None else escape(safe_text(render(v))) for v in row))
    if console.is_terminal or "COLUMNS" in os.environ:
        console.print(table)
        return
    # piped: sized to the content (rich would fold every column to 80), up to PIPED_MAX_WIDTH
    width, console.width = (
        console.width,
        min(Measurement.get(console, console.options.update_width(PIPED_MAX_WIDTH), table).maximum, PIPED_MAX_WIDTH),
    )
    try:
        console.print(table)
    finally:
        console.width = width
