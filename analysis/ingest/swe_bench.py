"""SWE-bench verdicts for SWE-agent and mini-swe-agent trajectories, wherever a run keeps them.

A SWE-bench submission (the layout of SWE-bench's experiments repository, which most systems
publish) is a folder holding `trajs/<instance>/<instance>.traj.json` (or `trajs/<instance>.traj`),
`logs/<instance>/report.json` (`{instance: {resolved, tests_status: {FAIL_TO_PASS, PASS_TO_PASS,
…: {success: [...], failure: [...]}}}}`, or the instance's entry alone as sb-cli publishes it), `results/results.json` (`{resolved: [...], no_generation:
[...], no_logs: [...]}`: an instance not resolved is not, whatever other list it is in) and
`metadata.yaml`; some publish `results.json` beside `trajs/`, and some write it with trailing commas
(not JSON: read all the same, with a warning). A run folder of SWE-agent's own keeps
`results.json` or `report.json` with `resolved_ids`; mini-swe-agent's examples keep `report.json`
beside the trajectory. The verdict is read from the first that speaks of the instance, in the order:
the instance's report (beside the file, then under `logs/`), then a results file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from curriculab.analysis.issues import Issue, make_issue
from curriculab.trajectory.model import TestResult

TRAJS = "trajs"


class Verdict(NamedTuple):
    resolved: bool
    tests: list[TestResult]
    source: str
    """The file the verdict was read from."""


def run_dir(path: Path, instance_id: str) -> Path:
    """The folder that is a trajectory's run: the submission above `trajs/` in SWE-bench's layout,
    else the folder holding the trajectory (or its instance's folder)."""
    parent = path.parent.parent if path.parent.name == instance_id else path.parent
    return parent.parent if parent.name == TRAJS and parent.parent != parent else parent


def verdict(path: Path, instance_id: str, source_format: str, issues: list[Issue]) -> Verdict | None:
    """The instance's SWE-bench verdict and per-test results, None where no file speaks of it. A file
    that cannot be read as what it should be is a warning in `issues`: the trajectory lands without it."""
    run = run_dir(path, instance_id)
    for report in (path.parent / "report.json", run / "logs" / instance_id / "report.json"):
        doc = _document(report, source_format, instance_id, issues)
        if doc is None or _lists_verdicts(doc):  # a run's results file, read below
            continue
        found = _instance_report(doc, instance_id)
        if isinstance(found, Verdict):
            return found._replace(source=str(report))
        issues.append(_not_a(report, found, instance_id, source_format))
    for results in (run / "results" / "results.json", run / "results.json", run / "report.json"):
        doc = _document(results, source_format, instance_id, issues)
        if isinstance(doc, dict):
            listed = doc.get("resolved", doc.get("resolved_ids"))
            if isinstance(listed, list):
                return Verdict(instance_id in {str(i) for i in listed}, [], str(results))
    return None


def _lists_verdicts(doc: Any) -> bool:
    return isinstance(doc, dict) and (isinstance(doc.get("resolved"), list) or "resolved_ids" in doc)


def _instance_report(doc: Any, instance_id: str) -> Verdict | str:
    """SWE-bench's report of one instance, or why `doc` is not one: keyed by the instance, as the
    harness writes it, or the instance's entry alone, as sb-cli's reports are published."""
    entry = doc.get(instance_id, doc if "tests_status" in doc else None) if isinstance(doc, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("resolved"), bool):
        return f"no `{instance_id}` entry with a true/false `resolved`"
    tests: dict[str, TestResult] = {}
    groups = entry.get("tests_status") or {}
    if not isinstance(groups, dict):
        return "`tests_status` is not an object"
    for group, outcomes in groups.items():
        if not isinstance(outcomes, dict):
            return f"`tests_status.{group}` is not an object of success and failure lists"
        for status, passed in (("success", True), ("failure", False)):
            for test_id in outcomes.get(status) or []:
                # a test in both groups is counted once, its failure kept
                if str(test_id) not in tests or not passed:
                    tests[str(test_id)] = TestResult(
                        test_id=str(test_id), passed=passed, status="ok" if passed else "failed", detail=group
                    )
    return Verdict(entry["resolved"], list(tests.values()), "")


_TRAILING_COMMA = re.compile(rb",(\s*[\]}])")


def _document(path: Path, source_format: str, instance_id: str, issues: list[Issue]) -> Any:
    """A verdict file's JSON (None where there is no such file): one with trailing commas, as some
    submissions publish, is read without them, and named in a warning; one that is not JSON even so
    is named in a warning too, and gives nothing."""
    parsed = _parsed(str(path))
    if parsed is None:
        return None
    doc, problem = parsed
    if problem:
        issues.append(
            make_issue(
                path,
                problem,
                "Fix the file (JSON allows no trailing comma before ] or })",
                record=instance_id,
                field=path.name,
                severity="warning",
                source_format=source_format,
            )
        )
    return doc


def _parsed(path: str) -> tuple[Any, str] | None:
    """(document, problem) of a file, read once per version of it (every trajectory of a submission
    asks for the same results file); None where there is no file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    key = (path, info.st_size, info.st_mtime_ns)
    if key not in _PARSED:
        if len(_PARSED) > 256:
            _PARSED.clear()
        _PARSED[key] = _parse(path)
    return _PARSED[key]


_PARSED: dict[tuple[str, int, int], tuple[Any, str] | None] = {}


def _parse(path: str) -> tuple[Any, str] | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        return None
    except OSError as exc:
        return None, f"cannot read it ({exc.strerror}); trajectories stored without its verdicts"
    try:
        return orjson.loads(data), ""
    except orjson.JSONDecodeError as exc:
        try:
            doc = orjson.loads(_TRAILING_COMMA.sub(rb"\1", data))
        except orjson.JSONDecodeError:
            return None, f"not JSON ({exc}); trajectories stored without its verdicts"
        return doc, "not strict JSON (trailing commas); read without them"


def _not_a(report: Path, why: str, instance_id: str, source_format: str) -> Issue:
    return make_issue(
        report,
        f"not a SWE-bench report for {instance_id} ({why}); the trajectory is stored without a verdict",
        "Fix or remove report.json (SWE-bench writes {instance_id: {resolved, tests_status}})",
        record=instance_id,
        field="report.json",
        severity="warning",
        source_format=source_format,
    )
