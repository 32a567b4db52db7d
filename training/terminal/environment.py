"""Terminal tasks as a TRL environment: `GRPOTrainer(environment_factory=TerminalEnvironment)`.

TRL's contract (trl 1.16 `grpo_trainer.py`): it keeps a pool of instances and calls
`reset(**dataset_row)` before each rollout, appending what `reset` returns to the prompt; every
other public method is a tool, described to the model by its signature and docstring; reward
functions receive the instances as `environments=`. So this class has one tool, `bash`; what the
rewards read (`result`, `commands`) are properties, which TRL does not take for tools. The verifier
runs once per episode, when a reward first reads `result`."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from curriculab.training.terminal.episode import CommandResult, Episode, EpisodeLimits, EpisodeResult
from curriculab.training.terminal.suite import BUILTIN_SUITE
from curriculab.training.terminal.task import TerminalTask, load_task
from curriculab.training.timing import StepClock, timed


class TerminalEnvironment:
    """One terminal episode per rollout. `tasks` is a suite folder (a task directory per folder)
    or a mapping of task id to directory; a dataset row names its task with `task_id`. A `clock`
    is given the time spent in the episode (resets, commands, the verifier)."""

    def __init__(
        self,
        tasks: Path | str | Mapping[str, Path | str] = BUILTIN_SUITE,
        limits: EpisodeLimits | None = None,
        backend: str = "bwrap",
        clock: StepClock | None = None,
    ):
        if isinstance(tasks, Mapping):
            self._paths = {name: Path(path) for name, path in tasks.items()}
        else:
            self._paths = {p.parent.name: p.parent for p in Path(tasks).glob("*/task.toml")}
        self._limits, self._backend, self._clock = limits or EpisodeLimits(), backend, clock
        self._tasks: dict[str, TerminalTask] = {}
        self._episode: Episode | None = None
        self._result: EpisodeResult | None = None

    def reset(self, task_id: str, **row: object) -> str:
        """End the previous episode and start one on `task_id`; its instruction (a multi-step task's
        every step, `TerminalTask.agent_instruction`) joins the prompt."""
        with timed(self._clock, "environment_s"):
            self._close()
            if task_id not in self._paths:
                raise KeyError(f"task {task_id!r} is not in this environment's tasks ({len(self._paths)} known)")
            if task_id not in self._tasks:
                self._tasks[task_id] = load_task(self._paths[task_id])
            self._episode = Episode(self._tasks[task_id], self._limits, backend=self._backend, observe=True)
            return self._tasks[task_id].agent_instruction

    def bash(self, command: str) -> str:
        """Run a command in the task's terminal and return what it printed and its exit code.

        Args:
            command: A bash command line. The working directory, variables and background jobs carry over between calls.

        Returns:
            The command's exit code, then its output (stdout and stderr).
        """
        if self._episode is None or self._result is not None:
            return "[no episode is running]"
        with timed(self._clock, "environment_s"):
            done = self._episode.run(command)
        return f"[exit code {done.exit_code}]\n{done.output}"

    @property
    def result(self) -> EpisodeResult:
        """The episode judged (the verifier runs on the first read; every step is judged as left)."""
        if self._result is None:
            if self._episode is None:
                raise RuntimeError("no episode: call reset(task_id=...) first")
            with timed(self._clock, "environment_s"):
                self._result = self._episode.finish()
        return self._result

    @property
    def commands(self) -> list[CommandResult]:
        """What the agent ran, each with its exit code, time and the files it changed."""
        return self._episode.commands if self._episode is not None else []

    @property
    def task(self) -> TerminalTask | None:
        return self._episode.task if self._episode is not None else None

    def _close(self) -> None:
        if self._episode is not None:
            self._episode.close()
        self._episode, self._result = None, None

    def __enter__(self) -> TerminalEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def __del__(self) -> None:
        if not sys.is_finalizing():  # at interpreter exit the sandbox dies with its parent process
            self._close()
