"""What every page shares: the store (read-only, opened per read, never holding the write lock),
reads through the read API cached on the store's content version, the filters (one `Scope` for
every page, kept across pages and in the URL), and tables and charts people can read."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.colors import qualitative

from curriculab.analysis import queries
from curriculab.analysis.store import StoreBusy, StoreError

FILTERS = {
    "kind": "Attempts",
    "agent": "Agent",
    "model": "Model",
    "run": "Run",
    "task_type": "Task type",
    "language": "Language",
    "tier": "Tier",
    "taxonomy_version": "Taxonomy version",
    "coder": "Coder",
}
"""Filter keys (as they appear in the URL) and their labels."""
SCOPE_FILTERS = ("kind", "agent", "model", "run", "task_type", "language", "tier")
"""The filters that choose attempts (a `queries.Scope`); the other two choose whose codes are shown."""
KIND_LABELS = {"evaluation": "evaluation runs", "training": "training rollouts", "all": "evaluation and training"}
ALL = "(all)"
READ_WAIT_S = 3.0
"""How long a read waits for a writer (an ingest, a training run) to step aside."""
TIER_COLOURS = {"basic": "#4c78a8", "intermediate": "#f58518", "complex": "#54a24b", "edge": "#e45756"}
"""One colour per training tier, the same on the curriculum and training pages."""
PERCENT_COLUMNS = (
    "pass_rate",
    "share",
    "ci_low",
    "ci_high",
    "coverage",
    "leaderboard_accuracy",
    "zero_std_share",
    "share_of_reached",
    "share_of_first",
    "share_in_band",
    "observed_pass_rate",
    "predicted_pass_rate",
    "timeout_share",
    "spread_low",
    "spread_high",
    "run_low",
    "run_high",
)
"""Table columns that hold a proportion: shown as percentages."""


def db_path() -> Path:
    """The store the dashboard shows: `curriculab dashboard --db`, else $CURRICULAB_DB, else ./curriculab.duckdb."""
    return Path(os.environ.get("CURRICULAB_DB") or "curriculab.duckdb")


def store_version(path: Path) -> tuple[tuple[int, int] | None, ...]:
    """Changes whenever the store's content may have: the file's and its WAL's size and mtime."""
    parts: list[tuple[int, int] | None] = []
    for candidate in (path, Path(f"{path}.wal")):
        try:
            stat = candidate.stat()
            parts.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            parts.append(None)
    return tuple(parts)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(
    name: str, path: str, version: tuple[tuple[int, int] | None, ...], kwargs: tuple[tuple[str, Any], ...]
) -> tuple[Any, bool]:
    module, _, function = name.rpartition(".")  # `queries` by default; `difficulty.held_out_check` for a fit
    source = importlib.import_module(f"curriculab.analysis.{module}") if module else queries
    return queries.read_from(path, getattr(source, function), wait_s=READ_WAIT_S, **dict(kwargs))


_LAST_GOOD: dict[tuple[Any, ...], Any] = {}


def read(name: str, **kwargs: Any) -> Any:
    """A read-API function's result for the current store. While a writer holds the store, the
    last result read is shown, with a notice; a read that had to wait for a writer says the data
    may be partial."""
    path = db_path()
    key = (name, str(path), tuple(sorted(kwargs.items())))
    try:
        value, waited = _cached(name, str(path), store_version(path), key[2])
    except StoreError as exc:
        if key in _LAST_GOOD:
            _notice_once(
                "busy",
                "The store is being written (an ingest or a training run): showing what was last read. "
                "Reload when it is done.",
            )
            return _LAST_GOOD[key]
        if isinstance(exc, StoreBusy):
            st.warning(
                "The store is being written (an ingest or a training run) and this view has not been read "
                "before. Reload when the writer is done.",
                icon=":material/hourglass_top:",
            )
            st.stop()
        raise
    if waited:
        _notice_once(
            "partial",
            "An ingest or a training run is writing to the store: these numbers are partial and grow as it goes.",
        )
    _LAST_GOOD[key] = value
    return value


