"""Terminal tasks as a TRL environment: `GRPOTrainer(environment_factory=TerminalEnvironment)`.

TRL's contract (trl 1.16 `grpo_trainer.py`): it keeps a pool of instances and calls
`reset(**dataset_row)` before each rollout, appending what `reset` returns to the prompt; every
other public method is a tool, described to the model by its signature and docstring; reward
functions receive the instances as `environments=`. So this class has one tool, `bash`; what the
rewards read (`result`, `commands`) are properties, which TRL does not take for tools. The verifier
runs once per episode, when a reward first reads `result`.

One episode never stops a run: whatever fails in the environment (the sandbox does not start, a
command or its observation breaks, the judge crashes, the container is gone) ends that episode
with `EpisodeResult.failure` set, counted on the clock (`env/failures`); its rewards are None,
its later commands run nothing, and the trial is still written with the reason. What the agent's
own shell breaks is not the environment's failure: a broken or imitated end-of-command marker
(`MarkerBroken`) ends the episode with `EpisodeResult.forfeited`, every reward 0, and the episode
is judged (0 with the reason), written and coded like any other."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from curriculab.training.terminal.episode import Episode
from curriculab.training.terminal.shared import CommandResult, EpisodeLimits, EpisodeResult, MarkerBroken
from curriculab.training.terminal.suite import BUILTIN_SUITE, task_directories
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
            self._paths = task_directories(tasks)  # the rule every command finds a suite's tasks by
        self._limits, self._backend, self._clock = limits or EpisodeLimits(), backend, clock
        self._tasks: dict[str, TerminalTask] = {}
        self._episode: Episode | None = None
        self._task: TerminalTask | None = None
        self._result: EpisodeResult | None = None
        self._failure: str | None = None

    def reset(self, task_id: str, **row: object) -> str:
        """End the previous episode and start one on `task_id`; its instruction (a multi-step task's
        every step, `TerminalTask.agent_instruction`) joins the prompt. A task that cannot start
        here is a failed episode, not an exception: the model is still told the task."""
        with timed(self._clock, "environment_s"):
            self._close()
            if task_id not in self._paths:
                raise KeyError(f"task {task_id!r} is not in this environment's tasks ({len(self._paths)} known)")
            if task_id not in self._tasks:
                self._tasks[task_id] = load_task(self._paths[task_id])
            self._task = self._tasks[task_id]
            try:
                self._episode = Episode(self._task, self._limits, backend=self._backend, observe=True)
            except Exception as exc:
                self._fail(f"the episode could not start: {exc}")
            return self._task.agent_instruction

    def bash(self, command: str) -> str:
        """Run a command in the task's terminal and return what it printed and its exit code.

        Args:
            command: A bash command line. The working directory, variables and background jobs carry over between calls.

        Returns:
            The command's exit code, then its output (stdout and stderr).
        """
        if self._failure is not None:
            return "[the environment failed; nothing ran]"
        if self._episode is None or self._result is not None:
            return "[no episode is running]"
        if self._episode.forfeited is not None:
            return f"[the episode is over and scores 0: {self._episode.forfeited}]"
        with timed(self._clock, "environment_s"):
            try:
                done = self._episode.run(command)
            except MarkerBroken as broken:  # the agent's doing: its 0, never the environment's None
                return f"[the episode is over and scores 0: {broken}]"
            except Exception as exc:
                self._fail(f"a command could not run: {exc}")
                return "[the environment failed; nothing ran]"
        return f"[exit code {done.exit_code}]\n{done.output}"

    @property
    def result(self) -> EpisodeResult:
        """The episode judged, once (the verifier runs on the first read; every step is judged as
        left); a failed episode's result carries its `failure` and no verdict."""
        if self._result is None:
            if self._task is None:
                raise RuntimeError("no episode: call reset(task_id=...) first")
            if self._failure is None and self._episode is not None:
                with timed(self._clock, "environment_s"):
                    try:
                        self._result = self._episode.finish()
                    except Exception as exc:
                        self._fail(f"the judge failed: {exc}")
            if self._result is None:
                commands = self._episode.commands if self._episode is not None else []
                verdicts = self._episode.verdicts if self._episode is not None else []
                self._result = EpisodeResult(
                    self._task.task_id, verdicts, self._task.reward_strategy, commands, self._failure
                )
        return self._result

    def _fail(self, reason: str) -> None:
        """End the episode as the environment's failure (its sandbox removed), counted once."""
        if self._failure is None:
            self._failure = reason
            if self._clock is not None:
                self._clock.add(environment_failures=1)
        if self._episode is not None:
            try:
                self._episode.close()
            except Exception:  # the sandbox is already half gone; what is left is its owner's to reap
                pass

    @property
    def commands(self) -> list[CommandResult]:
        """What the agent ran, each with its exit code, time and the files it changed."""
        return self._episode.commands if self._episode is not None else []

    @property
    def task(self) -> TerminalTask | None:
        """The task of the current episode (also when it failed)."""
        return self._task

    def _close(self) -> None:
        if self._episode is not None:
            try:
                self._episode.close()
            except Exception:  # a sandbox that will not close never stops the next episode
                pass
        self._episode, self._result, self._task, self._failure = None, None, None, None

    def __enter__(self) -> TerminalEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def __del__(self) -> None:
        if not sys.is_finalizing():  # at interpreter exit the sandbox dies with its parent process
            self._close()
