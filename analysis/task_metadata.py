"""A benchmark's task folders joined to runs that did not ship them (`curriculab tasks import
--dataset`): which tasks the folders hold, the dataset version they were imported at, and per run
what is still missing or was imported at another version than the run names."""

from __future__ import annotations

import os
from collections.abc import Iterable

from curriculab.analysis import queries
from curriculab.analysis.store import Store

TASK_FILES = ("task.yaml", "task.toml")
"""A Terminal-Bench 1.x task folder holds `task.yaml`; a Harbor task directory `task.toml`."""


def task_folder_ids(roots: Iterable[str]) -> list[str]:
    """The ids of the task folders under `roots` (a folder's name, as the task readers take it)."""
    ids: list[str] = []
    for root in roots:
        for folder, subfolders, files in os.walk(root):
            if any(name in files for name in TASK_FILES):
                ids.append(os.path.basename(os.path.normpath(folder)))
                subfolders.clear()  # a task's own folders (tests/, environment/) hold no tasks
    return sorted(set(ids))


def coverage_notes(store: Store) -> list[str]:
    """One line per run whose tasks lack metadata or were imported at another dataset version."""
    notes = []
    for row in queries.task_metadata_coverage.records(store):
        named = f"run {row['run_id']} ({row['system']}{', ' + row['dataset'] if row['dataset'] else ''})"
        if row["without_metadata"]:
            notes.append(
                f"{named}: {row['without_metadata']} of {row['tasks']} tasks have no metadata "
                f"({row['missing']}{', …' if row['without_metadata'] > 5 else ''})"
            )
        if row["other_version"]:
            notes.append(
                f"{named}: {row['other_version']} of its tasks were imported as {row['imported_as']}, "
                "not the version the run names"
            )
    return notes
