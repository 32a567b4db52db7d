"""What every page shares: the store (read-only, opened per read, never holding the write lock),
reads through the read API cached on the store's content version, the filters (kept across
pages and in the URL), and tables and charts people can read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from curriculab.analysis import queries
from curriculab.analysis.stats import wilson_interval
from curriculab.analysis.store import Store, StoreBusy, StoreError

FILTERS = {"model": "Model", "run": "Run", "task_type": "Task type", "language": "Language", "tier": "Tier",
           "taxonomy_version": "Taxonomy version", "coder": "Coder"}
"""Filter keys (as they appear in the URL) and their labels."""
ALL = "(all)"
READ_WAIT_S = 3.0
"""How long a read waits for a writer (an ingest, a training run) to step aside."""


def db_path() -> Path:
    """The store the dashboard shows: `curriculab dashboard --db`, else $CURRICULAB_DB, else ./curriculab.duckdb."""
    return Path(os.environ.get("CURRICULAB_DB") or "curriculab.duckdb")


def store_version(path: Path) -> tuple:
    """Changes whenever the store's content may have: the file's and its WAL's size and mtime."""
    parts = []
    for candidate in (path, Path(f"{path}.wal")):
        try:
            stat = candidate.stat()
            parts.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            parts.append(None)
    return tuple(parts)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(name: str, path: str, version: tuple, kwargs: tuple) -> Any:
    with Store(path, read_only=True, create=False, wait_s=READ_WAIT_S) as store:
        return getattr(queries, name)(store, **dict(kwargs))


_LAST_GOOD: dict[tuple, Any] = {}


def read(name: str, **kwargs: Any) -> Any:
    """A read-API function's result for the current store. While a writer holds the store, the
    last result read is shown, with a notice."""
    path = db_path()
    key = (name, str(path), tuple(sorted(kwargs.items())))
    try:
        value = _cached(name, str(path), store_version(path), key[2])
    except StoreError as exc:
        if key in _LAST_GOOD:
            busy()
            return _LAST_GOOD[key]
        if isinstance(exc, StoreBusy):
            st.warning("The store is being written (an ingest or a training run) and this view has not been read "
                       "before. Reload when the writer is done.", icon=":material/hourglass_top:")
            st.stop()
        raise
    _LAST_GOOD[key] = value
    return value


def busy() -> None:
    if not st.session_state.get("_busy_shown"):
        st.session_state["_busy_shown"] = True
        st.info("The store is being written (an ingest or a training run): showing what was last read. "
                "Reload when it is done.", icon=":material/hourglass_top:")


def store_ready() -> bool:
    """False, with guidance on the page, when there is no store or nothing in it yet."""
    path = db_path()
    if not path.exists():
        st.warning(f"No store at `{path}`. Create one with `curriculab ingest PATH --db {path}` or try "
                   "`curriculab demo`, then `curriculab dashboard --db demo-output/curriculab.duckdb`.")
        return False
    try:
        models = read("known_models")
    except StoreError as exc:
        st.error(str(exc))
        return False
    if not models:
        st.info(f"`{path}` holds no attempts yet. Ingest some: `curriculab ingest PATH --db {path}`.")
        return False
    return True


def _options() -> dict[str, list[str]]:
    attempts = read("attempts")
    runs = read("runs")
    return {"model": read("known_models"), "run": sorted(runs["run_id"].dropna()),
            "task_type": sorted(attempts["task_type"].dropna().unique()),
            "language": sorted(attempts["language"].dropna().unique()),
            "tier": sorted(attempts["tier"].dropna().unique()),
            "taxonomy_version": read("taxonomy_versions"), "coder": read("coders")}


def sidebar_filters() -> dict[str, str]:
    """Draw the filters; their values live in the session (across pages) and the URL (to share)."""
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
    chosen = {}
    with st.sidebar:
        st.caption(f"Store: `{db_path()}`")
        for key, label in FILTERS.items():
            values = [ALL, *options[key]]
            if st.session_state.get(f"filter_{key}") not in values:
                st.session_state[f"filter_{key}"] = ALL
            value = st.selectbox(label, values, key=f"filter_{key}")
            if value != ALL:
                chosen[key] = value
    for key in FILTERS:  # the URL says what is filtered, so a view can be shared
        if key in chosen:
            st.query_params[key] = chosen[key]
        elif key in st.query_params:
            del st.query_params[key]
    st.session_state["filters"] = chosen
    return chosen


def filters() -> dict[str, str]:
    return st.session_state.get("filters", {})


def coder_and_version() -> tuple[str, str | None]:
    chosen = filters()
    coder = chosen.get("coder", "rules")
    return coder, chosen.get("taxonomy_version") or read("latest_taxonomy_version", coder=coder)


