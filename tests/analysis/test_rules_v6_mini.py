"""Taxonomy v6's reading rules on mini-swe-agent (and SWE-agent) trajectories (`trajectory_format` mini-swe-agent-1:
one ```bash block per reply, the harness's reply `<returncode>`/`<output>`, an output too long cut to
`<output_head>`/`<elided_chars>`/`<output_tail>`, a reply with several blocks refused with "found N
actions"), ingested and coded by the real pipeline."""

from __future__ import annotations

import json
from pathlib import Path

from curriculab.analysis.store import Store
from tests.analysis.test_rules_v6 import coded

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
REFUSED = (
    "Please always provide EXACTLY ONE action in triple backticks, found {n} actions.\n\n"
    "Please format your action in triple backticks as shown in <response_example>."
)


def ran(command: str, output: str, code: int = 0, thought: str = "Next step.") -> tuple[str, str]:
    """A reply with one command and the harness's answer to it."""
    return (
        f"THOUGHT: {thought}\n\n```bash\n{command}\n```",
        f"<returncode>{code}</returncode>\n<output>\n{output}</output>",
    )


def too_long(command: str, head: str, cut: int, tail: str) -> tuple[str, str]:
    """A reply whose output the harness cut: the agent sees its head, the elided count and its tail."""
    return (
        f"THOUGHT: Look.\n\n```bash\n{command}\n```",
        "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n</warning>\n"
        f"<output_head>\n{head}\n</output_head>\n<elided_chars>\n{cut} characters elided\n</elided_chars>\n"
        f"<output_tail>\n{tail}\n</output_tail>",
    )


def several(*commands: str) -> tuple[str, str]:
    """A reply with several bash blocks, refused for its format: none of them ran."""
    blocks = "\n\n".join(f"```bash\n{c}\n```" for c in commands)
    return f"THOUGHT: Edit, then look.\n\n{blocks}", REFUSED.format(n=len(commands))


def mini(root: Path, name: str, turns: list[tuple[str, str]]) -> None:
    """`<root>/trajs/<name>/<name>.traj.json`, ending with the submission."""
    messages = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": "<pr_description>\nparse() crashes on empty input.\n</pr_description>"},
    ]
    for reply, answer in [*turns, ran(SUBMIT, "", thought="Done.")]:
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": answer}]
    messages[-1]["content"] = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a/src/parse.py b/src/parse.py\n"
    folder = root / "trajs" / name
    folder.mkdir(parents=True)
    document = {"info": {"exit_status": "Submitted"}, "messages": messages, "trajectory_format": "mini-swe-agent-1"}
    (folder / f"{name}.traj.json").write_text(json.dumps({**document, "instance_id": name}))


EDIT = ran("sed -i 's/return x\\[0\\]/return x[0] if x else None/' src/parse.py", "")
CHECK = ran("python -m pytest -q tests/test_parse.py", "3 passed in 0.02s\n")


def test_a_reply_refused_for_its_format_sent_again_with_the_same_command_is_a_retry(tmp_path: Path, store: Store):
    edit = "sed -i '3i\\    if not x:\\n        return None' src/parse.py"
    mini(
        tmp_path,
        "resent",
        [several(edit, "sed -n '1,10p' src/parse.py"), several(edit, "cat -A src/parse.py"), ran(edit, ""), CHECK],
    )
    # the second reply changed its commands (still several): a revised attempt, refused for its format again
    mini(
        tmp_path,
        "revised",
        [
            several(edit, "sed -n '1,10p' src/parse.py"),
            several("nl -ba src/parse.py", "head src/parse.py"),
            ran(edit, ""),
            CHECK,
        ],
    )
    codes = coded(tmp_path, store)
    status, why = codes["resent"]["no_plan_revision"]
    assert status == "present" and "refused again" in why
    assert codes["revised"]["no_plan_revision"][0] == "absent"


