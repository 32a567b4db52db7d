"""Terminal tasks an agent practises on: Harbor task directories, an episode (a stateful shell in
a sandbox, then the task's verifier as a judge) and `tasks check`'s oracle and do-nothing runs."""

from curriculab.training.terminal.check import TaskCheck, check_task, readiness
from curriculab.training.terminal.episode import Episode
from curriculab.training.terminal.shared import (
    CommandResult,
    EpisodeAgent,
    EpisodeError,
    EpisodeLimits,
    EpisodeResult,
    NeedsImage,
    StepVerdict,
)
from curriculab.training.terminal.task import TaskError, TerminalTask, load_task

__all__ = [
    "CommandResult",
    "Episode",
    "EpisodeAgent",
    "EpisodeError",
    "EpisodeLimits",
    "EpisodeResult",
    "NeedsImage",
    "StepVerdict",
    "TaskCheck",
    "TaskError",
    "TerminalTask",
    "check_task",
    "load_task",
    "readiness",
]
