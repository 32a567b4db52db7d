"""Terminal-Bench 1.x run directories (`tb run` output).

A run directory holds `<task>/<trial>/results.json` per trial and usually a run-level
`results.json` (every trial) and `run_metadata.json` (agent, model, dataset); published runs may
lack either, and are still runs. Each trial's `commands.txt` is the tmux keystroke log: one
Python list repr per line (`['ls -la', 'Enter']`), parsed as the literal it is. It mixes the
harness's own lines (asciinema recordings, `clear`, installing the agent, running the tests)
with the agent's; the harness's become `env` steps, which no coder judges. Installed agents
(OpenHands, mini-swe-agent, Claude Code, ...) appear as one invocation carrying the task text:
their actions are not in the log, so such a trajectory is one `run` step with
`actions_logged = false`, and behavioural coders abstain on it. The log has no outputs.
`is_resolved: null` with an agent's own fault (`agent_timeout`, `unknown_agent_error`, ...) is a
`failed` attempt, as the leaderboard counts it; with any other fault there is no verdict: `error`.
"""

from __future__ import annotations

import ast
import re
import shlex
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curriculab.analysis.ingest.common import (
    IngestFailure,
    Issue,
    StepBuilder,
    UnitResult,
    add_trajectory,
    fail,
    load_json,
    make_issue,
    outcome_without_verdict,
    read_bytes,
    validation_failure,
)
from curriculab.analysis.ingest.detect import each_tb_trial_dir
from curriculab.analysis.ingest.hashes import content_hash, legacy_hash
from curriculab.analysis.ingest.transcript import PRINTED_STEPS, terminal_files
from curriculab.trajectory.actions import NormalisedCall, normalise_shell
from curriculab.trajectory.model import INT64_MAX, Run, Task, TestResult, Trajectory

FORMAT = "tb"

HARNESS_ERROR_OF_FAILURE_MODE = {
    "agent_timeout": "agent_timeout",
    "test_timeout": "test_timeout",
    "parse_error": "parse_error",
    "unknown_agent_error": "unknown_agent_error",
    "agent_installation_failed": "install_failed",
    "fatal_llm_parse_error": "llm_parse_error",  # the agent could not parse its model's answer: its own fault
    "context_length_exceeded": "context_length_exceeded",
    "output_length_exceeded": "output_length_exceeded",
}

# Programs that run a whole agent from one command line: the log shows only their invocation.
INSTALLED_AGENTS = {
    "openhands": "openhands",
    "mini": "mini-swe-agent",
    "mini-swe-agent": "mini-swe-agent",
    "goose": "goose",
    "claude": "claude-code",
    "codex": "codex",
    "cursor-agent": "cursor-agent",
    "gemini": "gemini-cli",
    "aider": "aider",
    "opencode": "opencode",
    "qwen": "qwen-code",
    "amp": "amp",
}
_MODEL_FLAGS = ("-m", "--model", "--model-name")

# Keys tmux sends that end a typed line, and control keys that are their own action.
_ENTER_KEYS = {"Enter", "C-m", "KPEnter", "C-j"}
_SPECIAL_TEXT = {"Space": " ", "Tab": "\t", "BSpace": "", "Escape": ""}
_CONTROL_KEY = re.compile(r"^(?:C|M)-.$|^(?:Up|Down|Left|Right|Home|End|PageUp|PageDown|NPage|PPage|F\d+)$")
_TMUX_WAIT = re.compile(r";\s*tmux wait -S done\s*$")

# The harness's own keystrokes, around and between the agent's.
_HARNESS_LINE = re.compile(
    r"^(asciinema rec\b.*|source /installed-agent/\S+.*|bash\s+/tests/run-tests\.sh\s*|/tests/run-tests\.sh\s*)$"
)
_TESTS_RECORDING = re.compile(r"^asciinema rec\b.*tests\.cast")
_RUNS_TESTS = re.compile(r"^(bash\s+)?/tests/run-tests\.sh\s*$")
_INSTALLED_AGENT_SETUP = re.compile(r"^source /installed-agent/")


