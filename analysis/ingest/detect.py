"""What a folder is, from its listing alone (standard library only): discovery asks this of every
folder it walks, and a re-ingest that reads nothing should not import the importers to ask it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator


def listing(directory: str, listings: dict[str, list[os.DirEntry]] | None = None) -> list[os.DirEntry]:
    """A directory's entries sorted by name ([] where it cannot be listed). With `listings`, a
    folder listed once (run detection looks two levels down) is not listed again by the walk."""
    if listings is not None and directory in listings:
        return listings[directory]
    try:
        with os.scandir(directory) as entries:
            found = sorted(entries, key=lambda e: e.name)
    except OSError:
        return []
    if listings is not None:
        listings[directory] = found
    return found


def each_tb_trial_dir(run_dir: str, listings: dict[str, list[os.DirEntry]] | None = None) -> Iterator[str]:
    """What `run_dir.glob("*/*/results.json")` finds, as the parents' paths, lazily: discovery asks
    this of every folder it walks (each Harbor job too), where pathlib's glob was most of its time."""
    for task in _subdirs(run_dir, listings):
        entries = listing(task, listings)
        if any(e.name == "result.json" for e in entries):  # a Harbor trial or job: tb keeps no result.json
            continue
        for trial in (e.path for e in entries if e.is_dir()):
            # from its listing, which the walk takes next (a stat of its results.json was one more call)
            if any(
                e.name == "results.json" and (not e.is_symlink() or os.path.exists(e.path))
                for e in listing(trial, listings)
            ):
                yield trial


def _subdirs(directory: str, listings: dict[str, list[os.DirEntry]] | None = None) -> list[str]:
    return [entry.path for entry in listing(directory, listings) if entry.is_dir()]


def is_tb_run_dir(
    path: str | os.PathLike, names: Iterable[str] | None = None, listings: dict[str, list[os.DirEntry]] | None = None
) -> bool:
    """A `tb run` directory: run-level files, or trials that each hold their own results.json (a
    trial's folder is named `<task>.<n>-of-<m>.<time>` inside its task's folder; some published
    runs keep nothing else, no keystroke log and no run metadata). `listings`: see `listing`."""
    names = set(names) if names is not None else {e.name for e in listing(str(path))}
    if "run_metadata.json" in names and "results.json" in names:
        return True
    if "result.json" in names or "task.yaml" in names:  # a Harbor job or trial, a task directory
        return False
    return any(
        os.path.basename(trial).startswith(os.path.basename(os.path.dirname(trial)) + ".")
        or os.path.isfile(os.path.join(trial, "commands.txt"))
        or os.path.isdir(os.path.join(trial, "panes"))
        for trial in each_tb_trial_dir(str(path), listings)
    )


def is_harbor_trial_dir(path: str | os.PathLike, entries: dict[str, os.DirEntry] | None = None) -> bool:
    """A Harbor trial directory: result.json with a trial's companions, or with nothing that makes it
    a job. A job also holds result.json (and config.json), but beside a job.log or trial directories
    of its own; a trial whose agent and verifier folders are gone keeps its verdict all the same.
    `entries`: the directory's listing by name, when the caller has it (no stat then)."""
    if entries is None:
        entries = {e.name: e for e in listing(str(path))}

    def kind(name: str, directory: bool) -> bool:
        entry = entries.get(name)
        try:
            return entry is not None and (entry.is_dir() if directory else entry.is_file())
        except OSError:
            return False

    if not kind("result.json", False):
        return False
    if kind("agent", True) or kind("verifier", True) or kind("trial.log", False):
        return True
    if kind("job.log", False):
        return False
    return not any(os.path.isfile(os.path.join(e.path, "result.json")) for e in entries.values() if kind(e.name, True))


def other_verifier_reports(trial: str) -> list[str]:
    """The per-test reports under a trial's `verifier/` other than `ctrf.json`, by name
    (`ctrf.redacted.json`, which redacting tools write beside or instead of it). A trial's tests are
    read from one report only, so that none is counted twice: `ctrf.json` where it is there, else
    the first of these."""
    try:
        with os.scandir(os.path.join(trial, "verifier")) as entries:
            return sorted(
                e.name
                for e in entries
                if e.name.startswith("ctrf") and e.name.endswith(".json") and e.name != "ctrf.json"
            )
    except (FileNotFoundError, NotADirectoryError):
        return []
