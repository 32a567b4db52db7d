"""The callbacks of a curriculum run, one job each, as TRL's own are: a progress bar, a time budget,
the dynamic schedule (α from live per-tier pass rates), the metrics log (one summary line and a
`training_metrics` row set per logging step, with where the step's time went), and the rollouts'
ingest (at each checkpoint the new rollouts ingested into the store and coded by the verifier,
beside training, not in its way). `run_callbacks` makes the set a run uses."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from curriculab.planner.dynamic import DynamicSettings, DynamicState, next_allocation
from curriculab.planner.portfolio import LiveAllocation, TierCurriculum
from curriculab.training.rollouts import RolloutWriter, shard_step
from curriculab.training.sampling import ProblemStats
from curriculab.training.timing import StepClock
from curriculab.trajectory.vocabulary import TIERS


def summary_line(step: int, logs: dict[str, float]) -> str:
    """One line per logging step: reward, per-tier pass rate and α (a tier curriculum's runs), KL,
    zero-variance share, step time and where it went (generation, environment, reward, train,
    store; generated tokens/s)."""
    tiers = "".join(
        f"{t[:5]} {logs.get(f'pass_rate/{t}', float('nan')):.2f}/α{logs.get(f'alpha/{t}', 0.0):.2f} "
        for t in TIERS
        if f"pass_rate/{t}" in logs or f"alpha/{t}" in logs
    )
    parts = " ".join(
        f"{name} {logs[f'time/{name}_s']:.2f}"
        for name in ("generation", "environment", "reward", "train", "store")
        if f"time/{name}_s" in logs
    )
    speed = f" {logs['generated_tokens_per_s']:.0f} tok/s" if "generated_tokens_per_s" in logs else ""
    return (
        f"step {step:>4}  reward {logs.get('reward', float('nan')):.3f}  {tiers} kl {logs.get('kl', 0.0):.4f}  "
        f"zero-std {logs.get('frac_reward_zero_std', float('nan')):.2f}  {logs.get('step_time', 0.0):.2f}s"
        + (f" ({parts}{speed})" if parts else "")
    )


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The metrics a run logged (`<output_dir>/metrics.jsonl`), the last entry per step winning."""
    if not path.exists():
        return []
    by_step: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            by_step.setdefault(entry["step"], {"step": entry["step"], "metrics": {}})["metrics"].update(
                entry["metrics"]
            )
    return [by_step[k] for k in sorted(by_step)]


def store_metrics(store: Any, run_id: str, metrics_path: Path) -> None:
    """Put the metrics the run logged so far (`metrics_path`) into the store's `training_metrics`."""
    rows = [
        (run_id, entry["step"], name, value)
        for entry in read_metrics(metrics_path)
        for name, value in sorted(entry["metrics"].items())
    ]
    if rows:
        store.save_training_metrics(run_id, rows)


def drop_metrics_after(path: Path, step: int) -> None:
    """Keep the logged metrics of steps up to checkpoint `step` (a resumed run logs the rest again)."""
    if path.exists():
        kept = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line)["step"] <= step]
        path.write_text("".join(f"{line}\n" for line in kept))


class ProgressBar(TrainerCallback):
    """A tqdm bar of optimizer steps on stderr (rank 0 shows it), named `desc`."""

    def __init__(self, main_process: bool = True, desc: str = "GRPO") -> None:
        self.main_process = main_process
        self.desc = desc
        self.bar: Any = None

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=state.max_steps,
            initial=state.global_step,
            desc=self.desc,
            unit="step",
            dynamic_ncols=True,
            disable=not self.main_process,
        )

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        self.bar.update(state.global_step - self.bar.n)

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.bar.close()


def drop_library_progress(trainer: Any) -> None:
    """Take transformers' own progress bar and log printer off `trainer`: our `ProgressBar` and
    summary lines replace them, and the printer writes raw log dicts to stdout, where `--json`
    output goes."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for noisy in (ProgressCallback, PrinterCallback):
        trainer.remove_callback(noisy)


class TimeBudget(TrainerCallback):
    """Stops training before a step that would end too late: the whole `train()` call, from
    `started`, stays inside `stop_after_s`, leaving the run's end (checkpoint, store) as long as its
    setup took (from `setup_started`, after the imports a process pays once) or twice the last
    checkpoint's ingest (`end_floor_s()`), whichever is longer."""

    def __init__(
        self, stop_after_s: float, started: float, setup_started: float, end_floor_s: Callable[[], float]
    ) -> None:
        self.stop_after_s, self.started, self.setup_started = stop_after_s, started, setup_started
        self.end_floor_s = end_floor_s
        self.reserve_s = 0.0
        self.step_ended: float | None = None

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.reserve_s = time.perf_counter() - self.setup_started
        self.step_ended = time.perf_counter()

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        now = time.perf_counter()
        step_s, self.step_ended = now - (self.step_ended or now), now
        end_s = max(
            self.reserve_s, self.end_floor_s()
        )  # a warm process starts fast, yet its end still ingests and saves
        if now + step_s - self.started > self.stop_after_s - end_s:
            control.should_training_stop = True  # one more step would spend the budget
            control.should_log = control.should_save = True  # this step's log and save still run


