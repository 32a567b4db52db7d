"""`curriculab report`: where each model fails, how hard tasks really are, what still carries signal.

`build_report` gathers everything as plain data (the `--json` output); `to_markdown` and
`to_html` render it. Harness errors are reported apart and never counted as agent failures.
"""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from itertools import combinations
from typing import Any

from analysis.difficulty import fit_store, held_out_check, signal_efficiency
from analysis.stats import pass_at_k
from analysis.store import Store


def _rows(store: Store, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    columns, rows = store.query(sql, params)
    return [dict(zip(columns, r)) for r in rows]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _fit_is_current(store: Store) -> bool:
    fitted = store.query("select coalesce(sum(n_attempts), 0) from irt_tasks")[1][0][0]
    now = store.query("select count(*) from trajectories where outcome in ('passed', 'failed') and model is not null")[1][0][0]
    return fitted == now and fitted > 0


def build_report(store: Store, model: str | None = None, coder: str = "rules", band: tuple[float, float] = (0.2, 0.8),
                 top: int = 5) -> dict[str, Any]:
    """Everything the report says, as data. Refits difficulty when the store changed since the last fit."""
    only = "and model = ?" if model else ""
    params = [model] if model else []
    overview = _rows(store, f"""select model, attempts, passes, pass_rate, ci_low, ci_high, harness_errors
                                from v_pass_rates where dimension = 'overall' {only} order by pass_rate desc""", params)
    if not overview:
        raise ValueError(f"no attempts{' for model ' + repr(model) if model else ''} in the store. "
                         "Ingest trajectories first, or check the model name with "
                         "`curriculab query \"select distinct model from trajectories\"`")
    reliability = {(r["code"]): r["reliable"] for r in _rows(
        store, "select code, bool_and(reliable) as reliable from code_reliability where coder = ? group by 1", [coder])}
    distribution = _rows(store, f"""select model, code, n, failures, share, ci_low, ci_high from v_failure_distribution
                                    where coder = ? and dimension = 'overall' {only} order by model, share desc""", [coder] + params)
    for row in distribution:
        row["reliable"] = reliability.get(row["code"])  # None: agreement never measured
    by_model: dict[str, list[dict]] = {}
    for row in distribution:
        by_model.setdefault(row["model"], []).append(row)
    top_modes = {m: rows[:top] for m, rows in by_model.items()}

    # A bottleneck ranks first (or within the top two) for every model.
    models_with_failures = [m for m in by_model if by_model[m]]
    bottlenecks = []
    if len(models_with_failures) >= 2:
        for depth in (1, 2):
            common = set.intersection(*({r["code"] for r in by_model[m][:depth]} for m in models_with_failures))
            if common:
                bottlenecks = [{"code": c, "within_top": depth,
                                "shares": {m: next(r["share"] for r in by_model[m] if r["code"] == c) for m in models_with_failures}}
                               for c in sorted(common)]
                break

    by_tier = _rows(store, f"""select model, value as tier, code, n, failures, share, ci_low, ci_high from v_failure_distribution
                               where coder = ? and dimension = 'tier' {only} order by model, tier, share desc""", [coder] + params)
    cooccurrence = _cooccurrence(store, coder, model)

    if not _fit_is_current(store):
        fit_store(store)
    calibration = _rows(store, """select tier_authored, measured_tier, count(*) as tasks from v_task_difficulty
                                  where tier_authored is not null group by all order by all""")
    misplaced = _rows(store, """select task_id, tier_authored, measured_tier, difficulty, difficulty_se, pass_rate, n_attempts
                                from v_task_difficulty where misplaced
                                order by abs(difficulty - (select median(difficulty) from irt_tasks)) desc limit 15""")
    agreement_share = store.query("select avg((not misplaced)::int) from v_task_difficulty where tier_authored is not null")[1][0][0]
    try:
        held = held_out_check(store).__dict__
    except ValueError as exc:
        held = {"error": str(exc)}
    abilities = _rows(store, f"select model, ability, ability_se, pass_rate, n_attempts from irt_models "
                             f"{'where model = ?' if model else ''} order by ability desc", params)
    signal = [r for r in signal_efficiency(store, band) if not model or r["model"] == model]
    pass_k = _pass_at_k(store, model)
    milestones = _rows(store, f"""select model, task_type, milestones_total, first_failed_milestone, attempts
                                  from v_milestone_funnel {'where model = ?' if model else ''}
                                  order by model, task_type, first_failed_milestone nulls last""", params)
    report = {
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "model": model, "coder": coder,
        "band": list(band), "overview": overview, "top_failure_modes": top_modes, "bottlenecks": bottlenecks,
        "failures_by_tier": by_tier, "cooccurrence": cooccurrence, "difficulty": {
            "calibration": calibration, "authored_matches_measured": agreement_share, "misplaced": misplaced,
            "held_out": held, "abilities": abilities},
        "signal": signal, "pass_at_k": pass_k, "milestones": milestones,
        "harness_errors": _rows(store, f"""select model, harness_error, count(*) as attempts from trajectories
                                           where harness_error is not null {only} group by all order by all""", params),
    }
    report["findings"] = _findings(report)
    return report


def _cooccurrence(store: Store, coder: str, model: str | None) -> list[dict[str, Any]]:
    rows = store.query(f"""select f.trajectory_id, list(distinct f.code) from failure_codes f join trajectories t using (trajectory_id)
                           where f.coder = ? and t.outcome = 'failed' and f.code <> 'harness_failure'
                           {'and t.model = ?' if model else ''} group by 1""", [coder] + ([model] if model else []))[1]
    total = len(rows)
    single: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for _, codes in rows:
        for c in codes:
            single[c] = single.get(c, 0) + 1
        for a, b in combinations(sorted(codes), 2):
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
    out = [{"codes": [a, b], "n": n, "lift": (n * total) / (single[a] * single[b])} for (a, b), n in pairs.items()]
    return sorted(out, key=lambda r: -r["n"])[:10]


def _pass_at_k(store: Store, model: str | None) -> list[dict[str, Any]]:
    rows = store.query(f"""select model, task_id, count(*) as n, count(*) filter (outcome = 'passed') as c from trajectories
                           where outcome in ('passed', 'failed') {'and model = ?' if model else ''} group by 1, 2""",
                       [model] if model else [])[1]
    per: dict[str, list[tuple[int, int]]] = {}
    for m, _, n, c in rows:
        per.setdefault(m, []).append((n, c))
    out = []
    for m, cells in sorted(per.items()):
        # k = the usual number of attempts; pass@k only averages tasks with at least k scored attempts
        usual = max(set(n for n, _ in cells), key=[n for n, _ in cells].count)
        entry: dict[str, Any] = {"model": m, "tasks": len(cells)}
        for k in sorted({1, usual}):
            eligible = [(n, c) for n, c in cells if n >= k]
            entry[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible)
            entry[f"tasks@{k}"] = len(eligible)
        out.append(entry)
    return out


def _findings(r: dict[str, Any]) -> list[str]:
    found = []
    rates = r["overview"]
    if len(rates) > 1:
        best, worst = rates[0], rates[-1]
        found.append(f"{best['model']} passes {_pct(best['pass_rate'])} of attempts (95% CI {_pct(best['ci_low'])}–"
                     f"{_pct(best['ci_high'])}); {worst['model']} passes {_pct(worst['pass_rate'])} "
                     f"({_pct(worst['ci_low'])}–{_pct(worst['ci_high'])}).")
    for m, modes in r["top_failure_modes"].items():
        if modes:
            t = modes[0]
            caveat = "" if t["reliable"] else (" (coder agreement not yet measured)" if t["reliable"] is None
                                               else " (coder agreement below threshold: treat with care)")
            found.append(f"{m}: the top failure mode is {t['code']}, in {_pct(t['share'])} of its failed attempts "
                         f"(95% CI {_pct(t['ci_low'])}–{_pct(t['ci_high'])}, {t['n']} of {t['failures']}){caveat}.")
    for b in r["bottlenecks"]:
        where = "the top failure mode" if b["within_top"] == 1 else "in the top two failure modes"
        gap = (rates[0]["pass_rate"] - rates[-1]["pass_rate"]) * 100 if len(rates) > 1 else 0
        found.append(f"Bottleneck: {b['code']} is {where} for every model despite a {gap:.0f}-point gap in pass rate.")
    d = r["difficulty"]
    if d["authored_matches_measured"] is not None:
        found.append(f"Authored tiers match measured difficulty for {_pct(d['authored_matches_measured'])} of tasks; "
                     f"{len(d['misplaced'])} most misplaced are listed.")
    h = d["held_out"]
    if "irt_log_loss" in h:
        found.append(f"Held out: IRT predicts unseen attempts with log-loss {h['irt_log_loss']:.3f} and AUC {h['irt_auc']:.3f}, "
                     f"against {h['baseline_log_loss']:.3f} and {h['baseline_auc']:.3f} for the per-task pass rate "
                     f"({h['held_out']} attempts).")
    for s in r["signal"]:
        found.append(f"{s['model']}: {_pct(s['share_in_band'])} of its tasks are in the {r['band'][0]:.1f}–{r['band'][1]:.1f} "
                     f"band of predicted pass rate; {_pct(s['share_mixed'])} have mixed outcomes (0 < p < 1).")
    for m in sorted({x["model"] for x in r["milestones"]}):
        stops = [x for x in r["milestones"] if x["model"] == m and x["first_failed_milestone"] is not None]
        if stops:
            worst = max(stops, key=lambda x: x["attempts"])
            found.append(f"{m}: most milestone runs stop at milestone {worst['first_failed_milestone']} of "
                         f"{worst['milestones_total']} ({worst['task_type']}).")
    errors = sum(e["attempts"] for e in r["harness_errors"])
    if errors:
        found.append(f"{errors} attempts ended in harness errors; they are reported apart, not as failures.")
    return found


def _md_table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    if not rows:
        return "_none_\n"
    columns = columns or list(rows[0])
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else ("" if v is None else str(v))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def to_markdown(r: dict[str, Any]) -> str:
    parts = [f"# curriculab report{' — ' + r['model'] if r['model'] else ''}", f"_Generated {r['generated_at']}; failure codes from `{r['coder']}`._", "",
             "## Findings", *[f"- {f}" for f in r["findings"]], "", "## Pass rates (harness errors apart)", _md_table(r["overview"]),
             "## Top failure modes (share of failed attempts, Wilson 95% CI)"]
    for m, rows in r["top_failure_modes"].items():
        parts += [f"### {m}", _md_table(rows, ["code", "n", "failures", "share", "ci_low", "ci_high", "reliable"])]
    parts += ["## Bottlenecks", _md_table([{"code": b["code"], "within_top": b["within_top"], **b["shares"]} for b in r["bottlenecks"]]),
              "## Code co-occurrence in failed attempts", _md_table([{"codes": " + ".join(c["codes"]), "n": c["n"], "lift": c["lift"]} for c in r["cooccurrence"]]),
              "## Failure modes by tier", _md_table(r["failures_by_tier"]),
              "## Measured difficulty", "Authored tier × measured tier (tasks):", _md_table(r["difficulty"]["calibration"]),
              "Most misplaced tasks:", _md_table(r["difficulty"]["misplaced"]),
              "Held-out check:", _md_table([r["difficulty"]["held_out"]]), "Model abilities:", _md_table(r["difficulty"]["abilities"]),
              f"## Signal: informative band {r['band'][0]}–{r['band'][1]}", _md_table(r["signal"]), "## pass@k (unbiased)", _md_table(r["pass_at_k"]),
              "## Milestones: first failing milestone", _md_table(r["milestones"]), "## Harness errors", _md_table(r["harness_errors"])]
    return "\n".join(parts)


def to_html(r: dict[str, Any]) -> str:
    """A standalone page: plotly.js is embedded once, so it opens offline."""
    import plotly.graph_objects as go

    figures = []
    ov = r["overview"]
    figures.append(go.Figure(go.Bar(x=[o["model"] for o in ov], y=[o["pass_rate"] for o in ov], error_y={
        "type": "data", "symmetric": False, "array": [o["ci_high"] - o["pass_rate"] for o in ov],
        "arrayminus": [o["pass_rate"] - o["ci_low"] for o in ov]}), layout={"title": "Pass rate (Wilson 95% CI)", "yaxis": {"range": [0, 1]}}))
    failure = go.Figure(layout={"title": "Top failure modes: share of failed attempts", "barmode": "group", "yaxis": {"range": [0, 1]}})
    for m, rows in r["top_failure_modes"].items():
        failure.add_bar(name=m, x=[x["code"] for x in rows], y=[x["share"] for x in rows], error_y={
            "type": "data", "symmetric": False, "array": [x["ci_high"] - x["share"] for x in rows],
            "arrayminus": [x["share"] - x["ci_low"] for x in rows]})
    figures.append(failure)
    cal = r["difficulty"]["calibration"]
    tiers = ["basic", "intermediate", "complex"]
    z = [[next((c["tasks"] for c in cal if c["tier_authored"] == a and c["measured_tier"] == m), 0) for m in tiers] for a in tiers]
    figures.append(go.Figure(go.Heatmap(z=z, x=[f"measured {t}" for t in tiers], y=[f"authored {t}" for t in tiers], text=z,
                                        texttemplate="%{text}", colorscale="Blues"), layout={"title": "Authored vs measured tier (tasks)"}))
    sig = r["signal"]
    figures.append(go.Figure(go.Bar(x=[s["model"] for s in sig], y=[s["share_in_band"] for s in sig]),
                             layout={"title": f"Share of tasks in the {r['band'][0]}–{r['band'][1]} predicted-pass band", "yaxis": {"range": [0, 1]}}))
    charts = "".join(f'<div class="chart">{f.to_html(full_html=False, include_plotlyjs=(i == 0))}</div>' for i, f in enumerate(figures))
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in r["findings"])
    tables = "".join(f"<h2>{html.escape(title)}</h2>{_html_table(rows)}" for title, rows in [
        ("Pass rates", r["overview"]), ("Bottlenecks", [{"code": b["code"], **b["shares"]} for b in r["bottlenecks"]]),
        ("Most misplaced tasks", r["difficulty"]["misplaced"]), ("Held-out check", [r["difficulty"]["held_out"]]),
        ("Signal", r["signal"]), ("pass@k", r["pass_at_k"]), ("Milestones", r["milestones"]), ("Harness errors", r["harness_errors"])])
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>curriculab report</title>"
            f"<style>body{{font-family:sans-serif;max-width:1100px;margin:auto}}table{{border-collapse:collapse}}"
            f"td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px}}</style></head><body>"
            f"<h1>curriculab report{(' — ' + html.escape(r['model'])) if r['model'] else ''}</h1>"
            f"<p>Generated {r['generated_at']}; failure codes from <code>{html.escape(r['coder'])}</code>.</p>"
            f"<h2>Findings</h2><ul>{findings}</ul>{charts}{tables}"
            f"<script type='application/json' id='report-data'>{html.escape(json.dumps(r, default=str))}</script></body></html>")


def _html_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    columns = list(rows[0])
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else ("" if v is None else html.escape(str(v)))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{fmt(row.get(c))}</td>" for c in columns) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