def test_a_cut_output_is_kept_as_seen_and_the_same_oversized_request_again_is_tool_misuse(tmp_path: Path, store: Store):
    cat = too_long("cat src/parse.py", "import os\ndef parse(x):", 5200, "    return x[0]\n")
    mini(tmp_path, "cat-again", [cat, EDIT, cat, CHECK])
    # a test run cut again after a fix shows the runner's summary in its tail: nothing it asked for was lost
    run = too_long(
        "python -m pytest tests",
        "collected 240 items",
        9000,
        "FAILED tests/test_parse.py::test_empty\n1 failed, 239 passed in 4.1s",
    )
    passed = too_long("python -m pytest tests", "collected 240 items", 9000, "240 passed in 4.0s")
    mini(tmp_path, "tests-again", [run, EDIT, passed])
    codes = coded(tmp_path, store)
    status, why = codes["cat-again"]["tool_misuse"]
    assert status == "present" and "truncated" in why
    assert codes["tests-again"]["tool_misuse"][0] == "absent"
    shown = store.query(
        "select output, output_truncated from steps where command = 'cat src/parse.py' order by step_idx limit 1"
    ).rows
    assert shown == [("import os\ndef parse(x):\n[... 5200 characters elided]\n    return x[0]\n\n", True)]


def test_lines_shown_with_their_invisible_characters_are_no_reread(tmp_path: Path, store: Store):
    view = ran("sed -n '10,30p' src/parse.py", "def parse(x):\n\treturn x[0]\n")
    mini(tmp_path, "bytes", [view, ran("sed -n '12,20p' src/parse.py | cat -A", "\treturn x[0]$\n"), EDIT, CHECK])
    mini(tmp_path, "again", [view, ran("sed -n '12,20p' src/parse.py", "\treturn x[0]\n"), EDIT, CHECK])
    codes = coded(tmp_path, store)
    assert codes["bytes"]["redundant_rework"][0] == "absent"
    assert codes["again"]["redundant_rework"][0] == "present"


def swe_agent(root: Path, name: str, turns: list[tuple[str, str, str]]) -> None:
    """A SWE-agent `.traj` in the demonstrations' shape: (response, action, observation) per step; the
    interface runs the response's last fenced block, the thought is the response before it."""
    trajectory = [
        {
            "action": action + "\n",
            "observation": observation,
            "response": response,
            "thought": response[: response.rfind("```", 0, response.rfind("```"))].strip(),
            "state": '{"open_file": "/testbed/src/level.py", "working_dir": "/testbed"}\n',
        }
        for response, action, observation in turns
    ]
    history = [
        {"role": "system", "content": "SETTING: one command per response; the interface runs one.", "agent": "primary"},
        {"role": "user", "content": "Implement Container.level in /testbed/src/level.py.", "agent": "primary"},
    ]
    info = {"exit_status": "submitted", "submission": "diff --git a/src/level.py b/src/level.py\n"}
    folder = root / "swe" / name
    folder.mkdir(parents=True)
    document = {"environment": "swe_main", "trajectory": trajectory, "history": history, "info": info}
    (folder / f"{name}.traj").write_text(json.dumps(document))


def test_an_edit_block_before_the_command_the_interface_ran_never_ran(tmp_path: Path, store: Store):
    opened = (
        "Let me look.\n```\nopen /testbed/src/level.py\n```",
        "open /testbed/src/level.py",
        "[File: /testbed/src/level.py (9 lines total)]\n1:class Container:",
    )
    edit = "edit 7:8\n    def level(self):\n        return self._level\nend_of_edit"
    # the reply packs the edit and then submit: only `submit` ran, the edit was lost
    swe_agent(
        tmp_path, "packed", [opened, (f"Implement it:\n```\n{edit}\n```\nNow submit.\n```\nsubmit\n```", "submit", "")]
    )
    swe_agent(
        tmp_path,
        "one-each",
        [
            opened,
            (f"Implement it:\n```\n{edit}\n```", edit, "File updated."),
            ("Submit.\n```\nsubmit\n```", "submit", ""),
        ],
    )
    codes = coded(tmp_path, store)
    status, why = codes["packed"]["tool_misuse"]
    assert status == "present" and "the edit never ran" in why
    assert codes["one-each"]["tool_misuse"][0] == "absent"
