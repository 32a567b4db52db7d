"""The trajectory viewer: a header (task, system, outcome, reward, tests, harness error), the
codes and their evidence near the top with links to the steps, then the steps a page at a time,
outputs and harness steps collapsed, edits with their content or diff, evidence steps highlighted."""

from __future__ import annotations

import difflib
import json
from typing import Any

import pandas as pd
import streamlit as st

from curriculab.analysis import queries
from curriculab.dashboard.common import read, table
from curriculab.dashboard.terminal import show_terminal
from curriculab.trajectory.vocabulary import AGENT_FAULTS

STEPS_PER_PAGE = 100
"""Steps drawn at once: a 1,000-step trajectory stays fast; the range selector shows the rest."""
OUTPUT_CHARS = 1500
"""Output shown per step before a marker says how much was cut."""
_HIGHLIGHT_CSS = """<style>
[class*="st-key-evidence-"] {border: 2px solid #f58518 !important; background: rgba(245, 133, 24, 0.08);}
</style>"""
_AGENT = "agent"
_EDIT_KEYS = ("old_str", "new_str", "old_string", "new_string", "file_text", "content", "patch", "diff", "input")


def _cut(text: str, limit: int = OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [{len(text) - limit:,} more characters cut here; the whole output is in the steps table]"


def _find(value: Any, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The first dict (depth first) inside a step's source record holding any of `keys`."""
    if isinstance(value, dict):
        if any(key in value for key in keys):
            return value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = _find(item, keys)
            if found is not None:
                return found
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return _find(json.loads(value), keys)
        except ValueError:
            return None
    return None


def edit_content(step: dict[str, Any]) -> tuple[str, str] | None:
    """What an edit step changed, as (text, language): a unified diff of old and new strings
    (OpenHands' old_str/new_str, Claude Code's and Gemini CLI's old_string/new_string), a patch
    (Codex's apply_patch input), or the content written; None when the record holds none of these
    (a shell edit shows its command)."""
    if not step.get("edit_raw"):
        return None
    try:
        raw = json.loads(step["edit_raw"])
    except ValueError:
        return None
    args = _find(raw, _EDIT_KEYS)
    if args is None:
        return None
    path = step.get("path") or args.get("path") or args.get("file_path") or "file"
    for old_key, new_key in (("old_str", "new_str"), ("old_string", "new_string")):
        if old_key in args or new_key in args:
            old, new = str(args.get(old_key) or ""), str(args.get(new_key) or "")
            name = str(path).lstrip("/")
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{name}", f"b/{name}", lineterm="")
            return "\n".join(diff), "diff"
    for key in ("patch", "diff", "input"):
        if isinstance(args.get(key), str) and (key != "input" or "*** Begin Patch" in args[key]):
            return args[key], "diff"
    written = args.get("file_text", args.get("content"))
    return (str(written), "text") if written is not None else None


def _fault_words(summary: dict[str, Any]) -> tuple[str, str]:
    """(text, help) for the fault a record names, as the outcomes policy reads it: an agent's own
    fault (a timeout, a crash) is the agent's, not the harness's, and a passed attempt keeps its pass."""
    fault = summary["harness_error"]
    if fault in AGENT_FAULTS:
        after = "it passed all the same" if summary["outcome"] == "passed" else "counted as its failure"
        return (
            f"**Agent fault** `{fault}` ({after})",
            summary["exception_type"] or "The agent's own fault (it ran out of time or crashed): not a harness error.",
        )
    return (
        f"**Harness error** `{fault or 'none'}`",
        summary["exception_type"] or "Faults outside the agent; an attempt without a verdict is left out of pass rates",
    )


def _header(summary: dict[str, Any]) -> None:
    st.subheader(f"{summary['task_id']} · attempt `{summary['trajectory_id']}`")
    # long values (a system's name, a harness error) as text, never cut to fit a metric's column
    st.markdown(f"**System** {summary['agent'] or '(unknown)'} · {summary['model']}")
    columns = st.columns([1, 1, 1, 1, 2])
    columns[0].metric("Outcome", summary["outcome"] or "–")
    columns[1].metric("Reward", "–" if summary["reward"] is None else f"{summary['reward']:.2f}")
    columns[2].metric("Tests passed", f"{summary['tests_passed']}/{summary['tests']}" if summary["tests"] else "–")
    columns[3].metric("Steps", summary["n_steps"] or 0)
    fault, hint = _fault_words(summary)
    columns[4].markdown(fault, help=hint)
    details = [f"run `{summary['run_id']}`", f"authored tier {summary['tier'] or '(none)'}"]
    if summary["milestones_total"]:
        details.append(f"milestones {summary['milestones_passed'] or 0}/{summary['milestones_total']} passed")
    if summary["input_tokens"] or summary["output_tokens"]:
        details.append(f"{summary['input_tokens'] or 0:,} tokens in / {summary['output_tokens'] or 0:,} out")
    if summary["cost_usd"]:
        details.append(f"${summary['cost_usd']:.4f}")
    if summary["source_path"]:
        details.append(f"read from `{summary['source_path']}`")
    st.caption(" · ".join(details))


def no_codes_caption(coders: list[dict[str, Any]]) -> str:
    """What to say of an attempt with no code: nobody coded it, every coder abstained (and why), or
    the coders judged and found nothing."""
    if not coders:
        return "No coder has coded this attempt yet (`curriculab code`)."

    def said(c: dict[str, Any]) -> str:
        abstained = f"{c['not_applicable']} not applicable ({c['reason'] or 'no reason given'})"
        return f"{c['coder']}: {c['absent']} absent, {abstained}" if c["absent"] else f"{c['coder']}: {abstained}"

    if not any(c["absent"] for c in coders):
        return f"Every coder abstained on this attempt ({'; '.join(said(c) for c in coders)})."
    return f"No coder found anything in this attempt ({'; '.join(said(c) for c in coders)})."


def _evidence(trajectory_id: str, codes: pd.DataFrame, highlight_code: str | None) -> dict[int, list[str]]:
    """The codes with their rationale and links to their evidence steps; returns step → codes citing it."""
    labels = read("trajectory_labels", trajectory_id=trajectory_id)
    evidence: dict[int, list[str]] = {}
    if codes.empty:
        st.caption(no_codes_caption(queries.records(read("trajectory_coders", trajectory_id=trajectory_id))))
        return evidence
    for row in queries.records(codes):
        steps = [int(s) for s in row["evidence_steps"] or []]
        if highlight_code is None or row["code"] == highlight_code:
            for step in steps:
                evidence.setdefault(step, []).append(f"{row['coder']}:{row['code']}")
        links = ", ".join(f"[#{s}](#step-{s})" for s in steps) or "no step cited"
        mark = "**" if row["code"] == highlight_code else ""
        st.markdown(f"- {mark}`{row['coder']}:{row['code']}`{mark} — evidence {links}. {row['rationale'] or ''}")
    human = (
        labels.pivot_table(index="code", columns="annotator", values="present", aggfunc="first")
        if not labels.empty
        else pd.DataFrame()
    )
    view = codes.copy()
    for annotator in human.columns:
        view[f"label: {annotator}"] = view["code"].map(human[annotator]).map({True: "present", False: "absent"})
    view["evidence_steps"] = view["evidence_steps"].map(
        lambda s: ", ".join(str(x) for x in (s if s is not None else []))
    )
    with st.expander("Codes beside human labels", expanded=False):
        table(view, f"codes-{trajectory_id}")
    return evidence


def _step(row: dict[str, Any], marked: list[str] | None, key: str) -> None:
    index = int(row["step_idx"])
    st.html(f'<div id="step-{index}"></div>')
    head = f"**#{index}** · {row['source']} · `{row['action'] or 'no action'}`"
    if row.get("tool_name"):
        head += f" · {row['tool_name']}"
    if row.get("path"):
        head += f" · `{row['path']}`"
    output = str(row.get("output") or "")
    if row.get("exit_code") is not None:
        head += f" · exit {row['exit_code']}"
    elif output and row.get("call_exit_code") is not None:  # one status for a whole command line
        head += f" · the line exited {int(row['call_exit_code'])}"
    if row["source"] != _AGENT and not marked:  # the harness's prompts and keystrokes: one quiet line
        text = str(row.get("message") or row.get("command") or output)
        with st.expander(f"#{index} · {row['source']} · {len(text):,} characters", expanded=False):
            st.text(_cut(text))
        return
    with st.container(border=True, key=f"evidence-{key}-{index}" if marked else f"step-{key}-{index}"):
        st.markdown(f":orange-background[**evidence** for {', '.join(marked)}] {head}" if marked else head)
        if row.get("message") and row["action"] in (None, "message", "complete"):
            st.markdown(_cut(str(row["message"])))
        edit = edit_content(row) if row["action"] == "edit" else None
        if edit is not None:
            st.code(_cut(edit[0], 4000), language=edit[1])
        elif row.get("command"):
            st.code(_cut(str(row["command"]), 4000), language="bash")
        if output:
            cut = " (cut at ingest)" if row.get("output_truncated") else ""
            with st.expander(f"output · {len(output):,} characters{cut}", expanded=bool(marked)):
                st.text(_cut(output))


def show_trajectory(trajectory_id: str, highlight_code: str | None = None, key: str = "viewer") -> None:
    """A trajectory's header, tests, codes with their evidence, and steps (evidence steps highlighted)."""
    summary = read("trajectory_summary", trajectory_id=trajectory_id)
    _header(summary)
    show_terminal(trajectory_id)
    tests = read("trajectory_tests", trajectory_id=trajectory_id)
    if not tests.empty:
        with st.expander(f"Tests: {summary['tests_passed']} of {summary['tests']} passed", expanded=False):
            table(tests, f"tests-{trajectory_id}")
    codes = read("trajectory_codes", trajectory_id=trajectory_id)
    evidence = _evidence(trajectory_id, codes, highlight_code)
    steps = read("trajectory", trajectory_id=trajectory_id)
    st.markdown(_HIGHLIGHT_CSS, unsafe_allow_html=True)
    if steps.empty:
        st.info("No steps were logged for this attempt (an installed agent records only its verdict).")
        return
    shown = steps
    if len(steps) > STEPS_PER_PAGE:
        first = min(evidence) if evidence else int(steps["step_idx"].iloc[0])
        ranges = [(start, min(start + STEPS_PER_PAGE, len(steps))) for start in range(0, len(steps), STEPS_PER_PAGE)]
        position = int((steps["step_idx"] < first).sum())
        default = next(i for i, (a, b) in enumerate(ranges) if a <= position < b)
        chosen = st.selectbox(
            f"{len(steps):,} steps: {STEPS_PER_PAGE} are drawn at a time",
            range(len(ranges)),
            index=default,
            key=f"{key}_range",
            format_func=lambda i: f"steps {ranges[i][0] + 1}–{ranges[i][1]}",
        )
        st.caption(
            f"Showing steps {ranges[chosen][0] + 1}–{ranges[chosen][1]} of {len(steps):,}; evidence steps: "
            + (", ".join(f"#{s}" for s in sorted(evidence)) or "none")
        )
        shown = steps.iloc[ranges[chosen][0] : ranges[chosen][1]]
    else:
        st.caption(f"{len(steps)} steps; evidence steps are highlighted; harness steps and outputs are collapsed.")
    for row in queries.records(shown):
        _step(row, evidence.get(int(row["step_idx"])), key)
