"""The episode log: each scored batch's episodes written as Harbor trials under the run's job
folder (`<output_dir>/rollouts/<run_id>/`, the store's run), named `<run_id>-<step>-<batch>-<index>`
(the index runs over every rank's share of the batch) so a resumed run drops those after its
checkpoint (`trim_after`), and ingested and coded into the
store at each checkpoint and at the end (`ingest_and_code`). The trainer calls the log after each
batch's rewards (`CurriculumGRPOTrainer(episode_hooks=…)`), not a reward function."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from curriculab.training.terminal.trial import Turn, write_trial


def bash_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The well-formed `bash` calls of an assistant message, in order: the ones the environment ran
    (TRL calls `bash(**arguments)`, so any other argument than `command` makes the call fail)."""
    calls = [c.get("function", c) for c in message.get("tool_calls") or []]
    return [
        c
        for c in calls
        if c.get("name") == "bash" and isinstance(c.get("arguments"), dict) and set(c["arguments"]) == {"command"}
    ]


def turns_of(messages: Sequence[Mapping[str, Any]], tokenizer: Any) -> list[Turn]:
    """The assistant turns of a TRL completion (its messages, tool answers between them) as trial
    turns: each `bash` call is the episode's next command; completion tokens counted by
    re-tokenising the turn's text and calls."""
    turns, next_command = [], 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        calls = [c.get("function", c) for c in message.get("tool_calls") or []]
        sent = bash_calls(message)
        indices = list(range(next_command, next_command + len(sent)))
        next_command += len(sent)
        text = (message.get("content") or "") + "".join(json.dumps(c) for c in calls)
        turns.append(Turn(message.get("content") or None, indices, None, len(tokenizer(text)["input_ids"])))
    return turns


def trial_step(run_id: str, trial: str) -> int:
    """The training step the run's trial (its folder name, its trajectory id) was written at:
    `EpisodeLog` names them `<run_id>-<step>-<batch>-<index>`."""
    return int(trial.removeprefix(f"{run_id}-").split("-")[0])


@dataclass
class EpisodeLog:
    """Writes each scored batch's episodes as trials: the trainer calls it once per batch, after the
    rewards and before the next `reset`, with the batch's environments and completions."""

    directory: Path
    run_id: str
    model: str
    tokenizer: Any
    written: int = 0
    seconds: float = 0.0
    batches: dict[int, int] = field(default_factory=dict)
    rank: int = 0
    """This process's rank: its episodes are numbered after the lower ranks' (`<index>` runs over the
    whole batch), so every rank's land under names of their own."""
    unscored: int = 0
    """Episodes the rewards left unscored (None): the environment failed, not the agent."""

    @property
    def job(self) -> Path:
        """The run's Harbor job folder: its name is the store's run_id."""
        return self.directory / self.run_id

    def __call__(self, environments: Sequence[Any], completions: Sequence[Any], step: int) -> None:
        started = time.perf_counter()
        job = self.job
        batch = self.batches[step] = self.batches.get(step, -1) + 1  # a step may score several batches
        first = self.rank * len(environments)  # every rank's batch is as large
        for index, (environment, messages) in enumerate(zip(environments, completions), start=first):
            if environment.task is None:
                continue
            self.unscored += environment.result.failure is not None
            commands = environment.commands
            turns = turns_of(messages, self.tokenizer)
            known = sum(len(t.commands) for t in turns)
            if known != len(commands):  # calls and commands do not pair up: one turn per command, or the turns alone
                turns = [Turn(None, [i]) for i in range(len(commands))] or [replace(t, commands=[]) for t in turns]
            write_trial(
                job,
                f"{self.run_id}-{step:05d}-{batch}-{index:02d}",
                environment.task,
                environment.result,
                model=self.model,
                turns=turns,
                started_at=commands[0].started_at if commands else None,
                finished_at=time.time(),
                told_at_once=True,
            )
            self.written += 1
        self.seconds += time.perf_counter() - started


def trim_after(log: EpisodeLog, step: int) -> None:
    """Drop the run's episodes written after `step` (a resumed run writes them again)."""
    for trial in log.job.glob(f"{log.run_id}-*"):
        if trial_step(log.run_id, trial.name) > step:
            shutil.rmtree(trial)


def ingest_and_code(db_path: str, job: Path, run_id: str, metrics_path: Path | None = None) -> None:
    """Ingest the run's episodes (its job folder `job`) and the metrics it logged, and code what is
    new: the environment's, the rules' and the verifier's codes."""
    from curriculab.analysis.coding import run_environment_coder, run_rule_coders, run_verifier_coder
    from curriculab.analysis.ingest.pipeline import ingest
    from curriculab.analysis.store import Store
    from curriculab.training.callback import store_metrics

    with Store(db_path) as store:
        if metrics_path is not None:  # first: the metrics mark the run as training, not evaluation
            store_metrics(store, run_id, metrics_path)
        if not job.is_dir():
            return
        ingest(store, [job])
        if run_environment_coder(store, uncoded_only=True).trajectories:  # new episodes landed
            run_rule_coders(store, where=f"starts_with(trajectory_id, '{run_id}-')")  # this run's episodes
            run_verifier_coder(store, uncoded_only=True)
