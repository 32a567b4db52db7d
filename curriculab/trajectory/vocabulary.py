"""The domain vocabularies, defined once: the Literal types validate records, the tuples are what
the rest of curriculab imports instead of re-typing the words. Plain Python, no pydantic: the
sandbox and the problem sets import them on paths where start-up time is what the user waits for.
`curriculab.trajectory.model` re-exports every name here.
"""

from __future__ import annotations

from typing import Literal, get_args

StepSource = Literal["system", "user", "agent", "env"]
Action = Literal["read", "edit", "run", "complete", "message", "other"]
Outcome = Literal["passed", "failed", "error"]
Tier = Literal["basic", "intermediate", "complex", "edge"]
STEP_SOURCES: tuple[str, ...] = get_args(StepSource)
ACTIONS: tuple[str, ...] = get_args(Action)
OUTCOMES: tuple[str, ...] = get_args(Outcome)
TIERS: tuple[str, ...] = get_args(Tier)
"""Test tiers, easiest first (TAROT's basic, intermediate, complex, edge)."""
TASK_TIERS: tuple[str, ...] = TIERS[:3]
"""Task tiers an author assigns and the difficulty fit measures (edge is a test tier only)."""

HARNESS_ERRORS: tuple[str, ...] = (
    "agent_timeout",
    "test_timeout",
    "parse_error",
    "install_failed",
    "sandbox_error",
    "environment_error",
    "missing_reward",
    "agent_crashed",
    "model_api_error",
    "unknown_agent_error",
    "unknown_error",
    "llm_parse_error",
    "context_length_exceeded",
    "output_length_exceeded",
)
"""Faults the importers name (`trajectories.harness_error`): the agent's own (a timeout, a crash, an
answer it could not parse, a context or output limit: without a verdict the attempt is `failed`)
or the infrastructure's (without a verdict, `error`)."""

AGENT_FAULTS = frozenset(
    {
        "agent_timeout",
        "unknown_agent_error",
        "agent_crashed",
        "llm_parse_error",
        "context_length_exceeded",
        "output_length_exceeded",
    }
)
"""Harness errors that are the agent's own doing (it crashed, ran out of time, broke its own
output): without a verdict the attempt is `failed`, as leaderboards count it, with the harness
error kept. Any other fault (the environment, the install, the verifier, the reward) leaves no
verdict: `error`, outside pass rates (taxonomy v4's `harness_failure`)."""


INT32_MAX = 2**31 - 1
"""Largest value of the store's INTEGER columns (steps, attempts, milestones, exit codes)."""
INT64_MAX = 2**63 - 1
"""Largest value of its BIGINT columns (token counts)."""

SOURCE_FORMATS: tuple[str, ...] = (
    "atif",
    "harbor",
    "tb",
    "swe-agent",
    "mini-swe-agent",
    "claude-code",
    "codex-cli",
    "openhands",
    "inspect",
    "jsonl",
)
"""The formats `ingest` reads trajectories from (`--format`; `auto` detects them, `tasks` reads only
task directories)."""

MANY_AGENT_FORMATS = frozenset({"atif", "harbor", "tb", "inspect", "jsonl"})
"""Formats that carry many agents' steps, each converted from the agent's own log in its own way (a
Codex trial and a Claude Code trial in one Harbor job read differently); the other formats are one
agent's own log."""

POOLED_FAMILY = ""
"""The family of a measurement over every format at once (`code_reliability.family`)."""


def format_family(source_format: str | None, agent: str | None) -> str:
    """The family a coder's reliability is measured per: a one-agent format names it alone
    (`claude-code`, `swe-agent`); a many-agent format with its agent (`harbor/codex`), since how
    well a rule reads steps depends on the agent that wrote them, not on the container."""
    fmt = source_format or "unknown"
    if fmt in MANY_AGENT_FORMATS:
        return f"{fmt}/{(agent or 'unknown').strip().lower() or 'unknown'}"
    return fmt
