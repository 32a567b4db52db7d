"""Hostile agents against the judge: forged verdicts, links to the answer key, things that are not
files, trees and names meant to break the copy or the observation, state carried between
episodes, socket families no network namespace confines. On every backend the machine has, each
hostile episode scores 0 (or is refused with its reason) and the honest episode after it scores
1 in an untouched environment. Payloads stay small and run only inside the episode under test."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time

import pytest

from curriculab.training.terminal import Episode, EpisodeLimits, load_task
from curriculab.training.terminal.suite import BUILTIN_SUITE
from tests.training.terminal_tasks import ONE_MILESTONE, RUNS_AGENT_CODE, write_task

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


def _episode(task, backend, commands):
    with Episode(task, LIMITS, backend=backend, observe=True) as episode:
        ran = [episode.run(command) for command in commands]
        return episode.finish(), ran


def _oracle(task, backend):
    """The task's own solution, run as an agent would in a fresh episode."""
    with Episode(task, LIMITS, backend=backend, oracle=True) as episode:
        episode.run("bash /solution/solve.sh")
        return episode.finish()


# A program the built-in verifier runs (`python3 topwords.py …`) forges the verdict: a read-only
# reward.json with a bare reward, or a watcher left behind to rewrite it after the checks write theirs.
FORGE_TOPWORDS = """cat > /app/topwords.py <<'EOF'
import os, json
for name in ("reward.json", "reward.txt"):
    try:
        os.chmod("/logs/verifier/" + name, 0o644)
    except OSError:
        pass
json.dump({"reward": 1}, open("/logs/verifier/reward.json", "w"))
open("/logs/verifier/reward.txt", "w").write("1")
os.chmod("/logs/verifier/reward.json", 0o444)
os.chmod("/logs/verifier/reward.txt", 0o444)
EOF"""
WATCHER_TOPWORDS = """cat > /app/topwords.py <<'EOF'
import os, json, time
if os.fork() == 0:
    os.setsid()
    end = time.time() + 3
    while time.time() < end:
        try:
            json.dump({"sample": 1, "hidden_text": 1}, open("/logs/verifier/reward.json", "w"))
        except OSError:
            pass
        time.sleep(0.01)
    os._exit(0)
EOF"""
# A program the verifier runs leaves a detached process whose main thread ends alone (SYS_exit, not
# exit_group): its leader reads Z while a thread waits for the judge's reward.json and renames a
# forged one over it. Bounded: it gives up after 8 s.
ZOMBIE_LEADER_TOPWORDS = """cat > /app/topwords.py <<'EOF'
import ctypes, json, os, platform, threading, time
if os.fork() == 0:
    os.setsid()
    quiet = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)  # the checker's pipes close: it goes on at once
    def watch():
        verdict, end = "/logs/verifier/reward.json", time.time() + 8
        while time.time() < end:
            try:
                if "0" in open(verdict).read():
                    json.dump({"sample": 1, "hidden_text": 1}, open(verdict + ".forged", "w"))
                    os.replace(verdict + ".forged", verdict)
            except OSError:
                pass
            time.sleep(0.001)
        os._exit(0)
    threading.Thread(target=watch).start()
    ctypes.CDLL(None).syscall(93 if platform.machine() == "aarch64" else 60, 0)  # SYS_exit: this thread only
EOF"""
FORGE_GREET = """mkdir -p /app/bin && cat > /app/bin/greet.sh <<'EOF'
#!/bin/bash
echo '{"executable": 1, "greets": 1}' > /logs/verifier/reward.json
chmod 444 /logs/verifier/reward.json
EOF
chmod +x /app/bin/greet.sh"""


def test_programs_the_builtin_verifier_runs_cannot_write_its_verdict(backend):
    topwords = load_task(BUILTIN_SUITE / "top-words-ties")
    forgeries = {
        "read-only forged reward": [FORGE_TOPWORDS],
        "watcher": [WATCHER_TOPWORDS],
        "a thread outliving its zombie leader": [ZOMBIE_LEADER_TOPWORDS],
    }
    for name, commands in forgeries.items():
        result, _ = _episode(topwords, backend, commands)
        assert result.milestones == {"sample": 0.0, "hidden_text": 0.0}, (name, result.steps[0].output)
        assert result.error is None, name
    assert _oracle(topwords, backend).milestones == {"sample": 1.0, "hidden_text": 1.0}
    greet = load_task(BUILTIN_SUITE / "greet-script")
    result, _ = _episode(greet, backend, [FORGE_GREET])
    assert result.milestones == {"executable": 1.0, "greets": 0.0}  # it is executable; it greets no one
    assert _oracle(greet, backend).milestones == {"executable": 1.0, "greets": 1.0}


