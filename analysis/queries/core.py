"""What every read shares: the `Scope` of the dashboard's filters, the `SqlRead` decorator, the
filter helpers, and the doors for one read from outside (`read_from`, `select_from`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec

from curriculab.analysis.store import QueryResult, Store

if TYPE_CHECKING:  # reads return DataFrames, but DuckDB imports pandas only when one is made:
    import pandas as pd  # ingest's readers import the read API and never make one

SLICES = ("overall", "task", "tier", "task_type", "language")
"""Dimensions `pass_rates` can slice by."""
COVERAGE_MIN = 0.5
"""A failure share is acted on (stated by the report, targeted by the planner) only where the coder
could judge at least this share of the failures (`coverage` of `failure_distribution`)."""
TRAINING_AGENT = "curriculab-grpo"
"""The agent name of a GRPO training run's rollouts: their attempts are training, not evaluation."""
TRAINING_RUN = "(coalesce({agent}, '') = ? or {run_id} in (select run_id from training_metrics))"
"""SQL true for a training run's attempts, given the run's agent and run_id columns (one parameter,
`TRAINING_AGENT`): GRPO rollouts, and any run that logged training metrics (an agentic run's
episodes are stored under the agent that acted, `curriculab-terminal`, as its evaluations are)."""
TIME_BOUND = 0.5
"""Share of failures that ran out of time from which they are read as time (the report's findings,
the planner's reasons), not as the tests' codes say: half or more. A never-solved task whose attempts
ran out of time this often is time-bound (`task_health`), not possibly broken."""
KINDS = ("evaluation", "training", "all")
"""Which attempts a `Scope` covers: evaluation runs, training rollouts, or both."""


@dataclass(frozen=True)
class Scope:
    """Which attempts a view covers: the dashboard's filters, one set for every page.

    Every field is optional (None: no filter) except `kind`, which keeps training rollouts out of
    evaluation views unless asked for.
    """

    agent: str | None = None
    """The run's agent (`runs.agent`), e.g. `terminus-2`."""
    model: str | None = None
    """The canonical model name (`trajectories.model`)."""
    run_id: str | None = None
    """One run."""
    task_type: str | None = None
    """The task's type; `(none)` selects tasks without one."""
    language: str | None = None
    """The task's language; `(none)` selects tasks without one."""
    tier: str | None = None
    """The task's authored tier; `(none)` selects tasks without one."""
    kind: str = "evaluation"
    """evaluation (runs that are not training), training (training runs' rollouts and episodes:
    `TRAINING_RUN`) or all."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def active(self) -> dict[str, str]:
        """The filters set, by field name (`kind` when it is not `all`)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) is not None and not (f.name == "kind" and self.kind == "all")
        }

    def clause(self, alias: str) -> tuple[str, list[Any]]:
        """`(<alias>.trajectory_id in (...))` selecting the scope's attempts, and its parameters;
        `true` when the scope covers everything."""
        conditions, params = [], []
        for name, column in (
            ("agent", "sr.agent"),
            ("model", "st.model"),
            ("run_id", "st.run_id"),
            ("task_type", "coalesce(sk.task_type, '(none)')"),
            ("language", "coalesce(sk.language, '(none)')"),
            ("tier", "coalesce(sk.tier_authored, '(none)')"),
        ):
            value = getattr(self, name)
            if value is not None:
                conditions.append(f"{column} = ?")
                params.append(value)
        if self.kind != "all":
            training = TRAINING_RUN.format(agent="sr.agent", run_id="st.run_id")
            conditions.append(f"not {training}" if self.kind == "evaluation" else training)
            params.append(TRAINING_AGENT)
        if not conditions:
            return "true", []
        return (
            f"({alias}.trajectory_id in (select st.trajectory_id from trajectories st "
            f"left join runs sr on sr.run_id = st.run_id left join tasks sk on sk.task_id = st.task_id "
            f"where {' and '.join(conditions)}))"
        ), params


EVERYTHING = Scope(kind="all")
"""A scope with no filter."""


def read_from(
    path: str | Path, read: Callable[..., Any], *, wait_s: float | None = None, **kwargs: Any
) -> tuple[Any, bool]:
    """Open the store at `path` read-only for one read: `read(store, **kwargs)` (a function of this
    module, or another read such as `difficulty.held_out_check`), and whether opening had to wait for
    a writer (what was read may then be partial). A missing store is StoreMissing, a held one
    StoreBusy once `wait_s` has passed."""
    with Store(path, read_only=True, create=False, wait_s=wait_s) as store:
        return read(store, **kwargs), store.waited_for_writer