def _notice_once(kind: str, text: str) -> None:
    """One notice of a kind per page run."""
    shown = st.session_state.setdefault("_notices", set())
    if kind not in shown:
        shown.add(kind)
        st.info(text, icon=":material/hourglass_top:")


def store_ready() -> bool:
    """False, with guidance on the page, when there is no store or nothing in it yet."""
    path = db_path()
    if not path.exists():
        st.warning(
            f"No store at `{path}`. Create one with `curriculab ingest PATH --db {path}` or try "
            "`curriculab demo`, then `curriculab dashboard --db demo-output/curriculab.duckdb`."
        )
        return False
    try:
        models = read("filter_options")["model"]  # the sidebar's read, so a first page opens the store once for both
    except StoreError as exc:
        st.error(str(exc))
        return False
    if not models:
        st.info(f"`{path}` holds no attempts yet. Ingest some: `curriculab ingest PATH --db {path}`.")
        return False
    return True


def _options() -> dict[str, list[str]]:
    return {"kind": list(queries.KINDS), **read("filter_options")}


def sidebar_filters() -> dict[str, str]:
    """Draw the filters; their values live in the session (across pages) and the URL (to share).
    `kind` defaults to evaluation: training rollouts stay out of evaluation views unless asked for."""
    st.session_state["_notices"] = set()
    if not st.session_state.get("_filters_from_url"):
        st.session_state["_filters_from_url"] = True
        for key in FILTERS:
            if key in st.query_params:
                st.session_state[f"filter_{key}"] = st.query_params[key]
    if not db_path().exists():
        return {}
    try:
        options = _options()
    except StoreError:
        return {}
    chosen: dict[str, str] = {}
    with st.sidebar:
        st.caption(f"Store: `{db_path()}`")
        for key, label in FILTERS.items():
            values = options[key] if key == "kind" else [ALL, *options[key]]
            if st.session_state.get(f"filter_{key}") not in values:
                st.session_state[f"filter_{key}"] = values[0]
            value = st.selectbox(label, values, key=f"filter_{key}", format_func=_kind_label if key == "kind" else str)
            if value != ALL and not (key == "kind" and value == "evaluation"):
                chosen[key] = value
    for key in FILTERS:  # the URL says what is filtered, so a view can be shared
        if key in chosen:
            st.query_params[key] = chosen[key]
        elif key in st.query_params:
            del st.query_params[key]
    st.session_state["filters"] = chosen
    return chosen


def _kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


def filters() -> dict[str, str]:
    chosen: dict[str, str] = st.session_state.get("filters", {})
    return chosen


def scope() -> queries.Scope:
    """The attempts the filters choose (evaluation runs unless `Attempts` says otherwise)."""
    chosen = filters()
    return queries.Scope(
        agent=chosen.get("agent"),
        model=chosen.get("model"),
        run_id=chosen.get("run"),
        task_type=chosen.get("task_type"),
        language=chosen.get("language"),
        tier=chosen.get("tier"),
        kind=chosen.get("kind", "evaluation"),
    )


def ignored_filters(uses: Iterable[str], why: str) -> None:
    """Say which of the filters set this page does not apply, and why (never ignore one silently)."""
    ignored = [FILTERS[key] for key in filters() if key not in set(uses)]
    if ignored:
        st.caption(f":material/filter_alt_off: This page ignores the filter(s) {', '.join(ignored)}: {why}")


def coders_and_versions() -> list[tuple[str, str | None]]:
    """The coders a page shows: the one chosen in the sidebar, else every coder with codes in the
    store, side by side (the report's order: rules, verifier, ...), each with its newest version."""
    chosen = filters()
    if "coder" in chosen:
        return [coder_and_version()]
    from curriculab.analysis.report import CODERS

    present = set(read("coders"))
    shown = [c for c in CODERS if c in present] + sorted(present - set(CODERS))
    return [(c, chosen.get("taxonomy_version") or read("latest_taxonomy_version", coder=c)) for c in shown] or [
        coder_and_version()
    ]


