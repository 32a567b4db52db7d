"""A supervised warm-up before agentic GRPO: a model that has never seen the tool-calling format
(the tiny test model, a small instruct model) rarely writes a call TRL can parse, so every rollout
would be one turn of text and the environment would never be exercised.

The demonstrations are real episodes, not written transcripts: each runs in the episode
environment — a look around (`ls`), the task's own solution as one command, and, in every other
demonstration, a check of what changed — and the conversation records what the tools really
answered. Half check and half do not, on purpose: the warm-up should not decide the behaviour the
verification reward is there to move (`verification_share` says which share it taught).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curriculab.taxonomy.coders.environment import INCIDENTAL
from curriculab.training.terminal.episode import CommandResult, Episode, EpisodeLimits
from curriculab.training.terminal.task import TerminalTask

DONE_MESSAGE = "Done."
"""The demonstrations' last assistant turn."""
DEMONSTRATIONS_VERSION = 2
"""Changes when what a demonstration does changes (2: multi-step tasks too), so that a warmed
model cached under the old demonstrations is made again."""
_SHEBANG_OR_STRICT = re.compile(r"^(#!.*|set -[a-z]*e[a-z]*)$")


@dataclass
class Demonstration:
    """One real episode as a chat, ready for `trl.SFTTrainer` (`messages` and `tools` columns)."""

    task_id: str
    """The task it solved."""
    messages: list[dict[str, Any]]
    """The conversation: user instruction, assistant tool calls, tool answers, the final turn."""
    checked: bool
    """Whether it ran a check after its last change."""
    reward: float
    """The verifier's reward for it (a demonstration that does not pass is not used)."""
    commands: list[CommandResult] = field(default_factory=list)
    """What it ran."""


def solution_command(task: TerminalTask, step: int = 0) -> str | None:
    """A step's solve.sh as one command the agent could type (its leading shebang and `set -e`
    dropped: the agent's shell persists, and `set -e` would end it at the next failing command)."""
    solution = task.steps[step].solution_dir
    script = solution / "solve.sh" if solution else None
    if script is None or not script.is_file():
        return None
    lines = script.read_text().splitlines()
    while lines and (not lines[0].strip() or _SHEBANG_OR_STRICT.match(lines[0].strip())):
        lines.pop(0)  # only the script's own head: a heredoc may carry a shebang of the file it writes
    return "\n".join(lines).strip() or None


def check_command(changed: Sequence[str]) -> str:
    """A check of what the solution changed: run the scripts and programs it wrote, else read the files."""
    edited = [p for p in changed if not INCIDENTAL.search(p)]
    runnable = [p for p in edited if p.endswith((".py", ".sh"))]
    if runnable:
        path = runnable[0]
        return f"{'python3' if path.endswith('.py') else 'bash'} {shlex.quote(path)}"
    return "cat " + " ".join(shlex.quote(p) for p in edited[:3]) if edited else "ls -la"


def _call(command: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "bash", "arguments": {"command": command}}}


def demonstrate(
    task: TerminalTask, check: bool, limits: EpisodeLimits | None = None, backend: str = "bwrap"
) -> Demonstration | None:
    """Run one demonstration episode of `task`: a look around, every step's solution in order (the
    agent is told every step at once, as in training), and a check when `check`. None when a step
    has no solution script."""
    solutions = [solution_command(task, i) for i in range(len(task.steps))]
    if None in solutions:
        return None
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.agent_instruction}]
    with Episode(task, limits, backend=backend, observe=True) as episode:
        for command in ["ls", *solutions, "<check>"] if check else ["ls", *solutions]:
            if command == "<check>":
                command = check_command(episode.commands[-1].changed)
            done = episode.run(command)
            messages.append({"role": "assistant", "content": "", "tool_calls": [_call(command)]})
            messages.append({"role": "tool", "name": "bash", "content": f"[exit code {done.exit_code}]\n{done.output}"})
        messages.append({"role": "assistant", "content": DONE_MESSAGE})
        result = episode.finish()
        return Demonstration(task.task_id, messages, check, result.reward, list(episode.commands))


def demonstrations(
    tasks: Sequence[TerminalTask],
    limits: EpisodeLimits | None = None,
    backend: str = "bwrap",
    progress: Any = None,
) -> list[Demonstration]:
    """One demonstration per task whose solutions pass, every other one checking. `progress(task_id)`
    is called as each runs."""
    found = []
    for task in sorted(tasks, key=lambda t: t.task_id):
        if progress:
            progress(task.task_id)
        demo = demonstrate(task, check=len(found) % 2 == 0, limits=limits, backend=backend)
        if demo is not None and demo.reward == 1.0:
            found.append(demo)
    return found


def verification_share(demos: Sequence[Demonstration]) -> float:
    """The share of demonstrations that checked their work (what the warm-up teaches)."""
    return sum(d.checked for d in demos) / len(demos) if demos else 0.0


def warm_up(
    model_dir: Path | str,
    demos: Sequence[Demonstration],
    output_dir: Path | str,
    epochs: int = 8,
    learning_rate: float = 3e-3,
    seed: int = 0,
) -> Path:
    """Fine-tune the model at `model_dir` on `demos` with `trl.SFTTrainer` (CPU) and save the model
    and its tool-calling tokenizer to `output_dir`, which is returned."""
    import json

    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import get_json_schema
    from trl import SFTConfig, SFTTrainer

    from curriculab.training.callback import ProgressBar, drop_library_progress
    from curriculab.training.terminal.chat import enable_tool_calling
    from curriculab.training.terminal.environment import TerminalEnvironment

    tokenizer = enable_tool_calling(AutoTokenizer.from_pretrained(str(model_dir)))
    tools = json.dumps([get_json_schema(TerminalEnvironment.bash)])
    rows = Dataset.from_list([{"messages": d.messages, "tools": tools} for d in demos])
    args = SFTConfig(
        output_dir=str(Path(output_dir) / "sft"),
        num_train_epochs=epochs,
        per_device_train_batch_size=4,
        learning_rate=learning_rate,
        lr_scheduler_type="constant",
        logging_steps=5,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=seed,
        max_length=4096,
        disable_tqdm=True,
        assistant_only_loss=True,  # the template marks assistant turns: learn the calls, not the tools' answers
    )
    network = AutoModelForCausalLM.from_pretrained(str(model_dir))
    trainer = SFTTrainer(
        model=network,
        args=args,
        train_dataset=rows,
        processing_class=tokenizer,
        callbacks=[ProgressBar(desc="SFT warm-up")],
    )
    drop_library_progress(trainer)
    trainer.train()
    network.save_pretrained(str(output_dir))
    tokenizer.save_pretrained(str(output_dir))
    return Path(output_dir)