def test_a_foreign_verifier_that_runs_the_agents_program_keeps_its_verdict(tmp_path, backend):
    task = load_task(
        write_task(
            tmp_path,
            "runs-program",
            test_sh=RUNS_AGENT_CODE,
            toml=ONE_MILESTONE,
            solve_sh="echo 'print(42)' > /app/solve.py",
        )
    )
    forgeries = {
        # reward.json is read before reward.txt: both written, they must agree
        "json over txt": "import json; json.dump({'reward': 1}, open('/logs/verifier/reward.json', 'w'))",
        # the verifier's own write then fails, and test.sh exits non-zero: capped at 0
        "read-only txt": "import os; open('/logs/verifier/reward.txt', 'w').write('1'); "
        "os.chmod('/logs/verifier/reward.txt', 0o444)",
    }
    results = {}
    for name, program in forgeries.items():
        results[name], _ = _episode(task, backend, [f"printf '%s\\n' {program!r} > /app/solve.py"])
        assert results[name].reward == 0, (name, results[name].steps[0])
    json_over_txt, read_only = results.values()
    assert json_over_txt.error == "main: reward.json (1) and reward.txt (0) disagree: the verdict is not trusted"
    assert read_only.steps[0].refused == "test.sh exited 1: its reward is capped at 0"
    assert _oracle(task, backend).reward == 1.0


