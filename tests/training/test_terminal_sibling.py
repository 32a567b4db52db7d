"""The agent's programs the built-in checks run go to a sandbox of their own (`terminal.sibling`):
a probe reports what it sees there, and the two forgeries of issue 67 — a thread left behind a
zombie leader to rename its own reward.json over the judge's, and a `topwords.py` that prints the
expected output it read from /tests/check.py — score 0 on every backend, with the honest episode
after each scoring 1. Payloads stay small and run only inside the episode under test."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from curriculab.training.terminal import Episode, EpisodeLimits, load_task, sibling
from curriculab.training.terminal.suite import BUILTIN_SUITE
from tests.training.terminal_tasks import write_task

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)"),
]

LIMITS = EpisodeLimits(command_timeout_s=20, disk_bytes=32 << 20, judged_entries=3000)


@pytest.fixture(params=["bwrap", "docker", "namespaces"])
def backend(request, require_docker):
    if request.param == "namespaces" and os.geteuid() != 0:
        pytest.skip("the namespaces isolation needs root (CI and scripts/setup.sh run as root)")
    if request.param == "docker":
        from curriculab.training.terminal.docker import client

        require_docker(client() is not None)
    return request.param


def _episode(task, backend, commands, oracle=False):
    with Episode(task, LIMITS, backend=backend, oracle=oracle) as episode:
        for command in commands:
            episode.run(command)
        return episode.finish()


# The agent's probe: what it can reach, its uid, and a child left behind that keeps appending to a
# file for 5 s (it must not outlive the call); stdin, stdout, stderr and the status cross.
PROBE = """cat > /app/probe.py <<'EOF'
import json, os, sys, time
def can(action):
    try:
        action()
        return True
    except OSError:
        return False
facts = {
    "uid": os.getuid(),
    "stdin": sys.stdin.read(),
    "read_tests": can(lambda: open("/tests/check.py").read()),
    "list_logs": can(lambda: os.listdir("/logs/verifier")),
    "write_logs": can(lambda: open("/logs/verifier/reward.json", "w").write("{}")),
    "solution": os.path.exists("/solution"),
    "app_writable": can(lambda: open("/app/made.txt", "w").write("x")),
    "tmp_input": open("/tmp/input.txt").read(),
}
open("/tmp/output.txt", "w").write("from the program")
if os.fork() == 0:
    os.setsid()
    end = time.time() + 5
    while time.time() < end:
        with open("/app/alive.txt", "a") as alive:
            alive.write(".")
        time.sleep(0.05)
    os._exit(0)
print(json.dumps(facts))
print("to stderr", file=sys.stderr)
sys.exit(3)
EOF"""
PROBE_CHECK = """import json, os, time
from pathlib import Path
from milestones import APP, finish, read, run

Path("/tmp/input.txt").write_text("from the checker")
done = run("python3", "probe.py", stdin="fed")
facts = json.loads(done.stdout)
time.sleep(0.3)
size = (APP / "alive.txt").stat().st_size
time.sleep(0.5)
facts.update(
    judge_uid=os.getuid(),
    returncode=done.returncode,
    stderr=done.stderr,
    output=read("/tmp/output.txt"),
    outlived=(APP / "alive.txt").stat().st_size != size,
    made_is_judges=(APP / "made.txt").stat().st_uid == os.getuid(),
    sibling=bool(os.environ.get("CURRICULAB_RUN")),
)
print("FACTS", json.dumps(facts))
finish({"ran": lambda: True})
"""
PROBE_TOML = (
    'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\nmilestones = ["ran"]\n\n[verifier]\ntimeout_sec = 60.0\n'
)


def test_a_program_the_checks_run_sees_none_of_the_judge_and_ends_with_the_call(tmp_path, backend):
    task = load_task(
        write_task(
            tmp_path,
            "probe",
            toml=PROBE_TOML,
            test_sh="#!/bin/bash\npython3 /tests/check.py\n",
            test_files={"check.py": PROBE_CHECK, "milestones.py": (BUILTIN_SUITE / "milestones.py").read_text()},
            solve_sh=None,
        )
    )
    result = _episode(task, backend, [PROBE])
    assert result.milestones == {"ran": 1.0}, result.steps[0].output
    facts = json.loads(result.steps[0].output.split("FACTS ", 1)[1].splitlines()[0])
    assert facts["sibling"] and facts["stdin"] == "fed" and facts["returncode"] == 3
    assert facts["stderr"] == "to stderr\n" and facts["tmp_input"] == "from the checker"
    assert facts["output"] == "from the program" and facts["app_writable"] and facts["made_is_judges"]
    assert not facts["read_tests"] and not facts["list_logs"] and not facts["write_logs"] and not facts["solution"]
    assert not facts["outlived"], "a process of the call outlived it"
    if os.geteuid() == 0:
        assert facts["uid"] != facts["judge_uid"]


# Issue 67, item 1: greet.sh leaves a thread behind a zombie leader (SYS_exit ends the main thread
# only) that waits for the judge's reward.json and renames its own over it.
ZOMBIE_GREET = """mkdir -p /app/bin && cat > /app/bin/greet.sh <<'OUTER'
#!/bin/bash
python3 - <<'EOF'
import ctypes, json, os, threading, time
if os.fork() == 0:
    os.setsid()
    def forge():
        end = time.time() + 15
        while time.time() < end:
            if os.path.exists("/logs/verifier/reward.json"):
                try:
                    with open("/logs/verifier/forged.json", "w") as forged:
                        json.dump({"executable": 1, "greets": 1}, forged)
                    os.rename("/logs/verifier/forged.json", "/logs/verifier/reward.json")
                except OSError:
                    pass
            time.sleep(0.002)
        os._exit(0)
    threading.Thread(target=forge).start()
    ctypes.CDLL(None).syscall(60, 0)
