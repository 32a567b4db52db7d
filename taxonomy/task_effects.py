"""Each failure code's effect on a terminal-task curriculum (`task_effects.yaml`): the task kinds
to practise more, whether deeper tasks (more milestones) help, and the process reward term it
switches on. Data, not code: the planner reads it, docs/planning.md shows it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

TABLE = Path(__file__).with_name("task_effects.yaml")


@dataclass(frozen=True)
class TaskEffect:
    """What one code asks of a task curriculum."""

    code: str
    """The taxonomy code."""
    kinds: tuple[str, ...] = ()
    """Task kinds (`[metadata] kind`) to practise more; tasks whose `exercises` name the code always count."""
    deeper_milestones: bool = False
    """Whether tasks with more milestones than the model's failures reach should be practised more."""
    reward_term: str | None = None
    """A process reward term it switches on (`verification` → `verification_reward`)."""
    note: str = ""
    """The effect in words (cited in the plan's reasons)."""


@cache
def _table() -> dict:
    return dict(yaml.safe_load(TABLE.read_text()))


def task_effects() -> dict[str, TaskEffect]:
    """The table, by code."""
    doc = _table()
    return {
        code: TaskEffect(
            code,
            tuple(entry.get("kinds") or ()),
            bool(entry.get("deeper_milestones", False)),
            entry.get("reward_term"),
            entry.get("note", ""),
        )
        for code, entry in doc["effects"].items()
    }


def table_version() -> int:
    """The table's version (recorded in a plan's provenance)."""
    return int(_table()["version"])