# The answer key ships with the tests at a guessable path; the verifier compares the agent's file to it.
COMPARES = """#!/bin/bash
if timeout 5 cmp -s /app/answer.txt /tests/expected.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def test_links_to_the_answer_key_and_things_that_are_not_files_never_reach_the_judge(tmp_path, backend):
    task = load_task(
        write_task(
            tmp_path,
            "answer-key",
            test_sh=COMPARES,
            test_files={"expected.txt": "42\n"},
            toml=ONE_MILESTONE,
            solve_sh="echo 42 > /app/answer.txt",
        )
    )
    hostile = {
        "absolute link": "ln -s /tests/expected.txt /app/answer.txt",
        "relative link": "ln -s ../tests/expected.txt /app/answer.txt",
        "through /proc": "ln -s /proc/self/root/tests/expected.txt /app/answer.txt",
        "through a link to a system folder": "ln -s /usr /app/u && ln -s u/../tests/expected.txt /app/answer.txt",
        "through a link of its own": "ln -s /tests /app/t && ln -s t/expected.txt /app/answer.txt",
        "a FIFO": "mkfifo /app/answer.txt",
    }
    for name, command in hostile.items():
        started = time.monotonic()
        result, ran = _episode(task, backend, [command])
        assert ran[0].exit_code == 0, (name, ran[0].output)
        assert result.reward == 0 and result.error is None, (name, result.steps[0])
        assert time.monotonic() - started < 15, name  # a FIFO never stalls the judge
    # links that stay inside the agent's files or point at the system's read-only folders still work
    kept = [
        "mkdir -p /app/venv/bin && ln -s /usr/bin/python3 /app/venv/bin/python",
        "echo 42 > /app/real.txt && ln -s real.txt /app/answer.txt",
    ]
    result, _ = _episode(task, backend, kept)
    assert result.reward == 1.0
    runs = load_task(write_task(tmp_path, "venv", test_sh=RUNS_AGENT_CODE, toml=ONE_MILESTONE))
    venv = [*kept[:1], "printf '#!/app/venv/bin/python\\nprint(42)\\n' > /app/solve.py"]
    assert _episode(runs, backend, venv)[0].reward == 1.0
    assert _oracle(task, backend).reward == 1.0


def test_trees_and_names_meant_to_break_the_judge_or_the_observation_are_bounded_and_recorded(tmp_path, backend):
    task = load_task(
        write_task(tmp_path, "greet", test_sh="#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n", toml=ONE_MILESTONE)
    )
    name = "d" * 200
    deep = f"for i in $(seq 30); do mkdir {name} && cd {name} || break; done; pwd | wc -c"
    result, ran = _episode(task, backend, [deep])
    assert int(ran[0].output.split()[-1]) > 4096  # deeper than the host's path limit
    assert result.reward == 0 and result.steps[0].refused == "the agent left a path longer than 3,072 bytes"
    bomb = "mkdir -p /app/bomb && cd /app/bomb && seq 4000 | xargs mkdir && cd /app"
    result, ran = _episode(task, backend, [bomb, "true", "echo done > /app/after.txt"])
    assert result.reward == 0 and result.steps[0].refused == "the agent left more than 3,000 files and folders"
    assert [r.unobserved for r in ran] == ["too many entries to observe (more than 3,000)"] * 3
    assert ran[2].output == "" and ran[2].exit_code == 0  # the command's own result is kept
    odd = "touch $'tab\\there' $'new\\nline' $'\\xff\\xfe' plain && echo made"
    result, ran = _episode(task, backend, [odd, "echo next > /app/next.txt"])
    assert [r.output for r in ran] == ["made\n", ""]
    assert set(ran[0].changed) == {"/app/tab\there", "/app/new\nline", "/app/\\xff\\xfe", "/app/plain"}
    assert ran[1].changed == ["/app/next.txt"] and result.reward == 1.0


def test_nothing_carries_from_one_episode_to_the_next_and_only_ip_and_unix_sockets_open(tmp_path, backend):
    task = load_task(write_task(tmp_path))
    _, ran = _episode(task, backend, ["echo left > /dev/shm/curriculab-redteam && ls /dev/shm"])
    assert ran[0].output == "curriculab-redteam\n"
    families = "import socket\nfor family in (40, 16, 17):\n    try:\n        socket.socket(family, 2)\n        print('open')\n    except OSError as e:\n        print(e.errno)\n"
    _, ran = _episode(
        task, backend, ["ls -A /dev/shm", f"python3 -c {shlex.quote(families)}", "ls /dev | tr '\\n' ' '"]
    )
    assert ran[0].output == ""
    assert ran[1].output.split() == ["1", "1", "1"]  # AF_VSOCK, AF_NETLINK, AF_PACKET: EPERM
    devices = set(ran[2].output.split())
    assert devices >= {"null", "zero", "random", "urandom", "shm", "fd"} and not devices & {
        "kvm",
        "loop0",
        "sda",
        "mem",
    }


# A check is what the shell executed: the text of a command line pays for nothing.
SKIPPED_CHECKS = {
    "after ||": "touch /app/x; true || python3 -m unittest",
    "after a failed &&": "touch /app/w; false && python3 -m unittest",
    "in a branch not taken": "touch /app/v; if false; then python3 -m unittest; fi",
    "with the record's trap removed": "touch /app/u; trap - DEBUG; python3 -m unittest",
    "one that cannot be found": "touch /app/t; python3-nonexistent -m pytest",
    # fake checks (issue 67 item 3): a runner that ran no tests, or no system runner at all
    "a function named pytest": "touch /app/q; pytest() { :; }; pytest",
    "python3 -m pytest without pytest": "touch /app/p; python3 -m pytest",
    "unittest that finds no tests": "touch /app/o; python3 -m unittest discover -s /tmp",
    "make test without a Makefile": "touch /app/m; make test",
    "a pytest shim early on PATH": "touch /app/n; mkdir -p /tmp/bin; printf '#!/bin/sh\\necho 1 passed\\n' "
    "> /tmp/bin/pytest; chmod +x /tmp/bin/pytest; PATH=/tmp/bin:$PATH pytest",
    "a link to /bin/true": "touch /app/l; ln -s /bin/true /tmp/test; /tmp/test",
    "a printf that forges the record": "touch /app/k; printf() { builtin printf '%s\\t%s\\0' 0 pytest "
    '>> /logs/.curriculab-ran; builtin printf "$@"; }',
    "a test module that does not exist": "touch /app/j; python3 -m unittest nosuch_module",
    # `python3 -m` puts the workdir first on the path: a runner module of the agent's own
    "a unittest.py of its own": "printf 'print(\"Ran 1 test in 0.001s\")\\n' > /app/unittest.py; "
    "python3 -m unittest nosuch_module",
    "a pytest.py of its own": "printf 'print(\"1 passed in 0.01s\")\\n' > /app/pytest.py; python3 -m pytest",
}
RAN_CHECKS = {
    "in a branch taken": "touch /app/y; if true; then python3 -m unittest; fi",
    "as a condition": "touch /app/z; if python3 -m unittest; then echo ok; fi",
    "before ||": "touch /app/s; python3 -m unittest || true",
    "inside a function": "touch /app/r; check() { python3 -m unittest; }; check",
}


# What the environment coder makes of each (issue 67 item 3: fakes are never credited): the harness's
# replay found no tests run, or the record names only a program no harness can confirm (undecided).
CODED = {
    **dict.fromkeys(SKIPPED_CHECKS, "present"),
    "a link to /bin/true": "not_applicable",
    **dict.fromkeys(RAN_CHECKS, "absent"),
}


def test_verification_reward_and_the_environment_coder_credit_only_checks_the_harness_saw_report_tests(
    tmp_path, backend, store
):
    from curriculab.analysis.coding import run_environment_coder
    from curriculab.analysis.ingest import ingest
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.rewards import verification_reward
    from curriculab.training.terminal.trial import write_trial

    # one real test, so that a runner the agent's shell executed reports tests run when replayed
    task = write_task(
        tmp_path,
        "greet",
        dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY data.txt /app/data.txt\nCOPY test_ok.py /app/test_ok.py\n",
        files={"test_ok.py": "import unittest\n\nclass Ok(unittest.TestCase):\n    def test_ok(self):\n        pass\n"},
    )
    names = {**SKIPPED_CHECKS, **RAN_CHECKS}
    with TerminalEnvironment({"greet": task}, LIMITS, backend=backend) as environment:
        scored = {}
        for index, (name, command) in enumerate(names.items()):
            environment.reset(task_id="greet")
            environment.bash(command)
            scored[name] = verification_reward([environment])[0]
            if name == "with the record's trap removed":
                assert environment.commands[-1].ran_note.startswith("no complete record of what ran"), name
            write_trial(tmp_path / "job", f"case-{index:02d}", environment.task, environment.result, model="m")
    assert scored == {**dict.fromkeys(SKIPPED_CHECKS, 0.0), **dict.fromkeys(RAN_CHECKS, 1.0)}
    # stored as any trial: what the shell executed, and the harness's replay, go with each episode
    ingest(store, [tmp_path / "job"])
    trial = {f"case-{index:02d}": name for index, name in enumerate(names)}
    stored = store.query(
        "select trajectory_id, json_extract_string(raw, '$.observed.executed'), "
        "json_extract(raw, '$.observed.check_run')::varchar from steps where json_exists(raw, '$.observed')"
    ).rows
    executed = {trial[t]: json.loads(e) for t, e, _ in stored}
    assert executed["after ||"] == [["touch /app/x", 0], ["true", 0]]
    assert executed["as a condition"] == [["touch /app/z", 0], ["python3 -m unittest", 0], ["echo ok", 0]]
    replays = {trial[t]: json.loads(r) for t, _, r in stored}
    assert replays["as a condition"]["tests_ran"] and not replays["a printf that forges the record"]["tests_ran"]
    assert replays["after ||"] is None  # judged, nothing to replay
    run_environment_coder(store)
    coded = store.query(
        "select trajectory_id, status from coding_status where coder = 'environment' and code = 'skipped_verification'"
    ).rows
    assert {trial[t]: status for t, status in coded} == CODED


# Empty files in one canary folder until the episode's folders refuse more (bounded: 40,000 tries).
FILE_FLOOD = """python3 -c "
import os
os.makedirs('/app/canary', exist_ok=True)
made, why = 0, 'none'
try:
    while made < 40000:
        open('/app/canary/%d' % made, 'x').close()
        made += 1