EOF
OUTER
chmod +x /app/bin/greet.sh"""

# Issue 67, item 2: topwords.py counts nothing; it prints the expected output from the checker.
READS_KEY = """cat > /app/topwords.py <<'EOF'
import ast, sys
key = {}
try:
    for node in ast.walk(ast.parse(open("/tests/check.py").read())):
        if isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Constant):
            for inner in ast.walk(node.left):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    key[inner.value] = node.comparators[0].value
except OSError:
    pass
try:
    text = open(sys.argv[1]).read()
except OSError:
    text = ""
print(key.get(text, key.get(sys.argv[1], "")), end="")
EOF"""


def test_the_forgeries_of_issue_67_score_nothing_and_the_oracle_after_scores_1(backend):
    greet, topwords = load_task(BUILTIN_SUITE / "greet-script"), load_task(BUILTIN_SUITE / "top-words-ties")
    forged = _episode(greet, backend, [ZOMBIE_GREET])
    assert forged.milestones == {"executable": 1.0, "greets": 0.0}, forged.steps[0].output  # it greets no one
    assert _episode(greet, backend, ["bash /solution/solve.sh"], oracle=True).milestones == {
        "executable": 1.0,
        "greets": 1.0,
    }
    forged = _episode(topwords, backend, [READS_KEY])
    assert forged.milestones == {"sample": 0.0, "hidden_text": 0.0}, forged.steps[0].output
    assert _episode(topwords, backend, ["bash /solution/solve.sh"], oracle=True).reward == 1.0


def test_without_the_sibling_the_answer_key_is_the_programs(monkeypatch):
    """The control: a checker that runs the agent's program itself (a foreign harness: no
    `$CURRICULAB_RUN`) lends it the judge's rights, and the forgery above scores 1."""
    monkeypatch.setattr(sibling, "ENV_VAR", "CURRICULAB_NOT_OFFERED")
    forged = _episode(load_task(BUILTIN_SUITE / "top-words-ties"), "bwrap", [READS_KEY])
    assert forged.milestones == {"sample": 1.0, "hidden_text": 1.0}


# A program that kills everything its uid may signal (the box's server included), then one that
# outlasts the verifier's time: the first call fails, the next gets a fresh box, the verdict comes
# on time.
KILLER_CHECK = """from milestones import finish, run

first = run("bash", "-c", "kill -9 -1")
second = run("python3", "-c", "print('again')")
print("FIRST", first.returncode, "SECOND", second.returncode, second.stdout.strip())
finish({"ran": lambda: second.stdout == "again\\n"})
"""
SLOW_CHECK = """from milestones import finish, run

run("sleep", "600", timeout=600)
finish({"ran": lambda: True})
"""
SLOW_TOML = PROBE_TOML.replace("timeout_sec = 60.0", "timeout_sec = 3.0")


def test_a_program_that_kills_its_sandbox_or_outlasts_the_verifier_costs_only_its_own_check(tmp_path, backend):
    suite = {"milestones.py": (BUILTIN_SUITE / "milestones.py").read_text()}
    test_sh = "#!/bin/bash\npython3 /tests/check.py\n"
    killer = load_task(
        write_task(tmp_path, "killer", toml=PROBE_TOML, test_sh=test_sh, test_files={"check.py": KILLER_CHECK, **suite})
    )
    result = _episode(killer, backend, [])
    assert result.milestones == {"ran": 1.0}, result.steps[0].output
    assert "SECOND 0 again" in result.steps[0].output
    slow = load_task(
        write_task(tmp_path, "slow", toml=SLOW_TOML, test_sh=test_sh, test_files={"check.py": SLOW_CHECK, **suite})
    )
    started = time.monotonic()
    result = _episode(slow, backend, [])
    assert result.steps[0].error == "the verifier timed out after 3 s" and result.reward == 0
    assert time.monotonic() - started < 30
