"""The canonical trajectory model: what every importer produces and every coder reads.

The model is storage-agnostic (no DuckDB here); `analysis.store` maps it to rows. It is also
the project's own JSONL format: one `Trajectory` per line, `format_version` on every record.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from curriculab.trajectory.vocabulary import (  # noqa: F401 (re-exported: the model's own names)
    ACTIONS,
    HARNESS_ERRORS,
    INT32_MAX,
    INT64_MAX,
    OUTCOMES,
    STEP_SOURCES,
    TASK_TIERS,
    TIERS,
    Action,
    Outcome,
    StepSource,
    Tier,
)

FORMAT_VERSION = "1.0"
"""Version of the canonical model and of the JSONL format built on it."""


class _Model(BaseModel):
    # Unknown keys are errors, so a typo in a JSONL record is reported, not silently dropped.
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


class Task(_Model):
    """A unit of work an agent attempts: one instruction, one verifier."""

    task_id: str = Field(min_length=1)
    """Stable identifier of the task, unique across sources (e.g. `tb/hello-world`)."""
    source: str | None = None
    """Benchmark or dataset the task comes from (e.g. `terminal-bench-core`)."""
    instruction: str | None = None
    """The instruction the agent received."""
    task_type: str | None = None
    """Kind of work: bugfix, feature, refactor, scripting, data-processing, ..."""
    language: str | None = None
    """Main programming language of the task's codebase."""
    tier_authored: str | None = None
    """Curriculum rung the task's author assigned (basic, intermediate, complex, edge)."""
    difficulty_authored: str | None = None
    """Difficulty label the author assigned (easy, medium, hard); measured difficulty lives elsewhere."""
    codebase_files: int | None = Field(default=None, ge=0, le=INT32_MAX)
    """Number of files in the starting codebase: a proxy for its scale."""
    n_milestones: int | None = Field(default=None, ge=0, le=INT32_MAX)
    """Number of ordered milestones the verifier checks, when it checks any."""
    tags: list[str] = Field(default_factory=list)
    """Free-form labels from the task's metadata."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Everything else the source carried about the task (timeouts, category, ...)."""


class Run(_Model):
    """One evaluation or training job: an agent and a model over a set of tasks."""

    run_id: str = Field(min_length=1)
    """Stable identifier of the run (a job id, a `tb run` id, a file stem)."""
    agent: str | None = None
    """Agent harness name (e.g. `terminus-2`, `claude-code`), without its version."""
    agent_version: str | None = None
    """Agent harness version, when the source says (None for Harbor's `unknown`)."""
    model: str | None = None
    """Model the agent drove, as the source names it."""
    dataset: str | None = None
    """Dataset or benchmark the run evaluated."""
    source_format: str | None = None
    """Importer that read this run: atif, harbor, tb, swe-agent, inspect, jsonl."""
    source_path: str | None = None
    """File or directory the run was read from."""
    started_at: datetime | None = None
    """When the run started, if the source says."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The run's configuration as the source recorded it."""


class Step(_Model):
    """One normalised event of a trajectory: an agent action with its observed output."""

    step_idx: int = Field(ge=0, le=INT32_MAX)
    """Position in the trajectory, from 0, after splitting multi-command calls."""
    source: StepSource
    """Who produced the step: system, user, agent or env."""
    message: str | None = None
    """Free text the source wrote (the agent's message, a prompt)."""
    tool_name: str | None = None
    """Name of the tool the agent called, as the agent called it (`bash_command`, `Edit`, ...)."""
    action: Action | None = None
    """Normalised action: read a file, edit a file, run a command, declare completion, message, or
    `other` (a tool whose effect is unknown: neither a change nor a verification)."""
    path: str | None = None
    """File a read or edit touches, when one can be named."""
    command: str | None = None
    """Shell command (one command after splitting) or tool invocation text."""
    output: str | None = None
    """What the environment returned, possibly capped (see `output_truncated`)."""
    exit_code: int | None = Field(default=None, ge=-INT32_MAX - 1, le=INT32_MAX)
    """Exit status where the format carries one, as a field or as the status line the agent's output
    prints (`Exit Code: 1`); never guessed from other text. For a part of a command line whose parts'
    statuses the log does not separate (`a && b`), unknown (None): the status is the call's."""
    call_exit_code: int | None = Field(default=None, ge=-INT32_MAX - 1, le=INT32_MAX)
    """The exit status of the whole tool call this step is part of (every part of `a && b` carries
    the line's); None: the step's own `exit_code`."""
    tool_failed: bool | None = None
    """The agent's own format flags the call as failed (Claude Code's is_error) or not; None when it
    says nothing. Used, with the exit status, to decide `steps.error_observed`."""
    output_truncated: bool = False
    """True when the output shown was cut, by the agent harness or by ingest's size cap."""
    raw: dict[str, Any] | None = None
    """The original call (tool name and arguments) this step was normalised from."""
    ts: datetime | None = None
    """When the step happened, if the source says."""
    call_id: str | None = None
    """The tool call this step came from; steps split from one call share it."""