def coder_and_version() -> tuple[str, str | None]:
    chosen = filters()
    coder = chosen.get("coder", "rules")
    return coder, chosen.get("taxonomy_version") or read("latest_taxonomy_version", coder=coder)


def filtered_attempts() -> pd.DataFrame:
    return read("attempts", scope=scope())


def _percent_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if (c in PERCENT_COLUMNS or c.startswith("share")) and frame[c].dtype.kind == "f"]


def percent(count: int, total: int) -> str:
    """count / total as `percent_of` prints it (52.5%, 36.0%, 58.8%), '–' with no total."""
    return percent_of(count / total) if total else "–"


def percent_of(share: float | None) -> str:
    """A share as the report prints it (`report.percent_text`: one decimal, half-up from its
    shortest decimal form), every figure on the pages the same way; '–' for none."""
    from curriculab.analysis.report import percent_text

    if share is None or share != share:
        return "–"
    return percent_text(share)


def rows_height(rows: int, most: int = 40) -> int:
    """A table's height that shows `rows` rows (up to `most`) without an inner scrollbar."""
    return 35 * (min(rows, most) + 1) + 3


def table(frame: pd.DataFrame, name: str, caption: str | None = None, height: int | None = None) -> None:
    """A sortable table (proportions as percentages, one decimal) with a CSV download of the raw values."""
    if caption:
        st.caption(caption)
    options: dict[str, Any] = {"width": "stretch", "hide_index": True}
    if height:
        options["height"] = height
    shares = _percent_columns(frame)
    # proportions shown as `percent` writes them (one decimal, half-up); sorting and the CSV keep the values
    st.dataframe(frame.style.format(percent_of, subset=shares) if shares else frame, **options)
    st.download_button(
        f"Download {name}.csv",
        frame.to_csv(index=False).encode(),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"csv_{name}",
        icon=":material/download:",
    )


def colours(n: int) -> list[str]:
    """A colour for each of `n` series, all different up to 26: plotly's default cycle has 10, so
    the 13 systems of a leaderboard would share them (Droid · Opus drawn as mini-swe-agent)."""
    palette = qualitative.Plotly if n <= len(qualitative.Plotly) else qualitative.Alphabet
    return [palette[i % len(palette)] for i in range(n)]


def bars(
    frame: pd.DataFrame,
    x: str,
    y: str,
    *,
    low: str | None = None,
    high: str | None = None,
    color: str | None = None,
    title: str,
    x_title: str,
    y_title: str,
    percent: bool = True,
    key: str | None = None,
) -> None:
    """Bars with 95% intervals as error bars, axis titles and units, in the frame's order."""
    figure = go.Figure()
    groups = list(frame.groupby(color, sort=False)) if color else [(None, frame)]
    palette = colours(len(groups))
    for index, (name, part) in enumerate(groups):
        error = None
        if low and high:
            error = dict(
                type="data",
                symmetric=False,
                array=(part[high] - part[y]).clip(lower=0),
                arrayminus=(part[y] - part[low]).clip(lower=0),
            )
        figure.add_bar(
            x=part[x],
            y=part[y],
            name=str(name) if name is not None else y_title,
            error_y=error,
            marker_color=palette[index],
        )
    figure.update_layout(
        title=title,
        barmode="group",
        xaxis_title=x_title,
        yaxis_title=y_title,
        height=440,
        margin=dict(t=60, b=40),
        legend_title_text=color or "",
    )
    figure.update_xaxes(categoryorder="array", categoryarray=list(dict.fromkeys(frame[x])), automargin=True)
    if percent:
        figure.update_yaxes(tickformat=".0%", rangemode="tozero")
    st.plotly_chart(figure, width="stretch", key=key)
