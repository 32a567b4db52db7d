"""A supervised warm-up before agentic GRPO, and the cache of warmed models (`warmed_agent_model`): a model that has never seen the tool-calling format
(the tiny test model, a small instruct model) rarely writes a call TRL can parse, so every rollout
would be one turn of text and the environment would never be exercised.

The demonstrations are real episodes, not written transcripts: each runs in the episode
environment — a look around (`ls`), the task's own solution as one command, and, in every other
demonstration, a check of what changed — and the conversation records what the tools really
answered. Half check and half do not, on purpose: the warm-up should not decide the behaviour the
verification reward is there to move (`verification_share` says which share it taught).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curriculab.taxonomy.coders.environment import INCIDENTAL
from curriculab.training.terminal.episode import Episode
from curriculab.training.terminal.shared import CommandResult, EpisodeLimits
from curriculab.training.terminal.task import TerminalTask

DONE_MESSAGE = "Done."
"""The demonstrations' last assistant turn."""
WARM_UP_EPOCHS = 12
"""Epochs of the supervised warm-up (enough for the tiny model to write well-formed calls part of the time)."""
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
    found = [solution_command(task, i) for i in range(len(task.steps))]
    solutions = [command for command in found if command is not None]
    if len(solutions) < len(found):
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
    found: list[Demonstration] = []
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


def speaks_tool_format(model_dir: Path) -> bool:
    """Whether the model at `model_dir` was saved with the tool-calling chat format (warmed up here)."""
    from curriculab.training.terminal.chat import TOOL_CHAT_TEMPLATE

    for name in ("chat_template.jinja", "tokenizer_config.json"):
        path = model_dir / name
        if path.is_file():
            text = path.read_text()
            template = text if name.endswith(".jinja") else json.loads(text).get("chat_template")
            if template == TOOL_CHAT_TEMPLATE:
                return True
    return False


def warmed_agent_model(
    model: str,
    tasks: Mapping[str, Path],
    cache_dir: Path,
    announce: Callable[[str], None] | None = None,
    backend: str = "bwrap",
) -> tuple[str, str]:
    """(model directory, short name) of a model that can call the terminal's tool: the base model
    with the tool-calling chat format, fine-tuned on demonstration episodes of `tasks` (run on the
    episode `backend`; made once per base model and task set, cached)."""
    from curriculab.training.models import TrainError, resolve_model, tiny_agent_model_dir
    from curriculab.training.terminal.task import load_task

    if model == "tiny":
        base, name = str(tiny_agent_model_dir(cache_dir)), "tiny-agent"
    else:
        base, _, name = resolve_model(model, cache_dir)
        if speaks_tool_format(Path(base)):  # a model trained here before (an earlier round's): no warm-up
            return base, name
    digest = hashlib.sha256("\n".join([base, str(WARM_UP_EPOCHS), str(DEMONSTRATIONS_VERSION)]).encode())
    for task_id, folder in sorted(tasks.items()):  # an edited task or solution makes other demonstrations
        digest.update(task_id.encode())
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    key = digest.hexdigest()[:10]
    target = cache_dir / "warmed" / f"{name}-{key}"
    if (target / "config.json").exists():
        return str(target), name
    demos = demonstrations([load_task(p) for p in tasks.values()], backend=backend)
    if not demos:
        raise TrainError("no task in the suite has a solution that passes: nothing to demonstrate for the warm-up")
    if announce:
        announce(
            f"warm-up: {len(demos)} demonstration episodes ({verification_share(demos):.0%} check their work), "
            f"{WARM_UP_EPOCHS} epochs of trl.SFTTrainer → {target}"
        )
    # a folder of this process's own: two runs warming the same model at once must not write into one
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    warm_up(base, demos, partial, epochs=WARM_UP_EPOCHS)
    try:
        partial.rename(target)
    except OSError:
        if not (target / "config.json").exists():
            raise
        shutil.rmtree(partial)  # another run finished the same warm-up first: its copy is as good
    return str(target), name