def filtered_attempts() -> pd.DataFrame:
    chosen = filters()
    return read("attempts", model=chosen.get("model"), run_id=chosen.get("run"), task_type=chosen.get("task_type"),
                language=chosen.get("language"), tier=chosen.get("tier"))


def table(frame: pd.DataFrame, name: str, caption: str | None = None, height: int | None = None) -> None:
    """A sortable table with a CSV download."""
    if caption:
        st.caption(caption)
    if height:
        st.dataframe(frame, width="stretch", hide_index=True, height=height)
    else:
        st.dataframe(frame, width="stretch", hide_index=True)
    st.download_button(f"Download {name}.csv", frame.to_csv(index=False).encode(), file_name=f"{name}.csv",
                       mime="text/csv", key=f"csv_{name}", icon=":material/download:")


def pass_rate_frame(attempts: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Pass rate with a Wilson 95% interval per group, over attempts with a verdict."""
    judged = attempts[attempts["outcome"] != "error"]
    rows = []
    for value, group in judged.groupby(by):
        passes, n = int((group["outcome"] == "passed").sum()), len(group)
        low, high = wilson_interval(passes, n)
        rows.append({by: value, "attempts": n, "passes": passes, "pass_rate": passes / n if n else None,
                     "ci_low": low, "ci_high": high,
                     "harness_errors": int((attempts[attempts[by] == value]["outcome"] == "error").sum())})
    return pd.DataFrame(rows, columns=[by, "attempts", "passes", "pass_rate", "ci_low", "ci_high", "harness_errors"])


def bars(frame: pd.DataFrame, x: str, y: str, *, low: str | None = None, high: str | None = None, color: str | None = None,
         title: str, x_title: str, y_title: str, percent: bool = True, key: str | None = None) -> None:
    """Bars with 95% intervals as error bars, axis titles and units."""
    figure = go.Figure()
    groups = frame.groupby(color) if color else [(None, frame)]
    for name, part in groups:
        error = None
        if low and high:
            error = dict(type="data", symmetric=False, array=(part[high] - part[y]).clip(lower=0),
                         arrayminus=(part[y] - part[low]).clip(lower=0))
        figure.add_bar(x=part[x], y=part[y], name=str(name) if name is not None else y_title, error_y=error)
    figure.update_layout(title=title, barmode="group", xaxis_title=x_title, yaxis_title=y_title, height=420,
                         margin=dict(t=60, b=40), legend_title_text=color or "")
    if percent:
        figure.update_yaxes(tickformat=".0%", rangemode="tozero")
    st.plotly_chart(figure, width="stretch", key=key)


def show_trajectory(trajectory_id: str, highlight_code: str | None = None) -> None:
    """A trajectory's steps, its codes' evidence steps marked, the coders' rationales beside the humans' labels."""
    steps = read("trajectory", trajectory_id=trajectory_id)
    codes = read("trajectory_codes", trajectory_id=trajectory_id)
    labels = read("trajectory_labels", trajectory_id=trajectory_id)
    st.subheader(f"Trajectory `{trajectory_id}`")
    if codes.empty:
        st.caption("No coder found anything in this attempt.")
    else:
        human = labels.pivot_table(index="code", columns="annotator", values="present", aggfunc="first") \
            if not labels.empty else pd.DataFrame()
        view = codes.copy()
        for annotator in human.columns:
            view[f"label: {annotator}"] = view["code"].map(human[annotator]).map({True: "present", False: "absent"})
        view["evidence_steps"] = view["evidence_steps"].map(lambda s: ", ".join(str(x) for x in (s if s is not None else [])))
        table(view, f"codes-{trajectory_id}", "Codes with their evidence and rationale, beside human labels")
    evidence: dict[int, list[str]] = {}
    for row in queries.records(codes):
        if highlight_code is None or row["code"] == highlight_code:
            for step in row["evidence_steps"] or []:
                evidence.setdefault(int(step), []).append(f"{row['coder']}:{row['code']}")
    st.caption(f"{len(steps)} steps; evidence steps are marked.")
    for row in queries.records(steps.head(300)):
        marked = evidence.get(int(row["step_idx"]))
        head = f"**#{row['step_idx']}** · {row['source']} · `{row['action']}`"
        if row.get("tool_name"):
            head += f" · {row['tool_name']}"
        if row.get("exit_code") is not None:
            head += f" · exit {row['exit_code']}"
        body = row.get("command") or row.get("path") or row.get("message") or ""
        with st.container(border=True):
            if marked:
                st.markdown(f":orange-background[**evidence** for {', '.join(marked)}] {head}")
            else:
                st.markdown(head)
            if body:
                st.code(str(body)[:2000], language="bash" if row.get("command") else None)
            if row.get("output"):
                st.text(str(row["output"])[:1500])
