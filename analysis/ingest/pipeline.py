"""Find inputs, read them (in parallel for large inputs), write them in transactional batches.

A unit is one thing an importer reads whole: a Harbor trial directory, a `tb run` directory, an
ATIF / SWE-agent / Inspect / JSONL file, a task directory. Units are read in worker processes;
the parent alone writes to DuckDB, one batch per transaction, so a crash loses at most the
batch in flight and never leaves half a trajectory.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from curriculab.analysis import queries
from curriculab.analysis.ingest import attribution, detect
from curriculab.analysis.ingest.attribution import Identity
from curriculab.analysis.ingest.hashes import HASH_PREFIX, LegacyHashes
from curriculab.analysis.issues import IngestFailure, Issue, make_issue
from curriculab.analysis.store import RecordRejected, Store
from curriculab.analysis.store.attribution import UNKNOWN_MODELS
from curriculab.trajectory.vocabulary import SOURCE_FORMATS

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from curriculab.analysis.ingest.common import UnitResult
    from curriculab.analysis.store.rows import RowBatch
    from curriculab.analysis.store.store import WriteResult

FORMATS = ("auto", *SOURCE_FORMATS, "tasks")
_JOB_FILES = {
    "config.json",
    "result.json",
    "results.json",
    "run_metadata.json",
    "lock.json",
    "metrics.json",
    "args.json",
    "report.json",
    "ctrf.json",
    "package.json",
    "tsconfig.json",
}
_VERDICT_FILES = {"result.json", "results.json"}
_BATCH_TRAJECTORIES = 2000
_BATCH_STEPS = 100_000
_PARALLEL_MIN_UNITS = 200


@dataclass(frozen=True)
class Unit:
    kind: str
    """harbor, tb, tb-results, atif, swe-agent, mini-swe-agent, claude-code, inspect, jsonl (a Claude Code
    transcript is told apart when read), harbor-task, tb-task, or json (sniffed when read)."""
    where: str
    """Its file or directory, as discovery found it (a path given as a Path is kept as its text)."""
    absolute: str = ""
    """The path made absolute, as the manifest keys it (discovery derives it from its root's)."""

    def __post_init__(self) -> None:
        if not isinstance(self.where, str):
            object.__setattr__(self, "where", os.fspath(self.where))
        if not self.absolute:
            object.__setattr__(self, "absolute", os.path.abspath(self.where))

    @functools.cached_property
    def path(self) -> Path:
        """`where` as a Path, made when a reader wants one: a walk of 50,000 units that a no-op
        re-ingest skips needs only their text, and pathlib's parsing was a fifth of that walk."""
        return Path(self.where)


@dataclass
class IngestReport:
    """What one ingest call did."""

    units: int = 0
    """Input units read (trial directories, run directories, files)."""
    inserted: int = 0
    """Trajectories written."""
    unchanged: int = 0
    """Trajectories already stored with the same content (re-ingest is a no-op)."""
    replaced: int = 0
    """Stored trajectories replaced by other content (`replace=True`)."""
    reread: int = 0
    """Stored trajectories of unchanged content read again because an older reading made their steps
    (`hashes.READING`): steps replaced, codes dropped for the next `code`."""
    skipped: int = 0
    """Input units not read: their files' sizes and modification times match what was read cleanly before."""
    gone: list[str] = field(default_factory=list)
    """Inputs read before, under the given paths, that no longer exist (their trajectories stay stored)."""
    steps: int = 0
    """Steps written."""
    tasks: int = 0
    """Task descriptions read from task.toml / task.yaml directories."""
    errors: list[Issue] = field(default_factory=list)
    """Quarantined inputs."""
    warnings: list[Issue] = field(default_factory=list)
    """Inputs that landed after a repair (e.g. a capped 50 MB output)."""
    by_format: Counter[str] = field(default_factory=Counter)
    """Trajectories written per importer."""

    @property
    def quarantined(self) -> int:
        return len(self.errors)

    @property
    def found(self) -> int:
        """Trials (or inputs, where a whole input was refused) this call met: ingested, unchanged or refused."""
        return self.inserted + self.replaced + self.reread + self.unchanged + self.quarantined


def _sniff_json(path: Path, data: bytes) -> str | None:
    head = data[:4096]
    if b'"schema_version"' in head and b"ATIF" in head.upper():
        return "atif"
    if b'"eval"' in head and (b'"samples"' in data or b'"status"' in head):
        return "inspect"
    if b'"schema_version"' in data and b'"steps"' in data and b'"agent"' in data:
        return "atif"
    from curriculab.analysis.ingest import tb

    if tb.is_results_file(data):
        return "tb-results"
    from curriculab.analysis.ingest import mini_swe_agent

    if mini_swe_agent.is_mini_swe_agent(data[:4096] + data[-4096:]):  # `trajectory_format` ends the file
        return "mini-swe-agent"
    from curriculab.analysis.ingest import openhands

    if openhands.is_event_list(head):
        return "openhands"
    return None


_readers: dict[str, Callable[[Path], UnitResult]] = {}
"""The importer of each unit kind, filled on the first read: a walk or a no-op re-ingest never loads them."""


def _importers() -> dict[str, Callable[[Path], UnitResult]]:
    if not _readers:
        from curriculab.analysis.ingest import (
            atif,
            claude_code,
            codex_cli,
            harbor,
            inspect_log,
            mini_swe_agent,
            openhands,
            swe_agent,
            tasks,
            tb,
        )

        _readers.update(
            {
                "atif": atif.read_atif_file,
                "harbor": harbor.read_trial,
                "tb": tb.read_run,
                "tb-results": tb.read_results_file,
                "swe-agent": swe_agent.read_traj,
                "mini-swe-agent": mini_swe_agent.read_traj_json,
                "inspect": inspect_log.read_eval,
                "jsonl": _read_jsonl,
                "claude-code": claude_code.read_transcript,
                "codex-cli": codex_cli.read_rollout,
                "openhands": openhands.read_file,
                "harbor-task": functools.partial(tasks.read_task_dir, kind="harbor-task"),
                "tb-task": functools.partial(tasks.read_task_dir, kind="tb-task"),
                "json": _read_sniffed,
            }
        )
    return _readers


def read_unit(unit: Unit) -> UnitResult:
    """Read one unit; any failure becomes a quarantine issue rather than an exception."""
    try:
        return _importers()[unit.kind](unit.path)
    except Exception as exc:  # noqa: BLE001 - one unit's failure never costs the rest: it is quarantined
        return _unreadable(unit, exc)


def _unreadable(unit: Unit, exc: Exception) -> UnitResult:
    from pydantic import ValidationError

    from curriculab.analysis.ingest.common import UnitResult, validation_failure

    if isinstance(exc, IngestFailure):
        return UnitResult(issues=[exc.issue])
    if isinstance(exc, ValidationError):  # a value the format allows but the store cannot hold (a 10**30 token count)
        return UnitResult(issues=[validation_failure(unit.path, exc, unit.kind).issue])
    if isinstance(exc, MemoryError):
        return UnitResult(
            issues=[
                make_issue(
                    unit.path,
                    "ran out of memory reading this input",
                    "Split the file, or ingest it on a machine with more memory",
                )
            ]
        )
    # an importer bug must not cost the other files of the batch
    return UnitResult(
        issues=[
            make_issue(
                unit.path,
                f"unexpected {type(exc).__name__} while reading as {unit.kind}: {exc}",
                "Report this with the file attached; re-run with --debug for the traceback",
            )
        ]
    )


def _read_jsonl(path: Path) -> UnitResult:
    """A `.jsonl` file: curriculab JSONL, a Claude Code session transcript, a Codex CLI rollout or an
    OpenHands evaluation output: its first record tells, read whole however long it is (an evaluation
    record keeps its instance before its `history`), else its first 16 KiB."""
    from curriculab.analysis.ingest import claude_code, codex_cli, jsonl, openhands

    head, record = _first_record(path)
    readers = {
        "claude-code": claude_code.read_transcript,
        "codex-cli": codex_cli.read_rollout,
        "openhands": openhands.read_eval_output,
        "jsonl": jsonl.read_jsonl,
    }
    kind = _record_kind(record)
    if kind is None:
        if claude_code.is_transcript(head):
            kind = "claude-code"
        elif codex_cli.is_rollout(head):
            kind = "codex-cli"
        elif openhands.is_eval_output(head):
            kind = "openhands"
    return readers[kind or "jsonl"](path)


_FIRST_RECORD_LIMIT = 256 * 1024 * 1024
"""The longest first line read to tell a `.jsonl` file's format; past it, its first 16 KiB decide."""


def _first_record(path: Path) -> tuple[bytes, Any]:
    """(the file's first 16 KiB, its first non-empty line parsed as JSON, or None)."""
    import orjson

    try:
        with open(path, "rb") as handle:
            head = handle.read(16384)
            line = head.lstrip()
            while b"\n" not in line and len(line) < _FIRST_RECORD_LIMIT:
                more = handle.read(1 << 20)
                if not more:
                    break
                line += more
    except OSError:
        return b"", None
    try:
        return head, orjson.loads(line.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return head, None


_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary", "file-history-snapshot", "system"})


def _record_kind(record: Any) -> str | None:
    """The format a `.jsonl` file's first record shows, None where it shows none."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if "trajectory_id" in record:
        return "jsonl"
    if kind in _CODEX_TYPES and isinstance(record.get("payload"), dict):
        return "codex-cli"
    if kind in _CLAUDE_TYPES and any(k in record for k in ("sessionId", "leafUuid", "snapshot")):
        return "claude-code"
    history = record.get("history")
    if isinstance(history, list):
        events = [e for item in history[:4] for e in (item if isinstance(item, list) else [item])]
        if any(isinstance(e, dict) and ("action" in e or "observation" in e) for e in events):
            return "openhands"
    return None


def _read_sniffed(path: Path) -> UnitResult:
    """A `.json` file whose format its content tells: ATIF, an Inspect log, a tb run's results."""
    import orjson

    from curriculab.analysis.ingest import atif
    from curriculab.analysis.ingest.common import json_failure, read_bytes

    data = read_bytes(path, "auto")
    kind = _sniff_json(path, data) or ""
    if kind == "atif":
        return atif.read_atif_file(path, data)
    if kind == "openhands":
        from curriculab.analysis.ingest import openhands

        return openhands.read_events(path, data)
    if kind not in ("inspect", "tb-results", "mini-swe-agent"):
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise json_failure(path, data, exc, "auto") from None
        if _record_kind(document if isinstance(document, dict) else {"history": document}) == "openhands":
            from curriculab.analysis.ingest import openhands  # an event list whose first event is long

            return openhands.read_events(path, data)
        raise IngestFailure(
            make_issue(
                path,
                "not a recognised trajectory format (looked for ATIF `schema_version` and `steps`, an "
                "Inspect log's `eval` and `samples`, a Terminal-Bench `results` list of trials, a "
                "mini-swe-agent `trajectory_format`, or an OpenHands event list)",
                "Pass --format to force a reader, or convert the file to curriculab JSONL (docs/jsonl.md)",
            )
        )
    return _importers()[kind](path)


def _file_kind(path: str, fmt: str) -> str | None:
    suffix = os.path.splitext(path)[1].lower()
    if fmt != "auto":
        if fmt == "tb" and suffix == ".json":
            return "tb-results"  # a run's results kept on their own
        if fmt in ("harbor", "tb", "tasks"):
            return None  # these formats are directories
        return fmt
    if path.endswith(".traj.json"):
        return "mini-swe-agent"
    return {".traj": "swe-agent", ".eval": "inspect", ".jsonl": "jsonl", ".json": "json"}.get(suffix)


def _dir_kind(
    path: str, entries: dict[str, os.DirEntry[str]], fmt: str, listings: dict[str, list[os.DirEntry[str]]]
) -> str | None:
    names = entries.keys()
    if fmt in ("auto", "tb") and detect.is_tb_run_dir(path, names, listings):
        return "tb"
    if fmt in ("auto", "harbor") and "result.json" in names and detect.is_harbor_trial_dir(path, entries):
        return "harbor"
    if fmt in ("auto", "harbor", "tasks") and "task.toml" in names:
        return "harbor-task"
    if fmt in ("auto", "tb", "tasks") and "task.yaml" in names:
        return "tb-task"
    return None


_WALK_SUFFIXES = {
    "auto": {".json", ".traj", ".eval", ".jsonl"},
    "atif": {".json"},
    "swe-agent": {".traj"},
    "mini-swe-agent": {".json"},
    "claude-code": {".jsonl"},
    "codex-cli": {".jsonl"},
    "openhands": {".json", ".jsonl"},
    "inspect": {".eval", ".json"},
    "jsonl": {".jsonl"},
    "harbor": set(),
    "tb": {".json"},
    "tasks": set(),
}


def discover(
    paths: Iterable[str | os.PathLike[str]], fmt: str = "auto", found: Callable[[Unit], None] | None = None
) -> tuple[list[Unit], list[Issue]]:
    """Units to read under `paths`, and issues for paths that hold nothing readable. `found(unit)`
    is told of each unit a directory walk finds, as it is found."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    units: list[Unit] = []
    issues: list[Issue] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            issues.append(make_issue(root, "no such file or directory", "Check the path"))
            continue
        if root.is_file():
            kind = _file_kind(str(root), fmt)
            if kind is None:
                issues.append(
                    make_issue(
                        root,
                        f"unknown file type {root.suffix or '(no extension)'!r} for format {fmt}",
                        "Pass --format with one of atif, swe-agent, mini-swe-agent, claude-code, codex-cli, openhands, inspect, "
                        "jsonl, or "
                        "give a Harbor job / tb run directory",
                    )
                )
            else:
                units.append(Unit(kind, str(root)))
            continue
        if not root.is_dir():
            issues.append(
                make_issue(root, "not a regular file (a FIFO, a device or a socket)", "Point at the file itself")
            )
            continue
        before = len(units)
        # Paths stay strings while walking (pathlib's parsing was most of a big walk's time), and a
        # folder listed by run detection is not listed again.
        stack = [str(root)]
        # every path below is the root's string and names joined to it: its absolute form is the
        # root's, made once, with the same tail (no name is `.` or `..`)
        root_text, root_absolute = str(root), os.path.abspath(root)

        def unit_at(
            kind: str,
            path: str,
            root_text: str = root_text,
            root_absolute: str = root_absolute,
            found: Callable[[Unit], None] | None = found,
        ) -> None:
            unit = Unit(kind, path, root_absolute + path[len(root_text) :] if root_text != "/" else path)
            units.append(unit)
            if found:
                found(unit)

        listings: dict[str, list[os.DirEntry[str]]] = {}
        walked: dict[
            tuple[int, int], str
        ] = {}  # (device, inode) -> the path it was walked as: a symlink loop is walked once
        holding_results: list[Path] = []  # folders with a verdict file that are not units themselves
        while stack:
            directory = stack.pop()
            try:
                info = os.stat(directory)
                entries = (
                    listings.pop(directory)
                    if directory in listings
                    else sorted(os.scandir(directory), key=lambda e: e.name)
                )
            except OSError as exc:
                issues.append(
                    make_issue(Path(directory), f"cannot list directory ({exc.strerror})", "Check its permissions")
                )
                continue
            identity = (info.st_dev, info.st_ino)
            if identity in walked:
                issues.append(
                    make_issue(
                        Path(directory),
                        f"a symlink back to {walked[identity]}, which is already being walked; skipped",
                        "Nothing to do, or remove the link",
                        severity="warning",
                    )
                )
                continue
            walked[identity] = directory
            by_name = {e.name: e for e in entries}
            kind = _dir_kind(directory, by_name, fmt, listings)
            if kind is not None:
                unit_at(kind, directory)
                continue
            if by_name.keys() & _VERDICT_FILES:
                holding_results.append(Path(directory))
            subdirs = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir():
                    subdirs.append(entry.path)
                elif (
                    os.path.splitext(entry.name)[1].lower() in _WALK_SUFFIXES[fmt]
                    and entry.name not in _JOB_FILES
                    and (fmt != "tb" or entry.name.endswith("results.json"))  # tb's own: `<time>_results.json`
                    and entry.is_file()
                ):  # regular files only: a FIFO or a device named *.json is never opened
                    kind = _file_kind(entry.name, fmt)
                    if kind:
                        unit_at(kind, entry.path)
            stack.extend(reversed(subdirs))
        if len(units) == before:
            issues.append(
                make_issue(
                    root,
                    f"directory holds no input curriculab can read as {fmt}",
                    "Point at a Harbor job, a `tb run` directory, task directories, or .json/.traj/.eval/.jsonl files",
                )
            )
            continue
        # A verdict file no unit covers is a trial lost without a word: say so.
        covered = _with_ancestors(os.path.normpath(unit.where) for unit in units[before:]) if holding_results else set()
        for holder in holding_results:
            # a SWE-bench submission's `results/results.json` is read with the trajectories in its `trajs/`
            submission = holder.name == "results" and os.path.normpath(holder.parent) in covered
            if os.path.normpath(holder) not in covered and not submission:
                verdict_files = sorted(names for names in _VERDICT_FILES if (holder / names).is_file())
                issues.append(
                    make_issue(
                        holder,
                        f"holds {', '.join(verdict_files)} but no trial could be read from it (not a Harbor trial or "
                        "job, not a `tb run` directory)",
                        "Point at the run or job directory itself, or pass --format "
                        "tb / --format harbor; if this is another harness's output, convert it to JSONL (docs/jsonl.md)",
                    )
                )
    return units, issues


def _with_ancestors(paths: Iterable[str]) -> set[str]:
    """The paths and every folder above them, as `Path.parents` spells them (`.` above a relative
    top): strings, since building a Path per ancestor cost more than the rest of discovery."""
    covered: set[str] = set()
    for path in paths:
        while path not in covered:
            covered.add(path)
            parent = os.path.dirname(path) or "."
            if parent == path:
                break
            path = parent
    return covered


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, so `taskset` and container limits count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def read_signed(unit: Unit, signature: str | None) -> tuple[str | None, UnitResult]:
    """(the unit's signature, what reading it gave). A Harbor trial's is always the reader's own look
    at its files as it opened them: which segments its trajectory continues in is known only once it
    is read. Anything else's is the parent's (it stats only inputs the manifest knows), else taken
    here before the read."""
    if unit.kind != "harbor":
        return signature or unit_signature(unit), read_unit(unit)
    from curriculab.analysis.ingest.common import FilesRead

    with FilesRead.recording() as files:
        result = read_unit(unit)
    trial = str(unit.path)
    seen = [files.get(os.path.join(trial, name), _UNSEEN) for name in HARBOR_TRIAL_FILES]
    agent, verifier = os.path.join(trial, "agent", ""), os.path.join(trial, "verifier", "")
    continued = sorted(
        (path[len(agent) :], info)
        for path, info in files.items()
        if path.startswith(agent) and path != os.path.join(trial, HARBOR_TRIAL_FILES[1])
    )
    # the report read where ctrf.json is absent (`detect.other_verifier_reports`), by its name under the trial
    reports = sorted(
        ("verifier/" + path[len(verifier) :], info)
        for path, info in files.items()
        if path.startswith(verifier) and path != os.path.join(trial, HARBOR_TRIAL_FILES[2])
    )
    if _UNSEEN in seen:
        return None, result
    return _trial_signature(cast("list[tuple[int, int] | None]", seen), continued + reports), result


class _Readers:
    """Reader processes, started as soon as discovery has found enough units that will be read (ones
    the manifest does not know), so that their start (a fresh interpreter importing the importers)
    overlaps the rest of the walk; a re-ingest that reads little starts none. `legacy_hashes`: whether
    the store holds raw-bytes hashes, so that readers compute them too (`hashes.LegacyHashes`)."""

    def __init__(self, workers: int, known: set[str], legacy_hashes: bool):
        self.workers, self.known, self.legacy_hashes, self.unread = workers, known, legacy_hashes, 0
        self.pool: ProcessPoolExecutor | None = None  # started with the first read

    def found(self, unit: Unit) -> None:
        if unit.absolute not in self.known:
            self.unread += 1
            if self.unread >= _PARALLEL_MIN_UNITS:
                self._start()

    def _start(self) -> None:
        if self.pool is None and self.workers > 1:
            # spawn, not fork: the parent holds a DuckDB connection and its threads
            from concurrent.futures import ProcessPoolExecutor  # workers start only when there is reading to do

            self.pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=get_context("spawn"),
                initializer=_reader_started,
                initargs=(os.getpid(), self.legacy_hashes),
            )
            for _ in range(self.workers):  # each submit starts a process while none is idle
                self.pool.submit(int)

    def read(self, units: list[Unit], signatures: list[str | None]) -> Iterator[tuple[str | None, UnitResult]]:
        if len(units) < _PARALLEL_MIN_UNITS:
            return self._read_here(units, signatures)
        self._start()
        if self.pool is None:
            return self._read_here(units, signatures)
        return self.pool.map(read_signed, units, signatures, chunksize=32)

    def _read_here(self, units: list[Unit], signatures: list[str | None]) -> Iterator[tuple[str | None, UnitResult]]:
        before, LegacyHashes.wanted = LegacyHashes.wanted, self.legacy_hashes
        try:
            yield from map(read_signed, units, signatures)
        finally:
            LegacyHashes.wanted = before

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _reader_started(parent: int, legacy_hashes: bool) -> None:
    """A reader worker's start: it hashes as the store needs, and dies with the ingest."""
    LegacyHashes.wanted = legacy_hashes
    _die_with_parent(parent)


def _die_with_parent(parent: int) -> None:
    """In a reader worker: the kernel kills it when the ingest dies, even by kill -9 (a worker that
    outlived its parent would hold ~100 MB forever). When the last worker goes, the multiprocessing
    resource tracker sees its pipe close and exits too."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown is all there is
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


class _Writer:
    """Collects unit results into batches; drops in-call duplicates; writes each batch atomically."""

    def __init__(self, store: Store, report: IngestReport, replace: bool = False):
        self.store, self.report, self.replace = store, report, replace
        self.batch: RowBatch | None = (
            None  # the first result's rows start it: a re-ingest that reads nothing builds none
        )
        self.seen: dict[str, tuple[str, str]] = {}  # trajectory_id -> (content_hash, source_path)
        self.pending: list[Issue] = []  # issues not yet written to ingest_errors

    def issue(self, issue: Issue) -> None:
        (self.report.errors if issue.severity == "error" else self.report.warnings).append(issue)
        self.pending.append(issue)

    def add(self, result: UnitResult) -> None:
        self.report.tasks += result.tasks_only
        for issue in result.issues:
            self.issue(issue)
        incoming = result.batch
        drop = set()
        for row in incoming.trajectories:
            trajectory_id, fmt, digest, path = row.trajectory_id, row.source_format, row.content_hash, row.source_path
            known = self.seen.get(trajectory_id)
            if known is None:
                self.seen[trajectory_id] = (digest, path)
                continue
            drop.add(trajectory_id)
            if known[0] == digest:
                self.report.unchanged += 1
            else:
                self.issue(_conflict(trajectory_id, path, known[1], fmt, in_call=True))
        if drop:
            incoming.trajectories = [r for r in incoming.trajectories if r.trajectory_id not in drop]
            incoming.steps = [r for r in incoming.steps if r.trajectory_id not in drop]
            incoming.test_results = [r for r in incoming.test_results if r.trajectory_id not in drop]
        if self.batch is None:
            self.batch = incoming
        else:
            self.batch.extend(incoming)
        if len(self.batch) >= _BATCH_TRAJECTORIES or self.batch.n_steps >= _BATCH_STEPS:
            self.flush()
        if len(self.pending) >= 500:
            self.record()
        if self.store.readers_waiting():  # a report or the dashboard wants to read: commit, close, let it in
            self.flush()
            self.record()
            self.store.close()  # the next write reopens it, waiting for the readers

    def flush(self) -> None:
        batch, self.batch = self.batch, None
        if batch is None or not (batch.trajectories or batch.tasks or batch.runs):
            return
        self._write(batch)
        del batch
        # the collector is paused during ingest: what reading this batch left in cycles goes here. The
        # youngest generation only: a full pass over everything ingest keeps (caches, the manifest,
        # the ids seen) cost every batch
        gc.collect(0)

    def _write(self, batch: RowBatch) -> None:
        try:
            self._count(self.store.write_batch(batch, self.replace, then=UNKNOWN_MODELS))
        except RecordRejected:  # one record holds what the store cannot: write the rest, quarantine it
            for part in batch.per_trajectory():
                try:
                    self._count(self.store.write_batch(part, self.replace, then=UNKNOWN_MODELS))
                except RecordRejected as exc:
                    row = part.trajectories[0] if part.trajectories else None
                    self.issue(
                        make_issue(
                            row.source_path if row else "(task and run descriptions)",
                            str(exc),
                            "Fix the value at its source and ingest the file again",
                            record=row.trajectory_id if row else None,
                            source_format=row.source_format if row else None,
                        )
                    )

    def _count(self, result: WriteResult) -> None:
        self.report.inserted += result.inserted
        self.report.replaced += result.replaced
        self.report.reread += result.reread
        self.report.unchanged += result.unchanged
        self.report.steps += result.steps
        self.report.by_format.update(result.by_format)
        for trajectory_id, new_path, old_path, fmt in result.conflicts:
            self.issue(_conflict(trajectory_id, new_path, old_path, fmt))

    def record(self) -> None:
        self.store.record_inputs(errors=[i.as_row() for i in self.pending])
        self.pending.clear()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for an ingest, which makes millions of objects that form no
    cycles (rows, strings, parsed documents): its passes over the batch being built cost a tenth of
    ingest's time. Each written batch is followed by a collection of what is new since the last one
    instead (`_Writer.flush`); everything else when the ingest ends."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _conflict(trajectory_id: str, new_path: str, old_path: str, fmt: str | None, in_call: bool = False) -> Issue:
    kept = (
        f"the copy read from {old_path} earlier in this call is kept"
        if in_call
        else f"the stored copy came from {old_path}"
    )
    fix = (
        "Give one of the two attempts its own id"
        if in_call
        else "If this copy is the one to keep, ingest it again with --replace (the stored trajectory, its steps, tests and "
        "codes are replaced); otherwise give this attempt its own id"
    )
    return make_issue(
        new_path,
        f"trajectory_id {trajectory_id!r} is already known with different content: {kept}",
        fix,
        record=trajectory_id,
        field="trajectory_id",
        source_format=fmt,
    )


HARBOR_TRIAL_FILES = ("result.json", os.path.join("agent", "trajectory.json"), os.path.join("verifier", "ctrf.json"))
"""The files a Harbor trial is read from (`harbor.read_trial`; its task.toml lies outside it): what
its signature covers, with the continuation segments its trajectory was read through, whatever else
the trial's folder holds."""
_UNSEEN = object()


def _trial_signature(seen: list[tuple[int, int] | None], continued: list[tuple[str, tuple[int, int] | None]]) -> str:
    """A Harbor trial's three files, then each segment its trajectory continues in, by name (so that
    a no-op re-ingest knows which to look at)."""

    def look(info: tuple[int, int] | None) -> str:
        return "-" if info is None else f"{info[0]}:{info[1]}"

    return "h:" + ",".join(map(look, seen)) + "".join(f"|{name}={look(info)}" for name, info in continued)


def _regular_file(path: str) -> tuple[int, int] | None:
    """(size, modification time) of a regular file, None where there is none (as a reader finds it)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


def unit_signature(unit: Unit, stored: str | None = None) -> str | None:
    """The sizes and modification times of the files a unit is read from: a file's own; a Harbor
    trial's three files (absent ones too, so that one appearing is a change) and the segments its
    trajectory continued in when it was read (named in its `stored` signature); any other
    directory's, all of them. None when a file cannot be looked at (the unit is then read)."""
    try:
        if unit.kind == "harbor":
            seen = [_regular_file(os.path.join(unit.where, name)) for name in HARBOR_TRIAL_FILES]
            names = [part.rsplit("=", 1)[0] for part in stored.split("|")[1:]] if stored else []
            segments = [n for n in names if not n.startswith("verifier/")]
            # without ctrf.json the reader takes another report: one appearing is a change too
            reports = (
                [] if seen[2] is not None else [f"verifier/{n}" for n in detect.other_verifier_reports(unit.where)[:1]]
            )
            return _trial_signature(
                seen,
                [(name, _regular_file(os.path.join(unit.where, "agent", name))) for name in segments]
                + [(name, _regular_file(os.path.join(unit.where, name))) for name in reports],
            )
        info = os.stat(unit.where)
        if stat.S_ISREG(info.st_mode):
            return f"f:{info.st_size}:{info.st_mtime_ns}"
        if not stat.S_ISDIR(info.st_mode):
            return None
        digest = hashlib.blake2b(digest_size=16)
        _sign_tree(unit.where, "", digest)
        return "d:" + digest.hexdigest()
    except OSError:
        return None


def _sign_tree(directory: str, prefix: str, digest: Any) -> None:
    """Feed `digest` each file's path below the unit, size and time, in `os.walk`'s order (a folder's
    files by name, then its folders by name, depth first; a symlinked folder is not entered): one
    `scandir` per folder, where os.walk and a relpath per file were most of a no-op re-ingest."""
    files, folders = [], []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir():
                if not entry.is_symlink():
                    folders.append(entry)
            else:
                files.append(entry)
    for entry in sorted(files, key=lambda e: e.name):
        info = entry.stat()
        digest.update(f"{prefix}{entry.name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    for entry in sorted(folders, key=lambda e: e.name):
        _sign_tree(entry.path, f"{prefix}{entry.name}/", digest)


def ingest(
    store: Store,
    paths: Iterable[str | os.PathLike[str]],
    fmt: str = "auto",
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    replace: bool = False,
    verify: bool = False,
    identities: Iterable[Identity] = (),
) -> IngestReport:
    """Ingest `paths` into `store`. Bad inputs are quarantined in `ingest_errors`; good ones land.

    `progress(done, total)` is called as units are read. `replace`: a trajectory stored with other
    content is replaced (with its steps, tests and codes) instead of quarantined as a clash. An
    input read cleanly before whose files' sizes and modification times are unchanged is skipped
    without reading it; `verify` reads everything again (content hashes decide, as always).
    `identities` set the agent and model of the runs read from matching inputs, stored ones too
    (every input is then read again, to know its runs).
    """
    paths = [Path(p) for p in paths]
    identities = list(identities)
    verify = verify or bool(identities)
    roots = [os.path.abspath(p) for p in paths]
    known = queries.manifest_signatures(store, roots)
    legacy_hashes = store.holds_unprefixed_hashes(HASH_PREFIX)
    readers = _Readers(
        workers if workers is not None else available_cores(), set() if verify or replace else set(known), legacy_hashes
    )
    try:
        with _collector_paused():
            return _ingest(store, paths, fmt, readers, known, progress, replace, verify, identities)
    finally:
        readers.close()


def _ingest(
    store: Store,
    paths: Iterable[str | os.PathLike[str]],
    fmt: str,
    readers: _Readers,
    known: dict[str, dict[str, Any]],
    progress: Callable[[int, int], None] | None,
    replace: bool,
    verify: bool,
    identities: list[Identity],
) -> IngestReport:
    units, issues = discover(paths, fmt, found=readers.found)
    report = IngestReport(units=len(units))
    writer = _Writer(store, report, replace)
    for issue in issues:
        writer.issue(issue)
    report.gone = sorted(p for p in known if not os.path.exists(p))
    to_read, signatures = [], []
    for unit in units:
        seen = known.get(unit.absolute)
        signature = (
            unit_signature(unit, seen["signature"]) if seen else None
        )  # one never read cleanly is read regardless
        if seen is not None and not verify and not replace and signature and seen["signature"] == signature:
            report.skipped += 1
            report.unchanged += seen["trajectories"]
        else:
            to_read.append(unit)
            signatures.append(signature)
    clean: list[tuple[str, str, str, int]] = []
    assigned: dict[str, Identity] = {}  # run id -> the identity its input matched (the last one wins)
    for done, (unit, (signature, result)) in enumerate(zip(to_read, readers.read(to_read, signatures)), start=1):
        if signature and not any(i.severity == "error" for i in result.issues):
            clean.append((unit.absolute, signature, unit.kind, len(result.batch.trajectories)))
        for identity in identities:
            if identity.matches(unit.path):
                for run_id in {row.run_id for row in result.batch.trajectories}:
                    assigned[run_id] = identity
        writer.add(result)
        if progress:
            progress(done, len(to_read))
    writer.flush()
    writer.record()
    store.attribute(attribution.run_identities(assigned), attribution.renames(store))
    # a clash or a refused record is only known at write time: its input is read (and reported) again next time
    failed = [os.path.abspath(issue.path.split(":")[0]) for issue in report.errors]
    clean = [row for row in clean if not any(f == row[0] or f.startswith(row[0] + os.sep) for f in failed)]
    store.record_inputs(manifest=clean)  # after the data: a kill before this only means reading them again
    store.number_attempts()
    return report
