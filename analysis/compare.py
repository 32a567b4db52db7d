"""Two systems side by side, task by task: `curriculab compare A B` and the dashboard's Compare page.

A system is an agent driving a model, named `AGENT · MODEL` (the unit a leaderboard compares). Two
systems may differ in both, or share the model (the same model under two agents) or the agent (the
same agent under two models). The comparison holds:

- **rates**: each system's judged pass rate (passes over attempts with a verdict) with its Wilson
  95% interval, and the leaderboard's accuracy (every trial counts, an infrastructure error is a
  failure);
- **difference**: pass rate A − B over the tasks both attempted, with a 95% interval that resamples
  tasks (a task's attempts are not independent: `stats.cluster_bootstrap_difference`), and whether
  the interval leaves out zero;
- **failures**: how failures ended (ran out of time, another fault of the agent's own, at the tests'
  verdict) and the failure codes found on them, per coder;
- **time**: the agent's own time against the tasks' limits (`queries.time_use`);
- **tasks**: every task either attempted, with each system's attempts, passes and time, and which
  solved it at least once: `A only`, `B only`, `both`, `neither`, or tried by one system alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from curriculab.analysis import queries
from curriculab.analysis.queries.core import Scope
from curriculab.analysis.stats import cluster_bootstrap_difference, wilson_interval
from curriculab.analysis.store import Store
from curriculab.trajectory.errors import InputError
from curriculab.trajectory.model_names import canonical_model

SEPARATOR = " · "
"""Between a system's agent and model in its name (`queries` spells systems this way)."""
VERDICTS = ("A only", "B only", "both", "neither", "A tried alone", "B tried alone")
"""`tasks.verdict` values: which system solved the task at least once, or which alone tried it."""


class UnknownSystem(InputError):
    """A system name that names no system in the store."""


@dataclass
class Comparison:
    """Two systems compared; every part as plain rows (JSON-ready)."""

    a: str
    b: str
    rates: list[dict[str, Any]]
    difference: dict[str, Any]
    endings: list[dict[str, Any]]
    codes: list[dict[str, Any]]
    time: list[dict[str, Any]]
    tasks: list[dict[str, Any]]
    counts: dict[str, int] = field(default_factory=dict)
    """Tasks by verdict."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def known_systems(store: Store, scope: Scope | None = None) -> list[str]:
    """Every system with an attempt, by name (`AGENT · MODEL`), sorted."""
    return sorted({row["system"] for row in queries.system_tasks.records(store, scope=scope)})


def resolve(
    store: Store, name: str, *, agent: str | None = None, model: str | None = None, known: list[str] | None = None
) -> str:
    """The system `name` names: a full `AGENT · MODEL` (its parts may be separated by `·`, `/` or
    `@` too), or, with `agent` (`model`) given, the model (agent) that system runs. Case and spaces
    around the separator do not matter; an unknown name is UnknownSystem listing the known ones.
    `known`: the systems' names when the caller has them (`known_systems`)."""
    systems = known if known is not None else known_systems(store)
    if agent is not None:
        name = f"{agent}{SEPARATOR}{name}"
    elif model is not None:
        name = f"{name}{SEPARATOR}{model}"
    wanted = _key(name)
    found = [s for s in systems if _key(s) == wanted]
    if not found and "|" in wanted:  # a model named as the source names it (`claude-4-sonnet`)
        agent_part, _, model_part = wanted.partition("|")
        canonical = (canonical_model(model_part) or model_part).lower()
        found = [s for s in systems if _key(s) == f"{agent_part}|{canonical}"]
    if len(found) == 1:
        return found[0]
    listed = "; ".join(systems) if systems else "none (ingest runs first)"
    raise UnknownSystem(f"no system {name!r} in the store. Name one of: {listed}")


def _key(name: str) -> str:
    for mark in ("·", "/", "@"):
        if mark in name:
            agent, _, model = name.partition(mark)
            return f"{agent.strip().lower()}|{model.strip().lower()}"
    return name.strip().lower()