class DynamicSchedule(TrainerCallback):
    """The dynamic schedule: each logged step's per-tier pass rates move α, which the rewards read
    from the next batch on. Every rank follows it (its rewards need the same α)."""

    def __init__(self, settings: DynamicSettings, live: LiveAllocation) -> None:
        self.state = DynamicState(settings)
        self.live = live

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        observed = {t: (logs or {}).get(f"pass_rate/{t}") for t in TIERS}
        if any(v is not None for v in observed.values()):
            self.state = next_allocation(self.state, observed)
            self.live.alpha = self.state.allocation()


class MetricsLog(TrainerCallback):
    """Each log's numbers, with the tier weights (a tier curriculum's runs), the all-same share of
    live sampling's groups (`stats`) and where the step's time went (`clock`), appended to
    `metrics_path` (on disk first: a kill loses nothing a checkpoint covers) and told to `summary`.
    Rank 0 alone writes."""

    def __init__(
        self,
        curriculum: TierCurriculum | None,
        metrics_path: Path,
        clock: StepClock,
        summary: Callable[[int, dict[str, float]], None] | None = None,
        stats: ProblemStats | None = None,
        main_process: bool = True,
    ) -> None:
        self.curriculum, self.metrics_path, self.clock = curriculum, metrics_path, clock
        self.summary, self.stats, self.main_process = summary, stats, main_process
        self.last_log = time.perf_counter()
        self.store_seconds = 0.0

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        if not self.main_process:
            return
        logs = dict(logs or {})
        step = int(state.global_step)
        weights = self.curriculum.tier_weights if self.curriculum is not None else {}
        for tier in TIERS if self.curriculum is not None else ():
            logs.setdefault(f"weight/{tier}", weights.get(tier, 0.0))
        if self.stats is not None and self.stats.groups:
            logs["live_sampling/all_same_share"] = self.stats.all_same / self.stats.groups
        numbers = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if "reward" in numbers:  # a step's log (the run's closing summary log shares the last step's number)
            now = time.perf_counter()
            numbers["step_time"] = now - self.last_log
            self.last_log = now
            numbers.update(self.clock.reading(numbers["step_time"]))
        started = time.perf_counter()
        with open(self.metrics_path, "a") as sink:
            sink.write(json.dumps({"step": step, "metrics": numbers}) + "\n")
        seconds = time.perf_counter() - started
        self.store_seconds += seconds
        self.clock.add(store_s=seconds)
        if self.summary is not None and "reward" in numbers:
            self.summary(step, numbers)


