"""An episode written as a Harbor trial directory, so it lands in the store as any agent's trial:
`<job>/<trial>/result.json` (Harbor's TrialResult: the verifier's rewards per milestone),
`agent/trajectory.json` (ATIF: one agent step per assistant turn with its `bash` tool calls, each
observation with its exit code, token counts and timings) and `verifier/ctrf.json` (one test per
milestone, `extra.milestone` its index). `curriculab ingest <job>` reads it back."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from curriculab.training.terminal.shared import CommandResult, EpisodeResult
from curriculab.training.terminal.task import TerminalTask

AGENT = "curriculab-terminal"
"""The agent name episodes are stored under (its tools are in `trajectory/agents.yaml`)."""
ATIF_VERSION = "ATIF-v1.5"


@dataclass
class Turn:
    """One assistant turn of a rollout: what it said, which of the episode's commands it sent
    (indices into `Episode.commands`), and its token counts when the trainer knows them."""

    message: str | None
    """The turn's text (None: only tool calls)."""
    commands: list[int] = field(default_factory=list)
    """Indices of the episode's commands this turn sent, in order."""
    prompt_tokens: int | None = None
    """Tokens the model read for this turn."""
    completion_tokens: int | None = None
    """Tokens it wrote."""


def _stamp(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch is not None else None


def _observation(command: CommandResult) -> str:
    """As `TerminalEnvironment.bash` showed it: the exit code first, then the output."""
    return f"[exit code {command.exit_code}]\n{command.output}"


def write_trial(
    job_dir: Path | str,
    trial_name: str,
    task: TerminalTask,
    result: EpisodeResult,
    *,
    model: str | None = None,
    agent: str = AGENT,
    turns: list[Turn] | None = None,
    started_at: float | None = None,
    finished_at: float | None = None,
    told_at_once: bool = False,
) -> Path:
    """Write the episode as `<job_dir>/<trial_name>/` and return that folder. Without `turns`,
    each command is a turn of its own with no text. `told_at_once`: the agent was given every
    step's instruction at the start (`TerminalTask.agent_instruction`, as in training), not each
    step's as its turn came."""
    commands = result.commands
    turns = turns if turns is not None else [Turn(None, [i]) for i in range(len(commands))]
    trial = Path(job_dir) / trial_name
    (trial / "agent").mkdir(parents=True, exist_ok=True)
    (trial / "verifier").mkdir(exist_ok=True)
    steps: list[dict[str, Any]] = [
        {
            "step_id": 1,
            "timestamp": _stamp(started_at),
            "source": "user",
            "message": task.agent_instruction if told_at_once else task.steps[0].instruction,
        }
    ]
    # the harness's replay of the agent's last test-runner check (`CheckRun`; null: none replayed)
    # goes with the last command written, for the environment coder; not where no verdict was reached
    written = [i for turn in turns for i in turn.commands]
    carrier = max(written) if written and result.failure is None else None
    last = result.steps[-1].check_run if result.steps else None
    replay = None if last is None else {**dataclasses.asdict(last), "argv": list(last.argv)}
    shown_step = 0
    for turn in turns:
        sent = [commands[i] for i in turn.commands]
        if sent and sent[0].step != shown_step:  # a multi-step task's next instruction
            shown_step = sent[0].step
            steps.append(
                {
                    "step_id": len(steps) + 1,
                    "timestamp": _stamp(sent[0].started_at),
                    "source": "user",
                    "message": task.steps[shown_step].instruction,
                }
            )
        step: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "timestamp": _stamp(sent[0].started_at if sent else None),
            "source": "agent",
            "model_name": model,
            "message": turn.message or "",
        }
        if sent:
            ids = [f"call_{i}" for i in turn.commands]
            step["tool_calls"] = [
                {"tool_call_id": i, "function_name": "bash", "arguments": {"command": c.command}}
                for i, c in zip(ids, sent)
            ]
            step["observation"] = {
                "results": [{"source_call_id": i, "content": _observation(c)} for i, c in zip(ids, sent)]
            }
            step["extra"] = {
                "commands": [
                    {
                        "exit_code": c.exit_code,
                        "seconds": round(c.seconds, 4),
                        "timed_out": c.timed_out,
                        "changed": c.changed,
                        **({"unobserved": c.unobserved} if c.unobserved else {}),
                        # what the shell executed (a check counts only if it ran), with each status
                        **({"executed": [list(e) for e in c.executed]} if c.executed is not None else {}),
                        **({"ran_note": c.ran_note} if c.ran_note else {}),
                        **({"check_run": replay} if i == carrier else {}),
                    }
                    for i, c in zip(turn.commands, sent)
                ]
            }
        if turn.prompt_tokens is not None or turn.completion_tokens is not None:
            step["metrics"] = {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens}
        steps.append(step)
    prompt_tokens = [t.prompt_tokens for t in turns if t.prompt_tokens is not None]
    completion_tokens = [t.completion_tokens for t in turns if t.completion_tokens is not None]
    atif: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": trial_name,
        "agent": {"name": agent, "version": None, "model_name": model},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": sum(prompt_tokens) if prompt_tokens else None,
            "total_completion_tokens": sum(completion_tokens) if completion_tokens else None,
            "total_steps": len(steps),
        },
        "extra": {
            "task_id": task.task_id,
            "milestones": result.milestones,
            "rewards": result.rewards,
            # why a verdict is 0 whatever the verifier wrote (test.sh exited non-zero, unjudgeable files)
            "refused": {s.step: s.refused for s in result.steps if s.refused},
            # the agent's shell broke or imitated the harness's end-of-command marker: its 0
            "forfeited": result.forfeited,
        },
    }
    milestones = list(result.milestones.items())
    ctrf = {
        "results": {
            "tool": {"name": "curriculab"},
            "summary": {
                "tests": len(milestones),
                "passed": sum(v >= 1 for _, v in milestones),
                "failed": sum(v < 1 for _, v in milestones),
            },
            "tests": [
                {"name": name, "status": "passed" if value >= 1 else "failed", "extra": {"milestone": index}}
                for index, (name, value) in enumerate(milestones)
            ],
        }
    }
    verdict_error = result.failure or result.error
    error_type = "EnvironmentError" if result.failure else "VerifierError"
    trial_result = {
        "id": trial_name,
        "task_name": task.task_id,
        "trial_name": trial_name,
        "source": "curriculab-terminal",
        "config": {
            "task": {"path": task.task_id, "source": "curriculab-terminal"},
            "agent": {"name": agent, "model_name": model},
        },
        "agent_info": {
            "name": agent,
            "version": None,
            "model_info": {"name": model, "provider": None} if model else None,
        },
        "agent_result": {
            "n_input_tokens": atif["final_metrics"]["total_prompt_tokens"],
            "n_output_tokens": atif["final_metrics"]["total_completion_tokens"],
        },
        "verifier_result": {"rewards": {**result.rewards, "reward": result.reward}} if verdict_error is None else None,
        "exception_info": {"exception_type": error_type, "exception_message": verdict_error}
        if verdict_error is not None
        else None,
        "started_at": _stamp(started_at),
        "finished_at": _stamp(finished_at),
    }
    (trial / "result.json").write_text(json.dumps(trial_result, indent=2))
    (trial / "agent" / "trajectory.json").write_text(json.dumps(atif, indent=2))
    (trial / "verifier" / "ctrf.json").write_text(json.dumps(ctrf, indent=2))
    return trial