def compare(store: Store, a: str, b: str, *, scope: Scope | None = None) -> Comparison:
    """Systems `a` and `b` (exact names, as `resolve` returns them) side by side."""
    if a == b:
        raise InputError(f"both sides are {a!r}. Name two different systems")
    every = queries.system_tasks.records(store, scope=scope)
    known = sorted({r["system"] for r in every})
    for name in (a, b):
        if name not in known:
            raise UnknownSystem(f"no system {name!r} in the store. Name one of: {'; '.join(known) or 'none'}")
    cells = [r for r in every if r["system"] in (a, b)]
    leaderboard = {}  # a system's leaderboard accuracy; none where agent versions split it into several rows
    for row in queries.systems.records(store, scope=scope):
        name = _system(row)
        leaderboard[name] = None if name in leaderboard else row["leaderboard_accuracy"]
    rates = []
    for name in (a, b):
        own = [c for c in cells if c["system"] == name]
        attempts, passes = sum(c["attempts"] for c in own), sum(c["passes"] for c in own)
        trials = sum(c["trials"] for c in own)
        low, high = wilson_interval(passes, attempts)
        rates.append(
            {
                "system": name,
                "tasks": len(own),
                "trials": trials,
                "attempts": attempts,
                "passes": passes,
                "pass_rate": passes / attempts if attempts else None,
                "ci_low": low if attempts else None,
                "ci_high": high if attempts else None,
                "leaderboard_accuracy": leaderboard.get(name),
                "tasks_solved": sum(1 for c in own if c["passes"] > 0),
            }
        )
    tasks = _task_diff(cells, a, b)
    shared = [t for t in tasks if t["verdict"] in ("A only", "B only", "both", "neither")]
    difference = _difference(shared)
    side = {a: 0, b: 1}  # A's rows first
    endings = sorted(
        (r for r in queries.failure_endings.records(store, scope=scope) if r["system"] in side),
        key=lambda r: side[r["system"]],
    )
    codes = sorted(
        (r for r in queries.system_failure_codes.records(store, scope=scope) if r["system"] in side),
        key=lambda r: side[r["system"]],
    )
    time = sorted(
        (r for r in queries.time_use.records(store, scope=scope) if r["system"] in side),
        key=lambda r: side[r["system"]],
    )
    counts = {verdict: sum(1 for t in tasks if t["verdict"] == verdict) for verdict in VERDICTS}
    return Comparison(a, b, rates, difference, endings, codes, time, tasks, counts)


def _system(row: dict[str, Any]) -> str:
    return f"{row['agent']}{SEPARATOR}{row['model']}"


def _task_diff(cells: list[dict[str, Any]], a: str, b: str) -> list[dict[str, Any]]:
    by_task: dict[str, dict[str, dict[str, Any]]] = {}
    for cell in cells:
        by_task.setdefault(cell["task_id"], {})["a" if cell["system"] == a else "b"] = cell
    rows = []
    for task_id, sides in sorted(by_task.items()):
        row: dict[str, Any] = {"task_id": task_id}
        for side in ("a", "b"):
            mine = sides.get(side)
            for column in ("trials", "attempts", "passes", "timed_out"):
                row[f"{side}_{column}"] = mine[column] if mine else 0
            row[f"{side}_median_s"] = mine["median_s"] if mine else None
        known = next(iter(sides.values()))
        row["limit_s"], row["category"] = known["limit_s"], known["category"]
        tried_a, tried_b = row["a_trials"] > 0, row["b_trials"] > 0
        solved_a, solved_b = row["a_passes"] > 0, row["b_passes"] > 0
        if not (tried_a and tried_b):
            row["verdict"] = "A tried alone" if tried_a else "B tried alone"
        else:
            row["verdict"] = {(True, False): "A only", (False, True): "B only", (True, True): "both"}.get(
                (solved_a, solved_b), "neither"
            )
        rows.append(row)
    order = {verdict: k for k, verdict in enumerate(VERDICTS)}
    return sorted(rows, key=lambda r: (order[r["verdict"]], r["task_id"]))