class RolloutIngest(TrainerCallback):
    """At each checkpoint, in a thread beside the next steps, the rollouts written since the last
    one ingested into the store at `db_path` and coded by the verifier, with the metrics logged so
    far; at the run's end the rest, waited for. Rank 0 alone writes, for every rank."""

    def __init__(
        self,
        writer: RolloutWriter,
        db_path: str | None,
        run_id: str,
        metrics_path: Path,
        clock: StepClock,
        main_process: bool = True,
    ) -> None:
        self.writer, self.db_path, self.run_id, self.metrics_path = writer, db_path, run_id, metrics_path
        self.clock, self.main_process = clock, main_process
        self.ingested: set[str] = set()
        self.store_seconds = 0.0
        self.flush_s = 0.0  # the last checkpoint's ingest: the run's end does one more, and saves
        self.pending: threading.Thread | None = None

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        if not self.main_process:
            return
        # only shards of the steps before this one: every rank has finished them, while the next
        # step's (this process's or another rank's) may be being written
        self.wait()
        self.pending = threading.Thread(
            target=self._timed_flush, args=(int(state.global_step),), name="curriculab-ingest", daemon=True
        )
        self.pending.start()

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if not self.main_process:
            return
        self.wait()
        started = time.perf_counter()
        self.flush()
        self._stored(time.perf_counter() - started)

    def wait(self) -> None:
        if self.pending is not None:
            started = time.perf_counter()
            self.pending.join()
            self._stored(time.perf_counter() - started)  # only the time training waited
            self.pending = None

    def _timed_flush(self, before_step: int) -> None:
        started = time.perf_counter()
        self.flush(before_step)
        self.flush_s = time.perf_counter() - started

    def _stored(self, seconds: float) -> None:
        self.store_seconds += seconds
        self.clock.add(store_s=seconds)

    def flush(self, before_step: int | None = None) -> None:
        """Ingest the shards written since the last flush (of steps before `before_step`; all of
        them when None), every rank's, code them, and store the metrics."""
        if self.db_path is None:
            return
        from curriculab.analysis.coding import run_verifier_coder
        from curriculab.analysis.ingest import ingest
        from curriculab.analysis.store import Store

        shards = sorted(
            str(p)
            for p in self.writer.directory.glob("step-*.jsonl")
            if str(p) not in self.ingested and (before_step is None or shard_step(p) < before_step)
        )
        with Store(self.db_path) as store:
            if shards:  # only what is new since the last checkpoint (ingest would skip the rest, after reading it)
                ingest(store, shards, fmt="jsonl", workers=1)
                self.ingested.update(shards)
                run_verifier_coder(store, run_id=self.run_id, uncoded_only=True)
            store_metrics(store, self.run_id, self.metrics_path)


class IngestAtSaves(TrainerCallback):
    """An agentic run's episodes and metrics written so far, ingested and coded at each checkpoint
    and at the end (`ingest`: the main process's; None: no store or another rank), the time counted
    as the step's store time. On several processes every rank `wait`s before (each has written the
    step's episodes) and after (none writes the next step's while they are read)."""

    def __init__(
        self, ingest: Callable[[], None] | None, clock: StepClock, wait: Callable[[], None] = lambda: None
    ) -> None:
        self.ingest, self.clock, self.wait = ingest, clock, wait
        self.seconds = 0.0
        """Time spent ingesting over the run."""

    def _ingest(self) -> None:
        started = time.perf_counter()
        self.wait()
        if self.ingest is not None:
            self.ingest()
        self.wait()
        elapsed = time.perf_counter() - started
        self.seconds += elapsed
        self.clock.add(store_s=elapsed)

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        self._ingest()

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._ingest()


@dataclass
class RunCallbacks:
    """The callbacks of one run, in the order they act (iterate to pass them to a trainer)."""

    bar: ProgressBar
    schedule: DynamicSchedule | None
    metrics: MetricsLog
    ingest: RolloutIngest
    budget: TimeBudget | None

    def __iter__(self) -> Iterator[TrainerCallback]:
        return (c for c in (self.bar, self.schedule, self.metrics, self.ingest, self.budget) if c is not None)

    @property
    def store_seconds(self) -> float:
        """What the training loop spent on the metrics file and waiting for the store."""
        return self.metrics.store_seconds + self.ingest.store_seconds


def run_callbacks(
    curriculum: TierCurriculum,
    writer: RolloutWriter,
    db_path: str | None,
    run_id: str,
    metrics_path: Path,
    *,
    dynamic: DynamicSettings | None = None,
    summary: Callable[[int, dict[str, float]], None] | None = None,
    stats: ProblemStats | None = None,
    clock: StepClock | None = None,
    stop_after_s: float | None = None,
    started: float | None = None,
    setup_started: float | None = None,
    main_process: bool = True,
    live: LiveAllocation | None = None,
) -> RunCallbacks:
    """The callbacks a curriculum run uses: the dynamic schedule only with `dynamic` settings, the
    time budget only with `stop_after_s`. In a multi-process run every rank follows the schedule,
    and rank 0 alone shows progress and writes the metrics and the store, once for all ranks."""
    clock = clock or StepClock()
    started = started or time.perf_counter()
    ingest = RolloutIngest(writer, db_path, run_id, metrics_path, clock, main_process)
    return RunCallbacks(
        ProgressBar(main_process),
        DynamicSchedule(dynamic, live if live is not None else LiveAllocation()) if dynamic else None,
        MetricsLog(curriculum, metrics_path, clock, summary, stats, main_process),
        ingest,
        TimeBudget(stop_after_s, started, setup_started or started, lambda: 2 * ingest.flush_s)
        if stop_after_s is not None
        else None,
    )