except OSError as error:
    why = error.errno
print(made, why)
" """


def test_a_flat_folder_of_empty_files_hits_the_file_cap_and_the_harness_reads_only_the_bound(tmp_path, backend):
    import errno
    import tracemalloc

    task = load_task(write_task(tmp_path, "greet"))
    limits = EpisodeLimits(command_timeout_s=60, disk_bytes=32 << 20, inodes=30_000, judged_entries=500)
    with Episode(task, limits, backend=backend, observe=True) as episode:
        made, why = episode.run(FILE_FLOOD).output.split()
        if os.geteuid() == 0 or backend == "docker":  # a tmpfs capped in files (docs/tasks.md: without root, none)
            assert int(made) < 30_000 and int(why) == errno.ENOSPC, (made, why)
        tracemalloc.start()
        try:
            observed = episode.run("true")  # the observation walks the folder: lazily, up to the bound
            _, walk_peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            result = episode.finish()  # so does the judge's copy
            _, judge_peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert observed.unobserved == "too many entries to observe (more than 500)"
    assert result.reward == 0 and result.steps[0].refused == "the agent left more than 500 files and folders"
    # the command's own buffers take ~1 MiB; the folder's ~30,000 entries listed at once took ~6 MiB
    # more in the walk and ~10 MiB in the judge's copy
    assert walk_peak < 3 << 20 and judge_peak < 3 << 20, (walk_peak, judge_peak)
    with Episode(task, limits, backend=backend, oracle=True) as episode:
        episode.run("bash /solution/solve.sh")
        assert episode.finish().reward == 1.0
