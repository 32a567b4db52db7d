"""The built-in suite of terminal tasks: Harbor task directories, one per folder here, runnable
with bash, coreutils, grep/sed/awk and python3 only (see docs/tasks.md); and the one rule by which
every command finds the tasks of a suite (`task_directories`)."""

import os
from pathlib import Path

from curriculab.trajectory.errors import CurriculabError

BUILTIN_SUITE = Path(__file__).resolve().parent
"""The folder holding the built-in tasks (`curriculab tasks check builtin`)."""


class SuiteError(CurriculabError, ValueError):
    """A suite that names no task, or two tasks by one name; the message says which and the fix."""


def task_directories(spec: str | Path, base_dir: Path | None = None) -> dict[str, Path]:
    """Task id (its folder's name) → task directory, for `builtin`, a task directory, or a folder holding
    task directories at any depth; a task directory's own folders are not searched. `base_dir`: where a
    relative `spec` that is not here is looked for (a plan.yaml's folder). The one rule `plan --tasks`,
    `train`, `loop`, `tasks check` and the environment all find tasks by."""
    root = BUILTIN_SUITE if str(spec) == "builtin" else Path(spec)
    if not root.is_absolute() and str(spec) != "builtin" and base_dir is not None and not root.exists():
        root = base_dir / root
    found: dict[str, Path] = {}
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        if "task.toml" not in files:
            continue
        subfolders.clear()  # a task's own folders hold its environment and tests, not tasks
        here = Path(folder)
        if here.name in found:
            raise SuiteError(
                f"{spec}: two tasks are named {here.name!r} ({found[here.name]} and {here}): rename one folder"
            )
        found[here.name] = here
    if not found:
        raise SuiteError(
            f"suite {str(spec)!r} holds no task directories (folders with task.toml): give builtin or a folder of "
            "Harbor task directories"
        )
    return dict(sorted(found.items()))