class TestResult(_Model):
    """Outcome of one verifier test for one trajectory."""

    __test__ = False  # not a pytest test class

    test_id: str = Field(min_length=1)
    """Test name as the verifier reports it."""
    tier: Tier | None = None
    """Test tier (basic, intermediate, complex, edge) where the problem set defines one."""
    milestone_idx: int | None = Field(default=None, ge=0, le=INT32_MAX)
    """Milestone the test belongs to (from 0), for milestone-graded tasks."""
    passed: bool
    """Whether the test passed."""
    status: str | None = Field(default=None, max_length=64)
    """How the test ended, as the verifier reports it: the sandbox's ok, failed, timeout, crashed,
    memory, output_limit or load_error; CTRF's passed, failed, skipped, pending or other;
    Terminal-Bench's passed or failed. None where the source says only passed or not."""
    detail: str | None = Field(default=None, max_length=4000)
    """The verifier's message for a failed test (assertion text, `ExceptionType: message`), shortened."""


class Trajectory(_Model):
    """One attempt of one agent/model at one task, with its steps and verdict."""

    format_version: str = FORMAT_VERSION
    """Canonical format version this record follows."""
    trajectory_id: str = Field(min_length=1)
    """Stable identifier of the attempt (a session id, a trial name)."""
    run_id: str = Field(min_length=1)
    """Run the attempt belongs to."""
    task_id: str = Field(min_length=1)
    """Task attempted."""
    model: str | None = None
    """Model that produced the agent's steps, as the source names it (None when it does not say;
    the store then attributes the attempt to the run's agent, see `trajectories.model_raw`)."""
    actions_logged: bool = True
    """False when the source holds only how the agent was launched, not what it did (an installed
    agent in a Terminal-Bench log): behavioural coders abstain on such a trajectory."""
    attempt: int | None = Field(default=None, ge=0, le=INT32_MAX)
    """Attempt number for this model and task (from 0), when repeated attempts exist."""
    outcome: Outcome | None = None
    """Verdict: passed, failed, or error (the harness failed). None when the source has no verdict."""
    reward: float | None = Field(default=None, allow_inf_nan=False, strict=True)
    """Verifier's numeric reward, if any."""
    harness_error: str | None = None
    """Infrastructure fault that ended the attempt (agent_timeout, test_timeout, parse_error, ...)."""
    exception_type: str | None = None
    """The source's own name for the fault (Harbor's `exception_type`, e.g. RuntimeError), kept as read."""
    milestones_passed: int | None = Field(default=None, ge=0, le=INT32_MAX)
    """Milestones completed in order before the first failing one."""
    milestones_total: int | None = Field(default=None, ge=0, le=INT32_MAX)
    """Milestones the task defines."""
    input_tokens: int | None = Field(default=None, ge=0, le=INT64_MAX)
    """Prompt tokens the attempt consumed."""
    output_tokens: int | None = Field(default=None, ge=0, le=INT64_MAX)
    """Completion tokens the attempt produced."""
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Cost of the attempt in US dollars."""
    started_at: datetime | None = None
    """When the attempt started."""
    ended_at: datetime | None = None
    """When the attempt ended."""
    agent_started_at: datetime | None = None
    """When the agent itself started (Terminal-Bench's `agent_started_at`, Harbor's `agent_execution`):
    the trial's own start also counts setting up the environment and the agent."""
    agent_ended_at: datetime | None = None
    """When the agent itself stopped (ran out of time, crashed or finished); the tests run after."""
    recording: str | None = None
    """Where the run keeps the agent's terminal as an asciinema recording (a path; the bytes stay there)."""
    panes: str | None = None
    """Where the run keeps the agent's terminal screen as it was when the agent stopped (a path)."""
    steps: list[Step] = Field(default_factory=list)
    """Normalised steps, in order."""
    test_results: list[TestResult] = Field(default_factory=list)
    """Per-test verdicts, when the verifier reports them."""
    task: Task | None = None
    """Task description, when the record carries it (JSONL records usually do)."""
    run: Run | None = None
    """Run description, when the record carries it."""

    @field_validator("format_version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        if value.split(".")[0] != FORMAT_VERSION.split(".")[0]:
            raise ValueError(f"format_version {value!r} is not supported; this curriculab reads {FORMAT_VERSION}")
        return value


class FailureCode(_Model):
    """One taxonomy code assigned to one trajectory by one coder, with its evidence."""

    trajectory_id: str
    """Trajectory the code applies to."""
    code: str
    """Taxonomy code, e.g. `skipped_verification`."""
    taxonomy_version: str
    """Taxonomy version the code comes from, e.g. `v1`."""
    coder: str
    """Who assigned it: `rules`, `classifier:<id>`, `judge:<model>`."""
    confidence: float | None = Field(default=None, ge=0, le=1)
    """Coder's confidence in [0, 1], when it has one."""
    evidence_steps: list[int] = Field(default_factory=list)
    """`step_idx` values of the steps that show the failure."""
    rationale: str | None = None
    """One line saying why."""
    coded_at: datetime | None = None
    """When the code was assigned."""