def select_from(
    path: str | Path,
    sql: str,
    *,
    max_rows: int | None = None,
    timeout_s: float | None = None,
    wait_s: float | None = None,
) -> QueryResult:
    """One SELECT from outside (an analyst's console) on a sealed, read-only open of `path`: no
    files, network, extensions or settings; anything else is QueryRejected."""
    with Store(path, read_only=True, create=False, sealed=True, wait_s=wait_s) as store:
        return store.query_one_select(sql, max_rows=max_rows, timeout_s=timeout_s)


Statement = tuple[str, list[Any]]
"""One SQL statement and its parameters, as a `SqlRead` builds it."""

P = ParamSpec("P")


class SqlRead(Generic[P]):
    """A read that is one SQL statement. The decorated function takes the store and filters and
    returns the statement and its parameters (a `Statement`); called, the read returns a
    DataFrame, and `.records(store, ...)` returns the same rows as plain dicts straight from DuckDB,
    without pandas (importing it and building frames is a large share of a report process's time,
    bench/RESULTS.md "Report"). Integer columns with NULLs come back as ints there, where a frame
    holds floats."""

    def __init__(self, build: Callable[Concatenate[Store, P], Statement]):
        functools.update_wrapper(self, build)
        self._build = build

    def __call__(self, store: Store, *args: P.args, **kwargs: P.kwargs) -> pd.DataFrame:
        return store.frame(*self._build(store, *args, **kwargs))

    def records(self, store: Store, *args: P.args, **kwargs: P.kwargs) -> list[dict[str, Any]]:
        return _as_dicts(*store.query(*self.statement(store, *args, **kwargs)))

    def statement(self, store: Store, *args: P.args, **kwargs: P.kwargs) -> Statement:
        """The SQL and parameters this read runs with these filters (for `records_together`)."""
        return self._build(store, *args, **kwargs)


def records_together(
    store: Store, reads: dict[str, tuple[SqlRead[...], dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """`read.records(store, **filters)` for each named (read, filters), run side by side
    (`Store.query_many`): the report's two dozen small reads take about half as long on two cores."""
    names = list(reads)
    results = store.query_many([read.statement(store, **filters) for read, filters in reads.values()])
    return {name: _as_dicts(*result) for name, result in zip(names, results)}


def _as_dicts(columns: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row)) for row in rows]


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame's rows as plain dicts: numpy scalars and arrays as Python values, missing as None."""
    names = [str(name) for name in frame.columns]
    # by column: faster than row by row
    columns = [[_plain(v) for v in frame.iloc[:, k].tolist()] for k in range(len(names))]
    return [dict(zip(names, row)) for row in zip(*columns)]


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy scalars and arrays (list columns)
    if isinstance(value, list):  # a list of structs holds dicts whose lists are arrays again
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, str) or value is None:
        return value
    import pandas as pd

    return None if pd.isna(value) else value


def _where(columns: dict[str, str], *, after_where: bool = False, **filters: Any) -> tuple[str, list[Any]]:
    """` where a = ? and b = ?` for the filters that are set (` and a = ? ...` with `after_where`,
    for a query that already has a condition); `columns` maps filter to column."""
    clauses, params = [], []
    for name, value in filters.items():
        if value is None:
            continue
        if name not in columns:
            raise TypeError(f"unknown filter {name!r}; this query takes {', '.join(sorted(columns))}")
        clauses.append(f"{columns[name]} = ?")
        params.append(value)
    lead = " and " if after_where else " where "
    return (lead + " and ".join(clauses) if clauses else ""), params


def _and_scope(where: str, params: list[Any], scope: Scope | None, alias: str) -> tuple[str, list[Any]]:
    """`where` (from `_where`) narrowed to `scope`'s attempts."""
    if scope is None:
        return where, params
    clause, extra = scope.clause(alias)
    if clause == "true":
        return where, params
    return (f"{where} and {clause}" if where else f" where {clause}"), [*params, *extra]


_SYSTEM = "coalesce(r.agent, '(unknown)') || ' · ' || {model}"
"""A system's display name: agent · model (the unit a leaderboard compares)."""
