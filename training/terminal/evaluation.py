"""The held-out evaluation of an agent: one greedy episode per held-out task, run as TRL's turn
loop runs them and scored by training's outcome reward (`milestone_reward`: a multi-step task's
`final` strategy respected, milestones clamped to [0, 1]); an episode the environment failed is
counted apart (`unscored`), as training leaves it out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curriculab.training.terminal.episode_log import bash_calls
from curriculab.training.terminal.trial import Turn, write_trial


@dataclass
class Evaluation:
    """Greedy episodes on held-out tasks."""

    episodes: int
    """Episodes run."""
    passed: int
    """Episodes that passed every milestone."""
    milestone_share: float
    """Mean outcome reward (`milestone_reward`) over the scored episodes."""
    verified_share: float
    """Share of episodes whose tests ran after their last change, as the harness's replay confirmed
    (`verification_reward`, the reward's rule; of those that changed something)."""
    tool_calls: int
    """Commands run in all."""
    job_dir: str
    """Where the episodes were written as trials."""
    unscored: int = 0
    """Episodes the environment failed (training's rewards give them None): not in the shares."""


def evaluate_agent(
    model_dir: str | Path,
    tasks: Mapping[str, Path],
    task_ids: Sequence[str],
    job_dir: Path,
    label: str,
    *,
    max_turns: int = 6,
    max_new_tokens: int = 96,
    trial_prefix: str = "eval",
    backend: str = "bwrap",
) -> Evaluation:
    """Run one greedy episode per held-out task with the model at `model_dir`, as TRL's turn loop
    would (the model's tool calls run in the episode until it stops calling or `max_turns`), and
    write each as a trial `<trial_prefix>-NN-<task>` under `job_dir` (stored under `label`). `backend`:
    the episode sandbox, the one training used (`episode_backend`)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import get_json_schema

    from curriculab.taxonomy.coders.environment import INCIDENTAL
    from curriculab.training.terminal.chat import enable_tool_calling
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.rewards import milestone_reward, verification_reward

    tokenizer = enable_tool_calling(AutoTokenizer.from_pretrained(str(model_dir)))
    network = AutoModelForCausalLM.from_pretrained(str(model_dir))
    network.train(False)  # greedy decoding, no dropout
    schema = [get_json_schema(TerminalEnvironment.bash)]
    passed, shares, verified, changed_any, calls, unscored = 0, [], 0, 0, 0, 0
    with TerminalEnvironment(tasks, backend=backend) as environment:
        for index, task_id in enumerate(task_ids):
            instruction = environment.reset(task_id=task_id)
            messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
            turns: list[Turn] = []
            for _ in range(max_turns):
                prompt = tokenizer.apply_chat_template(
                    messages, tools=schema, add_generation_prompt=True, tokenize=False
                )
                ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
                with torch.no_grad():
                    out = network.generate(
                        **ids, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
                    )
                new = out[0][ids["input_ids"].shape[1] :].tolist()
                try:
                    reply = tokenizer.parse_response(new, prefix=ids["input_ids"][0].tolist())
                except (ValueError, TypeError):  # a malformed call is text, as TRL treats it
                    reply = {"role": "assistant", "content": tokenizer.decode(new, skip_special_tokens=True)}
                sent = bash_calls(reply)
                first = len(environment.commands)
                messages.append(
                    {"role": "assistant", "content": reply.get("content") or "", "tool_calls": reply.get("tool_calls")}
                )
                for call in sent:
                    answer = environment.bash(str(call["arguments"]["command"]))
                    messages.append({"role": "tool", "name": "bash", "content": answer})
                turns.append(
                    Turn(
                        reply.get("content") or None,
                        list(range(first, len(environment.commands))),
                        ids["input_ids"].shape[1],
                        len(new),
                    )
                )
                if not sent:
                    break
            result = environment.result
            commands = result.commands
            calls += len(commands)
            (score,) = milestone_reward([environment])  # training's scoring, the same function
            if score is None:
                unscored += 1
            else:
                passed += int(score == 1.0)
                shares.append(score)
            if any(not INCIDENTAL.search(p) for c in commands for p in c.changed):
                changed_any += 1
                (confirmed,) = verification_reward([environment])  # never the in-shell record alone
                verified += int(confirmed == 1.0)
            assert environment.task is not None
            write_trial(
                job_dir,
                f"{trial_prefix}-{index:02d}-{task_id}",
                environment.task,
                result,
                model=label,
                turns=turns,
                told_at_once=True,
            )
    return Evaluation(
        len(task_ids),
        passed,
        sum(shares) / len(shares) if shares else 0.0,
        verified / changed_any if changed_any else 0.0,
        calls,
        str(job_dir),
        unscored,
    )
