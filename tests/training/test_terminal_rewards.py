"""The TRL environment over terminal episodes and the rewards read from it: the milestone and pass
rewards from the verifier, and the verification rubric from what the environment observed, with
the ways it could be gamed each scoring 0."""

from __future__ import annotations

import pickle
import shutil

import pytest

from curriculab.training.terminal.environment import TerminalEnvironment
from curriculab.training.terminal.rewards import milestone_reward, pass_reward, verification_reward
from curriculab.training.terminal.suite import BUILTIN_SUITE

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)")

FIX = """cat > stats.py <<'EOF'
def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
EOF"""


def _scores(commands: list[str]) -> tuple[float, float, float]:
    with TerminalEnvironment() as environment:
        instruction = environment.reset(task_id="fix-median", prompt="ignored: TRL passes the whole row")
        assert "median" in instruction
        for command in commands:
            environment.bash(command)
        envs = [environment]
        return verification_reward(envs)[0], milestone_reward(envs)[0], pass_reward(envs)[0]


def test_the_environment_is_trls_contract_one_bash_tool_and_a_verdict_read_once():
    with TerminalEnvironment() as environment:
        assert [
            name
            for name in dir(TerminalEnvironment)
            if callable(getattr(TerminalEnvironment, name)) and not name.startswith("_")
        ] == ["bash", "reset"]  # TRL's tools: every public method but reset
        environment.reset(task_id="count-error-lines")
        assert environment.bash("ls logs") == "[exit code 0]\napi.log\ndb.log\nworker.log\n"
        assert environment.bash("ls missing").startswith("[exit code 2]\nls: cannot access")
        first = environment.result
        assert environment.result is first  # the verifier ran once
        assert environment.bash("echo late") == "[no episode is running]"
        environment.reset(task_id="count-error-lines")  # a fresh episode: nothing of the last one
        assert environment.bash("ls /app").startswith("[exit code 0]\nlogs\n")
    assert all(pickle.loads(pickle.dumps(f)) is f for f in (milestone_reward, pass_reward, verification_reward))
    assert milestone_reward([TerminalEnvironment()]) == [None]  # no episode: the environment's fault, not a score


UNIT = """mkdir -p unit && cat > unit/test_median.py <<'EOF'
import sys, unittest
sys.path.insert(0, "/app")
from stats import median
class Median(unittest.TestCase):
    def test_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)
EOF"""
RUN_UNIT = "python3 -m unittest discover -s unit"


def test_checking_after_the_last_change_is_what_the_verification_reward_pays_for():
    assert _scores([FIX, UNIT, RUN_UNIT]) == (1.0, 1.0, 1.0)
    # an honest failing attempt that checks its work: its tests ran (and failed), so the term pays
    assert _scores([UNIT, RUN_UNIT]) == (1.0, 0.0, 0.0)
    assert _scores([FIX]) == (0.0, 1.0, 1.0)  # right, but never checked
    # Python's caches are not a change that needs another check
    assert _scores([FIX, UNIT, RUN_UNIT, "mkdir -p .pytest_cache && echo 1 > .pytest_cache/lastfailed"])[0] == 1.0
    # a script or the agent's own program is no system test runner: nothing says tests ran
    assert _scores([FIX, "bash run_tests.sh"])[0] == 0.0
    assert _scores([FIX, "python3 -c 'import stats; print(stats.median([4, 1, 3, 2]))'"])[0] == 0.0


@pytest.mark.parametrize(
    "commands",
    [
        [RUN_UNIT],  # nothing changed: nothing to verify
        [UNIT, RUN_UNIT, "rm -r unit"],  # its last change came after the check
        [RUN_UNIT, FIX],  # the check came before the change
        [FIX, UNIT, f"echo '{RUN_UNIT}'"],  # a word, not a command
        [FIX, UNIT, f"# {RUN_UNIT}"],
        [FIX, UNIT, f"{RUN_UNIT} --help"],
        [FIX, UNIT, "nosuch-test-runner unit"],
        [FIX, UNIT, f"{RUN_UNIT}; echo '# touched' >> stats.py"],  # an edit after the check, in the same line
        [FIX, UNIT, RUN_UNIT, "sed -i 's/middle - 1/middle-1/' stats.py"],
    ],
    ids=[
        "no-change",
        "removed-after",
        "check-first",
        "echo",
        "comment",
        "help",
        "not-a-check",
        "edit-after-in-line",
        "edit-after",
    ],
)
def test_each_way_of_gaming_the_verification_reward_scores_0(commands):
    assert _scores(commands)[0] == 0.0


def test_the_milestone_reward_respects_a_multi_step_tasks_strategy(tmp_path):
    task = tmp_path / "fix-backup-script"
    shutil.copytree(BUILTIN_SUITE / "fix-backup-script", task)
    toml = task / "task.toml"
    with TerminalEnvironment({"fix-backup-script": task}) as environment:
        environment.reset(task_id="fix-backup-script")
        environment.bash("sed -i 's|^SOURCE=.*|SOURCE=/app/data|' backup.conf && ./backup.sh")
        assert milestone_reward([environment]) == [0.5] and pass_reward([environment]) == [0.0]
    toml.write_text(
        toml.read_text().replace('multi_step_reward_strategy = "mean"', 'multi_step_reward_strategy = "final"')
    )
    with TerminalEnvironment({"fix-backup-script": task}) as environment:
        environment.reset(task_id="fix-backup-script")
        environment.bash("sed -i 's|^SOURCE=.*|SOURCE=/app/data|' backup.conf && ./backup.sh")
        assert milestone_reward([environment]) == [0.0]  # `final`: the last step's milestones only