class TbTrial(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    trial_name: str
    task_id: str
    instruction: str | None = None
    is_resolved: bool | None = Field(default=None, strict=True)  # "yes" is not a verdict
    failure_mode: str = "unset"
    parser_results: dict[str, Literal["passed", "failed"]] | None = None
    total_input_tokens: int | None = Field(default=None, ge=0, le=INT64_MAX)
    total_output_tokens: int | None = Field(default=None, ge=0, le=INT64_MAX)
    trial_started_at: datetime | None = None
    trial_ended_at: datetime | None = None
    agent_started_at: datetime | None = None
    agent_ended_at: datetime | None = None


def _trial_dirs(run_dir: Path) -> list[Path]:
    """`<task>/<trial>/` directories holding a trial's own results.json."""
    return sorted(Path(path) for path in each_tb_trial_dir(str(run_dir)))


def is_results_file(data: bytes) -> bool:
    """A `tb` results document kept as a file of its own (goose submissions keep
    `<time>_results.json` at the top): a `results` list of trials with verdicts."""
    head = data[:8192]
    return b'"results"' in head and b'"trial_name"' in head and b'"is_resolved"' in data


def read_results_file(path: Path) -> UnitResult:
    """A results document on its own: a run whose trials have verdicts, tests and tokens, no steps.
    Its run id is the document's `id`, else the file's name without `_results.json`."""
    doc = _results_doc(path)
    run_id = str(doc.get("id") or re.sub(r"_+results$", "", path.stem))
    items = {
        str((item.get("trial_name") if isinstance(item, dict) else None) or f"results[{k}]"): (
            path,
            item,
            f"results[{k}].",
        )
        for k, item in enumerate(doc["results"])
    }
    if not items:
        raise fail(
            path,
            "an empty `results` list: no trial to store",
            "Point at a results file of a finished run",
            field="results",
            source_format=FORMAT,
        )
    return _read_items(path.parent, run_id, {}, items, UnitResult(), path)


def _results_doc(path: Path) -> dict[str, Any]:
    doc = load_json(path, read_bytes(path, FORMAT), FORMAT)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise fail(
            path,
            "no `results` list",
            "Point at a `tb run` output directory or its results.json",
            field="results",
            source_format=FORMAT,
        )
    return doc


def read_run(run_dir: Path) -> UnitResult:
    """One `tb run` directory: one trajectory per trial; a bad trial is quarantined alone."""
    out = UnitResult()
    meta_path = run_dir / "run_metadata.json"
    meta: dict[str, Any] = {}
    if meta_path.is_file():
        loaded = load_json(meta_path, read_bytes(meta_path, FORMAT), FORMAT)
        meta = loaded if isinstance(loaded, dict) else {}
    items: dict[str, tuple[Path, Any, str]] = {}  # trial name -> (file, record, field prefix); a trial's own file wins
    results_path = run_dir / "results.json"
    run_doc: dict[str, Any] = {}
    if results_path.is_file():
        run_doc = _results_doc(results_path)
        for k, item in enumerate(run_doc["results"]):
            name = item.get("trial_name") if isinstance(item, dict) else None
            items[str(name or f"results[{k}]")] = (results_path, item, f"results[{k}].")
    for trial_dir in _trial_dirs(run_dir):
        path = trial_dir / "results.json"
        try:
            items[trial_dir.name] = (
                path,
                load_json(path, read_bytes(path, FORMAT, trial_dir.name), FORMAT, trial_dir.name),
                "",
            )
        except IngestFailure as exc:
            items.pop(trial_dir.name, None)
            out.issues.append(exc.issue)
    if not items:
        raise fail(
            run_dir,
            "no trials (no results.json with a `results` list, no <task>/<trial>/results.json)",
            "Point at a `tb run` output directory",
            source_format=FORMAT,
        )
    run_id = str(meta.get("run_id") or run_doc.get("id") or run_dir.name)
    return _read_items(run_dir, run_id, meta, items, out, run_dir)


_SUBMISSION = re.compile(r"^(?P<date>\d{8})_(?P<agent>[^_]+)_(?P<model>.+)$")
"""The leaderboard's submission folders: `<date>_<agent>_<model>` (e.g. `20250811_cursor-cli_claude-4-sonnet`)."""


_DATASET_FOLDER = re.compile(r"^(?P<name>[A-Za-z][\w.-]*):(?P<version>\d[\w.+-]*)$")
"""The leaderboard's dataset folders: `results/<name>:<version>/` (e.g. `terminal-bench-core:0.1.1`)."""


def folder_dataset(source: Path) -> tuple[str | None, str | None]:
    """(dataset, version) from the leaderboard's dataset folder above a submission, where the run's
    metadata names none: the version its tasks must be imported at (`tasks import --dataset`)."""
    for folder in (source, *list(source.parents)[:3]):
        match = _DATASET_FOLDER.match(folder.name)
        if match:
            return match["name"], match["version"]
    return None, None


def folder_identity(source: Path) -> tuple[str | None, str | None]:
    """(agent, model) from the leaderboard's submission-folder name, the run's or its parent's."""
    for folder in (source, *list(source.parents)[:2]):
        match = _SUBMISSION.match(folder.name)
        if match:
            return match["agent"], match["model"]
    return None, None


def _read_items(
    run_dir: Path,
    run_id: str,
    meta: dict[str, Any],
    items: dict[str, tuple[Path, Any, str]],
    out: UnitResult,
    source: Path,
) -> UnitResult:
    # What the run's metadata leaves null, the submission's folder name fills (after the invocation's own -m).
    folder_agent, folder_model = folder = folder_identity(source)
    named_dataset, named_version = folder_dataset(source)
    dataset = meta.get("dataset_name") or named_dataset
    if named_version and not meta.get("dataset_name"):
        meta = {**meta, "dataset_version": named_version}
    agents: set[str] = set()
    models: set[str] = set()
    attempts: dict[str, int] = {}
    for name, (path, item, prefix) in sorted(items.items()):
        try:
            trial = TbTrial.model_validate(item)
            # the trial's folder: where its own results.json lies, else where tb puts it
            own = path.name == "results.json" and path.parent != run_dir
            trial_dir = path.parent if own else run_dir / trial.task_id / trial.trial_name
            traj, agent, commands, steps = _trajectory(
                run_dir, trial_dir, run_id, meta, folder, dataset, trial, attempts, out
            )
            agents.update([agent] if agent else [])
            models.update([traj.model] if traj.model else [])
            digest, legacy = _digest(item, commands)
            add_trajectory(out.batch, traj, digest, FORMAT, str(trial_dir), legacy, steps=steps)
        except ValidationError as exc:
            out.issues.append(validation_failure(path, exc, FORMAT, record=name, prefix=prefix).issue)
        except IngestFailure as exc:
            out.issues.append(exc.issue)
    identity_from = {"agent": "folder name"} if not meta.get("agent_name") and folder_agent in agents else {}
    identity_from |= {"model": "folder name"} if not meta.get("model_name") and folder_model in models else {}
    out.batch.add_run(
        Run(
            run_id=run_id,
            agent=meta.get("agent_name") or (next(iter(agents)) if len(agents) == 1 else None),
            model=meta.get("model_name") or (next(iter(models)) if len(models) == 1 else None),
            dataset=dataset,
            source_format=FORMAT,
            source_path=str(source),
            started_at=meta.get("start_time"),
            config={
                **{
                    k: meta[k]
                    for k in ("n_attempts", "dataset_version", "n_concurrent_trials", "commit_hash")
                    if k in meta
                },
                **({"identity_from": identity_from} if identity_from else {}),
            },
        )
    )
    return out


def _digest(item: Any, commands: bytes) -> tuple[str, str | None]:
    # The trial's content alone: the same trial in a copy of the run, or read from the run-level
    # rather than the trial's own results.json, hashes the same. (And the raw-bytes hash older
    # stores hold, where the store may hold one, accepted as the same content.)
    record = {k: v for k, v in item.items() if k != "recording_path"} if isinstance(item, dict) else item
    canonical = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    return content_hash(canonical, commands), legacy_hash(canonical, commands)


def _trajectory(
    run_dir: Path,
    trial_dir: Path,
    run_id: str,
    meta: dict[str, Any],
    folder: tuple[str | None, str | None],
    dataset: str | None,
    trial: TbTrial,
    attempts: dict[str, int],
    out: UnitResult,
) -> tuple[Trajectory, str | None, bytes, StepBuilder]:
    commands_path = trial_dir / "commands.txt"
    commands = read_bytes(commands_path, FORMAT, trial.trial_name) if commands_path.is_file() else b""
    builder = StepBuilder(commands_path, trial.trial_name, FORMAT, trajectory_id=f"{run_id}/{trial.trial_name}")
    if trial.instruction:
        builder.message("user", trial.instruction)
    typed = typed_commands(commands.decode("utf-8", errors="replace"), commands_path, trial.trial_name, builder.issues)
    invocation = _installed_agent(typed, trial.instruction)
    # the harness set up an installed agent: its actions are not in this log, whatever launched it
    installed = invocation is not None or any(
        source == "env" and _INSTALLED_AGENT_SETUP.match(text) for source, text in typed
    )
    agent, model = meta.get("agent_name"), meta.get("model_name")
    if invocation is not None:
        agent = agent or invocation[1]
        model = model or invocation[2]
    agent, model = agent or folder[0], model or folder[1]
    recording, panes = terminal_files(trial_dir)
    read_printed = PRINTED_STEPS.get(invocation[1]) if invocation is not None else None
    printed = (
        read_printed(read_bytes(Path(panes), FORMAT, trial.trial_name).decode("utf-8", "replace"))
        if (read_printed and panes)
        else None
    )
    for source, text in typed:
        if invocation is not None and source == "agent":
            if text == invocation[0] and printed:  # the program's run, then the steps it printed
                builder.calls(
                    [NormalisedCall("run", None, text)],
                    tool_name="installed-agent",
                    raw={"keystrokes": text},
                    output=None,
                    source="env",
                )
                for step in printed:
                    if step.command is None:
                        builder.message("agent", step.thought)
                        continue
                    builder.calls(
                        [NormalisedCall("complete", None, step.command)]
                        if step.completes
                        else normalise_shell(step.command) or [NormalisedCall("run", None, step.command)],
                        tool_name="bash",
                        raw={"step": step.number, "command": step.command, "printed_in": panes},
                        output=step.output,
                        message=step.thought or None,
                        exit_code=step.exit_code,
                    )
            elif text == invocation[0]:  # the whole program run: one opaque step, never split
                builder.calls(
                    [NormalisedCall("run", None, text)],
                    tool_name="installed-agent",
                    raw={"keystrokes": text},
                    output=None,
                )
            continue
        # the harness's lines stay whole: they are context, not actions to classify
        calls = (normalise_shell(text) if source == "agent" else []) or [NormalisedCall("run", None, text)]
        builder.calls(calls, tool_name="terminal", raw={"keystrokes": text}, output=None, source=source)
    out.issues.extend(builder.issues)
    harness_error = HARNESS_ERROR_OF_FAILURE_MODE.get(trial.failure_mode, trial.failure_mode)
    if trial.failure_mode not in HARNESS_ERROR_OF_FAILURE_MODE and trial.failure_mode != "unset":
        out.issues.append(
            make_issue(
                trial_dir,
                f"failure_mode {trial.failure_mode!r} is not one Terminal-Bench "
                f"documents; stored as the harness error as given",
                "Nothing to do if the harness added a new mode; else fix the value",
                record=trial.trial_name,
                field="failure_mode",
                severity="warning",
                source_format=FORMAT,
            )
        )
    if trial.failure_mode == "unset":
        harness_error = None
    if trial.is_resolved is None and harness_error is None:
        harness_error = "unknown_error"
    outcome = (
        ("passed" if trial.is_resolved else "failed")
        if trial.is_resolved is not None
        else outcome_without_verdict(harness_error)
    )
    tests = [
        TestResult(test_id=name, passed=status == "passed", status=str(status)[:64])
        for name, status in (trial.parser_results or {}).items()
    ]
    attempt = attempts.get(trial.task_id, 0)
    attempts[trial.task_id] = attempt + 1
    traj = Trajectory(
        trajectory_id=f"{run_id}/{trial.trial_name}",
        run_id=run_id,
        task_id=trial.task_id,
        model=model,
        # actions are logged only where the agent typed something: a trial kept without its
        # keystroke log (a leaderboard submission's results alone) shows no action either
        # (an installed agent's steps count where it printed them, whole, on its final screen)
        actions_logged=bool(printed) or (not installed and any(source == "agent" for source, _ in typed)),
        attempt=attempt,
        outcome=outcome,
        harness_error=harness_error,
        reward=None if trial.is_resolved is None else float(trial.is_resolved),
        input_tokens=trial.total_input_tokens,
        output_tokens=trial.total_output_tokens,
        started_at=trial.trial_started_at,
        ended_at=trial.trial_ended_at,
        agent_started_at=trial.agent_started_at,
        agent_ended_at=trial.agent_ended_at,
        recording=recording,
        panes=panes,
        test_results=tests,
        task=Task(task_id=trial.task_id, source=dataset, instruction=trial.instruction),
    )
    return traj, agent, commands, builder


def typed_commands(text: str, path: Path, record: str, issues: list[Issue]) -> list[tuple[str, str]]:
    """(source, typed text) for each command line the keystroke log sends, in order.

    Keystrokes are joined into what was typed; `Enter` (or a newline inside a string) ends a
    command; `C-c`, `C-d` and other control keys are their own entries. Lines that are not a
    list of strings are reported (as warnings) and skipped.
    """
    sends: list[str] = []  # one entry per completed command or control key
    pending = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            keys = ast.literal_eval(line)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            keys = None
        if not isinstance(keys, (list, tuple)) or not all(isinstance(k, str) for k in keys):
            issues.append(
                make_issue(
                    path,
                    f"line {number} is not a Python list of tmux keys: {line[:60]!r}",
                    "Skipped; check that the file is a Terminal-Bench commands.txt",
                    record=record,
                    field=f"line {number}",
                    severity="warning",
                    source_format=FORMAT,
                )
            )
            continue
        for key in keys:
            if key in _ENTER_KEYS:
                pending += "\n"
            elif key in _SPECIAL_TEXT:
                pending += _SPECIAL_TEXT[key]
            elif _CONTROL_KEY.match(key):
                if pending.strip():
                    sends.append(pending)
                pending = ""
                sends.append(key)
            elif _TMUX_WAIT.search(key) and not _TMUX_WAIT.sub("", key).strip():
                continue  # the harness's "tell me when it finished" suffix
            else:
                pending += _TMUX_WAIT.sub("", key)
        if pending.endswith("\n"):
            sends.append(pending)
            pending = ""
    if pending.strip():
        sends.append(pending)
    return _attribute(s.strip("\n") for s in sends)


def _attribute(sends) -> list[tuple[str, str]]:
    """Mark the harness's keystrokes `env` and the agent's `agent`."""
    out: list[tuple[str, str]] = []
    testing = False
    for text in sends:
        stripped = text.strip()
        if not stripped:
            continue
        if _TESTS_RECORDING.match(stripped):
            testing = True
            if out and out[-1][1] == "C-d":  # the key that ended the agent's recording
                out[-1] = ("env", "C-d")
        previous = out[-1][1].strip() if out else ""
        harness = (
            testing
            or _HARNESS_LINE.match(stripped) is not None
            or (stripped == "clear" and (not out or previous.startswith("asciinema rec")))
        )
        out.append(("env" if harness else "agent", stripped))
        if _RUNS_TESTS.match(stripped):
            testing = True  # the harness runs the tests: what follows (its closing C-d too) is the harness's
    if out and out[-1] == ("agent", "C-d"):  # the key that ended a recording no tests followed (a trial cut short)
        out[-1] = ("env", "C-d")
    return out


def _installed_agent(typed: list[tuple[str, str]], instruction: str | None) -> tuple[str, str, str | None] | None:
    """(invocation, agent, model) when the agent ran as one program given the task text."""
    task_head = _squash(instruction or "")[:40]
    for source, text in typed:
        if source != "agent":
            continue
        words = _words(text)
        program = next((w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)), "")
        program = program.rsplit("/", 1)[-1]
        carries_task = len(task_head) >= 20 and task_head in _squash(text)
        if program in INSTALLED_AGENTS or (carries_task and len(typed) <= 12):
            model = next((words[k + 1] for k, w in enumerate(words[:-1]) if w in _MODEL_FLAGS), None)
            model = model or next((w.split("=", 1)[1] for w in words if w.startswith("--model=")), None)
            return text, INSTALLED_AGENTS.get(program, program), model
    return None


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()