def _difference(shared: list[dict[str, Any]]) -> dict[str, Any]:
    ka, na = [t["a_passes"] for t in shared], [t["a_attempts"] for t in shared]
    kb, nb = [t["b_passes"] for t in shared], [t["b_attempts"] for t in shared]
    if not shared or not sum(na) or not sum(nb):
        return {"tasks": len(shared), "difference": None, "ci_low": None, "ci_high": None, "distinguishable": False}
    diff = sum(ka) / sum(na) - sum(kb) / sum(nb)
    low, high = cluster_bootstrap_difference(ka, na, kb, nb)
    return {
        "tasks": len(shared),
        "a_pass_rate": sum(ka) / sum(na),
        "b_pass_rate": sum(kb) / sum(nb),
        "difference": diff,
        "ci_low": low,
        "ci_high": high,
        "distinguishable": low is not None and high is not None and (low > 0 or high < 0),
        "method": "pass rate A − B over the tasks both attempted; 95% interval resampling tasks",
    }


def to_markdown(c: Comparison) -> str:
    """The comparison as Markdown: rates, the difference, failures, time and the task-level diff."""
    out = [f"# {c.a} vs {c.b}", "", "A = " + c.a + ", B = " + c.b, "", "## Pass rates", ""]
    out += [
        "| | system | tasks | attempts | passes | pass rate (95% CI) | leaderboard accuracy |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    for side, r in zip("AB", c.rates):
        out.append(
            f"| {side} | {r['system']} | {r['tasks']} | {r['attempts']} | {r['passes']} | "
            f"{_pct(r['pass_rate'])} ({_pct(r['ci_low'])}–{_pct(r['ci_high'])}) | {_pct(r['leaderboard_accuracy'])} |"
        )
    d = c.difference
    out += ["", "## Difference", ""]
    if d["difference"] is None:
        out.append(f"No task both systems attempted ({d['tasks']} shared): no difference to state.")
    else:
        interval = (
            f"95% CI {_points(d['ci_low'])} to {_points(d['ci_high'])}"
            if d["ci_low"] is not None
            else "no interval (fewer than two shared tasks)"
        )
        verdict = "distinguishable" if d["distinguishable"] else "not distinguishable"
        out.append(
            f"A − B = {_points(d['difference'])} points over the {d['tasks']} tasks both attempted "
            f"({interval}, resampling tasks): {verdict}."
        )
    out += [
        "",
        "## How failures ended",
        "",
        "| system | failures | timed out | other agent fault | at the tests' verdict |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in c.endings:
        out.append(f"| {r['system']} | {r['failures']} | {r['timed_out']} | {r['crashed']} | {r['to_verdict']} |")
    if c.codes:
        out += [
            "",
            "## Failure codes",
            "",
            "| system | coder | code | failures with it | share |",
            "|---|---|---|---:|---:|",
        ]
        for r in c.codes:
            out.append(
                f"| {r['system']} | {r['coder']} | {r['code']} | {r['failures_with_code']} | {_pct(r['share'])} |"
            )
    out += [
        "",
        "## Time",
        "",
        "| system | attempts | clock | median s | p90 s | median share of limit | near limit | timed out |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in c.time:
        out.append(
            f"| {r['system']} | {r['attempts']} | {r['clock'] or '—'} | {_num(r['median_s'])} | {_num(r['p90_s'])} | "
            f"{_pct(r['median_share'])} | {r['near_limit']} | {r['timed_out']} |"
        )
    if any(r["attempts"] and not r["with_limit"] for r in c.time):
        out += [
            "",
            "Time limits unknown for some tasks: import the benchmark's task folders (`curriculab tasks import`).",
        ]
    out += ["", "## Tasks", "", ", ".join(f"{k}: {v}" for k, v in c.counts.items() if v), ""]
    out += [
        "| task | verdict | A passes/attempts | B passes/attempts | A timed out | B timed out |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for t in c.tasks:
        out.append(
            f"| {t['task_id']} | {t['verdict']} | {t['a_passes']}/{t['a_attempts']} | {t['b_passes']}/{t['b_attempts']} | "
            f"{t['a_timed_out']} | {t['b_timed_out']} |"
        )
    return "\n".join(out) + "\n"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _points(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:+.1f}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"
