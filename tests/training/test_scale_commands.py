"""The launch commands a plan prints (`scale.commands`) parse with the tools that will run them:
`trl vllm-serve` with TRL's own argument parser, `curriculab train` with this CLI's."""

from __future__ import annotations

import shlex

import pytest
import yaml

from curriculab.cli import cli

pytestmark = pytest.mark.slow  # real GRPO runs


def _commands(planned) -> dict[str, list[str]]:
    _, plan = planned
    commands = yaml.safe_load(plan.read_text())["scale"]["commands"]
    words = {name: shlex.split(text) for name, text in commands.items()}
    return {
        name: [w for w in parts if "=" not in w or w.startswith("-")] for name, parts in words.items()
    }  # env set aside


def test_the_vllm_server_command_parses_with_trl_vllm_serve_arguments(planned):
    from trl.scripts.vllm_serve import make_parser

    words = _commands(planned)["vllm_server"]
    assert words[:2] == ["trl", "vllm-serve"]
    script_args, unknown = make_parser().parse_args_and_config(args=words[2:], return_remaining_strings=True)
    assert script_args.model == "$MODEL" and not unknown, unknown  # one word: the shell fills it in


def test_the_train_commands_parse_with_this_cli(planned, monkeypatch):
    monkeypatch.chdir(planned[1].parent)  # they run beside plan.yaml
    for name in ("one_gpu", "multi_gpu"):
        words = _commands(planned)[name]
        words = words[words.index("train") - 1 :] if name == "one_gpu" else words[words.index("curriculab.cli") + 1 :]
        assert words[0] in ("curriculab", "train")
        args = words[1:] if words[0] == "curriculab" else words
        context = cli.make_context("curriculab", list(args), resilient_parsing=False)
        sub = context.command.get_command(context, args[0])
        parsed = sub.make_context(args[0], list(args[1:]), parent=context)
        assert parsed.params["config_path"].name.endswith(".yaml") and parsed.params["use_vllm"] in (
            "colocate",
            "server",
        )
        assert parsed.params["model"] == "$MODEL"  # the same weights the server serves, not the default tiny
