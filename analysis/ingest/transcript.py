"""The agent's own terminal where a Terminal-Bench trial keeps it, and the steps an installed agent
prints there.

A trial directory keeps the agent's terminal twice: `sessions/agent.cast` (an asciinema v2
recording of the whole session) and `panes/post-agent.txt` (the tmux screen and its scroll-back as
it was when the agent stopped; `pre-agent.txt` and `post-test.txt` beside it). The store keeps
where they are, never their bytes.

An installed agent (OpenHands, mini-swe-agent, Claude Code, ...) runs as one program, so the
keystroke log shows only its invocation. Where the program prints each of its steps into the
terminal in a known shape, the final screen holds them. Read today:

- **mini-swe-agent** (1.x): each step is a heading `mini-swe-agent (step N, $COST):`, the model's
  `THOUGHT: ...` and one fenced ```` ```bash ```` command, then `User:` with
  `<returncode>N</returncode>` and `<output>...</output>`. Lines are wrapped at the terminal's width
  as printed (a long command reads with the breaks the screen shows). `echo
  COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` is its way to declare the task done (a `complete` step).

OpenHands prints its controller's log (`CmdRunAction (id=13)`, `POST /execute_action`), not its
commands: its steps are not recoverable from the terminal, and its trajectories stay unread
(`actions_logged` false). A screen whose scroll-back lost the first steps (tmux keeps a bounded
history) is not read either: coders judge a whole trajectory or none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

RECORDING = Path("sessions") / "agent.cast"
"""The agent's session as an asciinema recording, relative to the trial directory."""
FINAL_PANES = Path("panes") / "post-agent.txt"
"""The agent's terminal screen when it stopped, relative to the trial directory."""

_MINI_STEP = re.compile(r"^mini-swe-agent \(step (\d+), \$[\d.]+\):\s*$", re.M)
_BASH_BLOCK = re.compile(r"```bash\n(.*?)\n```", re.S)
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>", re.S)
_MINI_SUBMIT = re.compile(r"^echo (COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b")
_RULE = re.compile(r"^─{10,}.*$", re.M)  # rich's separator between steps


@dataclass(frozen=True)
class PrintedStep:
    """One step an installed agent printed: its reasoning, the command it ran and what came back."""

    number: int
    thought: str
    command: str | None
    exit_code: int | None
    output: str | None
    completes: bool = False
    """The command is the agent's way to declare the task done."""


def terminal_files(trial_dir: Path) -> tuple[str | None, str | None]:
    """(recording, final screen): the paths of the trial's agent recording and post-agent panes, each
    None where the trial keeps none."""
    recording, panes = trial_dir / RECORDING, trial_dir / FINAL_PANES
    return (str(recording) if recording.is_file() else None, str(panes) if panes.is_file() else None)


def mini_swe_agent_steps(screen: str) -> list[PrintedStep] | None:
    """The steps mini-swe-agent printed on `screen`, in order; None when the screen holds none or
    lost its first ones (its scroll-back starts after step 1), so that no coder reads a part as the whole."""
    headings = list(_MINI_STEP.finditer(screen))
    if not headings or int(headings[0].group(1)) != 1:
        return None
    steps = []
    for k, heading in enumerate(headings):
        end = headings[k + 1].start() if k + 1 < len(headings) else len(screen)
        body = _RULE.split(screen[heading.end() : end], maxsplit=1)[0]
        said, _, answer = body.partition("\nUser:")
        block = _BASH_BLOCK.search(said)
        thought = (said[: block.start()] if block else said).strip()
        thought = thought.removeprefix("THOUGHT:").strip()
        code = _RETURNCODE.search(answer)
        output = _OUTPUT.search(answer)
        command = block.group(1).strip() if block else None
        steps.append(
            PrintedStep(
                number=int(heading.group(1)),
                thought=thought,
                command=command,
                exit_code=int(code.group(1)) if code else None,
                output=output.group(1).rstrip("\n") if output else (answer.strip() or None),
                completes=command is not None and _MINI_SUBMIT.match(command) is not None,
            )
        )
    return steps


PRINTED_STEPS = {"mini-swe-agent": mini_swe_agent_steps}
"""Installed agents whose printed steps are read, by the agent name `tb.INSTALLED_AGENTS` gives."""
