"""Nothing crosses from one completion to the next in a slot: a poisoner followed by an honest
completion in the same sandbox leaves the honest one at 1.0, on bubblewrap and on Docker. Each
poisoner here scored the honest completion after it 0.0 (or read what it should not) before
per-completion namespaces, the memfd hand-off and the socket-family filter.

Payloads stay narrow: /tmp of the sandbox under test, bounded sizes, a few IPC objects."""

import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from curriculab.training.sandbox import Limits, run_many, run_tests
from curriculab.training.sandbox.docker_backend import client as docker_client

TESTS = [("basic_1", "r = add(1, 2)\nassert r == 3, r"), ("basic_2", "r = add(-4, 4)\nassert r == 0, r")]
FAST = Limits(test_timeout_s=3.0, load_timeout_s=10.0, cpu_s=20, memory_bytes=512 << 20, file_bytes=8 << 20)
_SERIAL = itertools.count(1)


@pytest.fixture(params=["bwrap", "docker", "namespaces"])
def backend(request, require_docker):
    if request.param == "docker":
        require_docker(docker_client() is not None)
    if request.param == "namespaces" and os.geteuid() != 0:
        pytest.skip("the namespaces backend needs root (CI and scripts/setup.sh run as root)")
    return request.param


WIRE_ONLY = pytest.mark.parametrize("backend", ["bwrap", "docker"], indirect=True)
"""For the judge's and the harness's own limits, the same code on every backend: bubblewrap and
Docker only (the namespaces backend differs in the box alone)."""


def one_slot_limits(**changes) -> Limits:
    """Limits no other test uses, so the pool they key holds exactly one slot: every job in a
    `run_many(..., workers=1)` call then runs in the same sandbox, one after the other."""
    return replace(FAST, open_files=64 + next(_SERIAL), **changes)


# An honest completion that is also a probe: it answers right only in a clean world, one where no
# earlier completion left a file, an IPC object, held memory, a changed module or environment.
PROBE = textwrap.dedent("""
    import ctypes, math, os, resource, sys

    def _clean():
        here = os.getcwd()
        if os.listdir(here) or os.listdir("/tmp"):
            return f"leftover files: {os.listdir(here)} {os.listdir('/tmp')}"
        with open("/tmp/mine", "wb") as f:  # /tmp is writable and not full
            f.write(b"y" * (1 << 20))
        os.unlink("/tmp/mine")
        sys.stdout.write("z" * 65536)
        sys.stdout.flush()
        for kind in ("shm", "msg", "sem"):
            with open(f"/proc/sysvipc/{kind}") as f:
                if len(f.read().splitlines()) > 1:
                    return f"a SysV {kind} object survived"
        libc = ctypes.CDLL(None, use_errno=True)  # glibc has mq_open since 2.34
        if libc.mq_open(b"/poison", os.O_RDONLY) >= 0:
            return "a POSIX message queue survived"
        block = bytearray(300 << 20)  # memory is not held by an earlier completion
        block[::4096] = b"x" * len(block[::4096])
        del block
        if math.sqrt(16) != 4 or os.environ.get("POISON") or os.umask(0o022) == 0o777:
            return "changed modules, environment or umask"
        if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 32:
            return "lowered limits"
        if os.path.isdir("/dev/shm") and os.listdir("/dev/shm"):
            return f"leftover shared memory: {os.listdir('/dev/shm')}"
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            if os.path.exists(table) and len(open(table).read().splitlines()) > 1:
                return f"a socket survived in {table}"
        return None

    def add(a, b):
        problem = _clean()
        return a + b if problem is None else problem
""")

POISONERS = {
    "locked_dir_0500": "os.makedirs('/tmp/keep'); open('/tmp/keep/secret', 'w').write('s'); os.chmod('/tmp/keep', 0o500)",
    "locked_dir_000": "os.makedirs('/tmp/k0'); open('/tmp/k0/secret', 'w').write('s'); os.chmod('/tmp/k0', 0)",
    "nested_locked_six_deep": (
        "p = '/tmp'\nfor i in range(6):\n    p = p + f'/d{i}'\n    os.mkdir(p)\n"
        "open(p + '/secret', 'w').write('s')\nfor i in range(6):\n    os.chmod(p, 0)\n"
        "    p = os.path.dirname(p)"
    ),
    "deep_chain_300": ("p = '/tmp'\nfor i in range(300):\n    p = p + '/d'\n    os.mkdir(p)\nos.chmod(p, 0)"),
    "fill_tmp_locked": (
        "os.mkdir('/tmp/fill')\ntry:\n    for i in range(12):\n"
        "        with open(f'/tmp/fill/x{i}', 'wb') as f:\n            f.write(b'x' * (7 << 20))\n"
        "except OSError:\n    pass\nos.chmod('/tmp/fill', 0)"
    ),
    "hidden_and_symlink": "open('/tmp/.hidden', 'w').write('s'); os.symlink('/tmp/.hidden', '/tmp/link')",
    "cwd_files": "open('left.txt', 'w').write('s'); os.mkdir('sub'); open('sub/x', 'w').write('s')",
    "sysv_shm_data": (
        "libc = ctypes.CDLL(None, use_errno=True)\nsid = libc.shmget(0x5EC, 4096, 0o1666)\n"
        "libc.shmat.restype = ctypes.c_void_p\naddr = libc.shmat(sid, None, 0)\n"
        "ctypes.memmove(addr, b'secret', 6)\nlibc.shmdt(ctypes.c_void_p(addr))"
    ),
    "sysv_shm_hoard_300": (
        "libc = ctypes.CDLL(None, use_errno=True)\nlibc.shmat.restype = ctypes.c_void_p\n"
        "sid = libc.shmget(0, 300 << 20, 0o1600)\naddr = libc.shmat(sid, None, 0)\n"
        "ctypes.memset(addr, 1, 300 << 20)\nlibc.shmdt(ctypes.c_void_p(addr))"
    ),
    "sysv_message_queue": (
        "libc = ctypes.CDLL(None, use_errno=True)\nq = libc.msgget(0x5ED, 0o1666)\n"
        "msg = ctypes.create_string_buffer(b'\\x01\\0\\0\\0\\0\\0\\0\\0secret')\nlibc.msgsnd(q, msg, 6, 0)"
    ),
    "sysv_semaphores": "libc = ctypes.CDLL(None, use_errno=True)\nlibc.semget(0x5EE, 4, 0o1666)",
    "posix_message_queue": "ctypes.CDLL(None).mq_open(b'/poison', os.O_CREAT | os.O_RDWR, 0o600, None)",
    "forked_child_holding_memory": (
        "if os.fork() == 0:\n    block = bytearray(300 << 20)\n"
        "    block[::4096] = b'x' * len(block[::4096])\n    time.sleep(60)\n    os._exit(0)"
    ),
    "detached_time_bomb": (
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(1.5)\n"
        "        open('/tmp/bomb', 'w').write('s')\n        os._exit(0)\n    os._exit(0)"
    ),
    "stop_the_parent": "os.kill(os.getppid(), signal.SIGSTOP)",
    "kill_the_parent": "os.kill(os.getppid(), signal.SIGKILL)",
    "stop_everything": "os.kill(-1, signal.SIGSTOP)",
    "stop_every_pid_it_sees": (
        "for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()][:500]:\n"
        "    if pid != os.getpid():\n        try:\n            os.kill(pid, signal.SIGSTOP)\n"
        "        except OSError:\n            pass"
    ),
    "environment": "os.environ['POISON'] = '1'; os.putenv('POISON', '1'); os.umask(0o777)",
    "patched_modules": "import math; math.sqrt = lambda x: 0; sys.modules['math'].pi = 3",
    "lowered_limits": "resource.setrlimit(resource.RLIMIT_NOFILE, (8, 8))",
    "chmod_the_workdir": "os.chmod(os.getcwd(), 0)",
}


# Holes that per-completion namespaces and inode caps closed (on Docker the zygote, with no
# capability, makes each completion a user namespace to have the others: docs/sandbox-boundary.md).
NAMESPACE_POISONERS = {
    "a_million_empty_files": (
        "n = 0\ntry:\n    for n in range(1_000_000):\n        open(f'/tmp/f{n}', 'w').close()\n"
        "except OSError:\n    pass"
    ),
    "dev_shm_file": "open('/dev/shm/secret', 'w').write('s')",
    "tcp_sockets_left_open": (
        "import socket\nkept = []\nserver = socket.socket()\nserver.bind(('127.0.0.1', 0))\nserver.listen()\n"
        "kept.append(server)\nc = socket.create_connection(server.getsockname())\n"
        "a, _ = server.accept()\nc.sendall(b'secret')\nc.close()\nkept.append(a)"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NAMESPACE_POISONERS))
def test_kernel_objects_die_with_the_completion_and_its_teardown_is_not_the_next_ones_budget(backend, name):
    limits = one_slot_limits()
    jobs = [(poisoner(NAMESPACE_POISONERS[name]), "add", TESTS)] + [(PROBE, "add", TESTS)] * 3
    started = time.monotonic()
    results = run_many(jobs, limits, workers=1, backend=backend)
    for honest in results[1:]:
        assert [o.passed for o in honest.outcomes] == [True, True], (
            name,
            [(o.status, o.detail) for o in honest.outcomes],
        )
    assert time.monotonic() - started < 4 * (limits.budget_s + 1)


@pytest.mark.slow
@WIRE_ONLY
def test_the_judge_gives_each_completion_its_own_cpu_seconds(backend):
    # each completion's test spends ~0.4 s of the judge's CPU; with one CPU second for the judge's
    # whole life the fourth would die mid-test
    limits = one_slot_limits(cpu_s=1)
    test = "x = 0\nfor i in range(4_000_000):\n    x += i\nassert add(1, 2) == 3"
    results = run_many(
        [("def add(a, b):\n    return a + b\n", "add", [("t", test)])] * 8, limits, workers=1, backend=backend
    )
    assert [r.outcomes[0].passed for r in results] == [True] * 8, [r.outcomes for r in results]


def poisoner(action: str) -> str:
    return "import ctypes, os, resource, signal, sys, time\n" + action + "\ndef add(a, b):\n    return a + b\n"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(POISONERS))
def test_a_poisoner_leaves_nothing_for_the_next_completion_in_its_slot(backend, name):
    limits = one_slot_limits()
    started = time.monotonic()
    poisoned, honest = run_many(
        [(poisoner(POISONERS[name]), "add", TESTS), (PROBE, "add", TESTS)], limits, workers=1, backend=backend
    )
    details = [(o.test_id, o.status, o.detail) for o in honest.outcomes]
    assert [o.passed for o in honest.outcomes] == [True, True], (name, details, honest.isolation)
    # a stopped or killed zygote is replaced within one test's time, not after a long stall
    assert time.monotonic() - started < 2 * limits.budget_s + 15


@pytest.mark.parametrize("name", ["locked_dir_000", "fill_tmp_locked", "cwd_files", "patched_modules"])
def test_the_probe_sees_a_poisoned_world_when_there_is_one(backend, name):
    # the probe is not vacuous: within one completion it sees what that completion left
    code = poisoner(POISONERS[name]).replace("def add(a, b):\n    return a + b\n", "") + PROBE
    result = run_tests(code, "add", [("t", "r = add(1, 2)\nassert r == 3, r")], one_slot_limits(), backend=backend)
    assert not result.outcomes[0].passed, result.outcomes[0].detail


def test_sysv_ipc_objects_cannot_be_made(backend):
    # they would outlive the completion and hold memory RLIMIT_AS does not count; the answer is
    # right only if every call failed with EPERM
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nERRORS = []\n"
        "for call in (lambda: libc.shmget(0, 4096, 0o1600), lambda: libc.msgget(0, 0o1600),\n"
        "             lambda: libc.semget(0, 1, 0o1600)):\n"
        "    ERRORS.append(ctypes.get_errno() if call() < 0 else 0)\n"
        "def add(a, b):\n    return a + b if ERRORS == [1, 1, 1] else ERRORS\n"
    )
    result = run_tests(code, "add", TESTS[:1], FAST, backend=backend)
    assert result.outcomes[0].passed, result.outcomes[0].detail


def test_an_earlier_completion_is_not_in_the_next_ones_memory(backend):
    # The secret is written in two halves so the searching completion never holds it whole.
    first, second = "SECRET-6f1d", "-a9c3e07b5"
    # in its code and in its output, both of which a container's zygote once read
    poisoner_code = (
        f"TOKEN = '{first}' + '{second}'\nKEEP = '{first}{second}' * 3\nprint(KEEP)\ndef add(a, b):\n    return a + b\n"
    )
    searcher = textwrap.dedent(f'''
        import ctypes, re
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self/mem readable
        HEAD, TAIL = b"{first}", b"{second}"

        def _found():
            hits = 0
            with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
                for line in maps:
                    span, perms = line.split()[:2]
                    if "r" not in perms:
                        continue
                    start, end = (int(x, 16) for x in span.split("-"))
                    try:
                        mem.seek(start)
                        chunk = mem.read(end - start)
                    except (OSError, ValueError, OverflowError):
                        continue
                    at = chunk.find(HEAD)
                    while at >= 0:
                        hits += chunk[at + len(HEAD):at + len(HEAD) + len(TAIL)] == TAIL
                        at = chunk.find(HEAD, at + 1)
            return hits

        def add(a, b):
            return a + b if _found() == 0 else "found an earlier completion's code"
    ''')
    limits = one_slot_limits()
    _, searched = run_many(
        [(poisoner_code, "add", TESTS[:1]), (searcher, "add", TESTS[:1])], limits, workers=1, backend=backend
    )
    assert searched.outcomes[0].passed, searched.outcomes[0].detail


def test_socket_families_other_than_unix_and_ip_are_refused(backend):
    # AF_VSOCK reaches the hypervisor whatever the network namespace; netlink and packet sockets
    # are attack surface a completion never needs. The answer is right only if one opened.
    code = (
        "import socket\nOPENED = []\n"
        "for family in (40, 16, 17, 38):  # AF_VSOCK, AF_NETLINK, AF_PACKET, AF_ALG\n"
        "    try:\n        socket.socket(family, socket.SOCK_DGRAM if family == 16 else socket.SOCK_STREAM).close()\n"
        "        OPENED.append(family)\n    except OSError as exc:\n        OPENED.append(-exc.errno)\n"
        "def add(a, b):\n    return a + b if all(x == -1 for x in OPENED) else OPENED\n"
        "def pair(a, b):\n    for end in socket.socketpair():\n        end.close()\n    return a + b\n"
    )
    result = run_tests(code, "add", TESTS[:1], FAST, backend=backend)
    assert result.outcomes[0].passed, result.outcomes[0].detail  # every one failed with EPERM
    assert run_tests(code, "pair", [("t", "assert pair(1, 2) == 3")], FAST, backend=backend).outcomes[0].passed


@pytest.mark.slow
@WIRE_ONLY
def test_a_slow_completion_is_stopped_by_its_budget_over_all_tests(backend):
    # right answers, 1.2 s each, on six tests with 3 s per test: the budget (2 x 3 s) stops it
    code = "import time\ndef add(a, b):\n    time.sleep(1.2)\n    return a + b\n"
    tests = [(f"t{i}", "assert add(1, 2) == 3") for i in range(6)]
    limits = one_slot_limits()
    started = time.monotonic()
    result = run_tests(code, "add", tests, limits, backend=backend)
    elapsed = time.monotonic() - started
    assert [o.passed for o in result.outcomes] == [True] * 4 + [False] * 2
    assert (result.outcomes[4].status, result.outcomes[4].detail) == (
        "timeout",
        "over the completion's 6 s for all its tests",
    )
    assert result.outcomes[5].detail == "not run: the completion timed out on t4"
    # the outcomes above show the budget stopped it (all six would take 7.2 s); this, that it stopped promptly
    assert elapsed < limits.budget_s + 2.5, elapsed


@WIRE_ONLY
def test_the_first_completion_in_a_new_slot_gets_its_whole_budget(backend):
    # the slot starts inside this call (about 0.5 s for a container, 0.1 s for bubblewrap); that
    # time is the harness's, so 1.15 s of work in a 1.5 s budget passes in the first run too
    code = "import time\ndef add(a, b):\n    time.sleep(1.15)\n    return a + b\n"
    result = run_tests(code, "add", TESTS[:1], one_slot_limits(completion_timeout_s=1.5), backend=backend)
    assert result.outcomes[0].passed, result.outcomes[0].detail


def test_a_completion_too_large_scores_zero_before_anything_runs(backend):
    from curriculab.planner.portfolio import TierCurriculum
    from curriculab.training.problems import Problem, ProblemTest
    from curriculab.training.rewards import score_completions

    limits = replace(FAST, max_code_bytes=1 << 20)
    huge = "def add(a, b):\n    return a + b\n" + "# padding\n" * 200_000
    started = time.monotonic()
    result = run_tests(huge, "add", TESTS, limits, backend=backend)
    assert time.monotonic() - started < 1
    assert {(o.status, o.detail) for o in result.outcomes} == {
        ("load_error", f"too large: {len(huge):,} bytes (at most 1,048,576)")
    }
    problem = Problem(
        problem_id="p/add",
        prompt="",
        entry_point="add",
        reference="def add(a, b):\n    return a + b\n",
        tests=[ProblemTest(test_id="basic_1", tier="basic", code="assert add(1, 2) == 3")],
    )
    (scored,) = score_completions(
        [problem], [{"problem_id": "p/add", "completion_id": "c", "completion": huge}], TierCurriculum(), limits
    )
    assert (scored["reward"], scored["status"]) == (
        0.0,
        "load_error",
    )  # never None: a completion cannot claim a sandbox fault


def test_isolation_is_reported(backend):
    result = run_tests("def add(a, b):\n    return a + b\n", "add", TESTS[:1], FAST, backend=backend)
    if backend == "namespaces":  # chrooted, with no capability: the zygote empties what completions share
        assert "namespaces and chroot, no bubblewrap: no read-only submounts" in result.isolation
        assert "a shared /tmp and /dev/shm emptied and IPC objects removed after each completion" in result.isolation
        return
    assert "a fresh /tmp, /dev/shm and IPC, pid and network namespaces per completion" in result.isolation


def test_the_sandbox_does_not_see_installed_python_packages():
    from curriculab.training.sandbox.runner import _hidden_package_dirs

    hidden = _hidden_package_dirs()
    assert "/usr/lib/python3/dist-packages" in hidden and os.listdir("/usr/lib/python3/dist-packages")
    code = (
        f"import os\nHIDDEN = {hidden!r}\n"
        "def add(a, b):\n    seen = {d: os.listdir(d) for d in HIDDEN if os.path.isdir(d)}\n"
        "    return a + b if seen and not any(seen.values()) else seen\n"
    )
    result = run_tests(code, "add", TESTS[:1], FAST, backend="bwrap")
    assert result.outcomes[0].passed, result.outcomes[0].detail


def test_leases_follow_the_runtime_directory(monkeypatch, tmp_path):
    from curriculab.training.sandbox.isolation import UidLease, lease_directory

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert lease_directory() == tmp_path / f"curriculab-uids-{os.geteuid()}"
    lease = UidLease()
    try:
        assert (tmp_path / f"curriculab-uids-{os.geteuid()}" / str(lease.uid)).exists()
    finally:
        lease.close()


def test_stopping_a_server_waits_for_its_exit_and_no_longer():
    from curriculab.training.sandbox.processes import wait as _wait

    quick = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.05)"])
    _wait(quick, 10)
    assert quick.returncode == 0
    _wait(quick, 10)  # reaped already: nothing to wait for
    stuck = subprocess.Popen(["sleep", "30"])
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        _wait(stuck, 0.2)
    assert 0.15 < time.monotonic() - started < 5
    stuck.kill()
    _wait(stuck, 10)
    assert stuck.returncode == -9


def test_servers_start_from_bytecode_cached_per_source_and_interpreter(monkeypatch, tmp_path):
    from curriculab.training.sandbox import runner

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = runner.server_bytecode()
    assert first and [p.suffix for p in (tmp_path / "cache" / "curriculab").iterdir()] == [".pyc"]
    with monkeypatch.context() as no_compiling:
        no_compiling.setattr(runner.subprocess, "run", lambda *a, **k: pytest.fail("compiled a cached server"))
        assert runner.server_bytecode() == first
    changed = tmp_path / "server.py"
    changed.write_text(runner.SERVER.read_text() + "\n# changed\n")
    monkeypatch.setattr(runner, "SERVER", changed)
    assert runner.server_bytecode() not in (None, first)  # another source, another entry
    assert len(list((tmp_path / "cache" / "curriculab").iterdir())) == 2


def test_servers_start_from_source_where_no_bytecode_can_be_cached(monkeypatch, tmp_path):
    from curriculab.training.sandbox import runner

    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    assert runner.server_bytecode() is None
    limits = one_slot_limits()
    result = run_tests("def add(a, b):\n    return a + b\n", "add", TESTS, limits, backend="bwrap")
    assert all(o.passed for o in result.outcomes), result.outcomes
    box = runner._POOLS[("bwrap", limits)].box
    assert runner._server_file(box) == "server.py" and not (box / "server.pyc").exists()


_PROBE = "from curriculab.training.sandbox import runner\nprint(runner._bwrap_works())"


def test_the_bubblewrap_probe_leaves_no_orphan_and_copes_with_an_older_bubblewrap(public_dir, under_subreaper):
    assert under_subreaper(_PROBE) == (["True"], 0)
    older = public_dir / "bwrap"  # one that does not know --as-pid-1
    older.write_text(f'#!/bin/sh\ncase " $* " in *" --as-pid-1 "*) exit 1;; esac\nexec {shutil.which("bwrap")} "$@"\n')
    older.chmod(0o755)
    assert under_subreaper(_PROBE, env={**os.environ, "PATH": f"{public_dir}:{os.environ['PATH']}"}) == (["True"], 0)


def test_the_bubblewrap_probe_runs_what_a_server_launches_with(public_dir, under_subreaper):
    """One argument builder for probe and launch: a bubblewrap that cannot run a server's arguments
    (here it refuses `--disable-userns`, as one too old for it does) fails the probe, so bubblewrap is
    not chosen only for every launch to fail."""
    lacking = public_dir / "bwrap"
    lacking.write_text(
        f'#!/bin/sh\ncase " $* " in *" --disable-userns "*) exit 1;; esac\nexec {shutil.which("bwrap")} "$@"\n'
    )
    lacking.chmod(0o755)
    assert under_subreaper(_PROBE, env={**os.environ, "PATH": f"{public_dir}:{os.environ['PATH']}"}) == (["False"], 0)


def test_scoring_works_with_a_read_only_tmp():
    # a private mount namespace where /tmp is read-only; TMPDIR points somewhere writable
    writable = tempfile.mkdtemp(dir="/var/tmp")
    script = (
        "from curriculab.training.sandbox import run_tests\n"
        "r = run_tests('def add(a, b):\\n    return a + b\\n', 'add', [('t', 'assert add(1, 2) == 3')])\n"
        "print(r.status, r.outcomes[0].passed, r.outcomes[0].detail)\n"
    )
    shell = (
        "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && touch /tmp/x 2>/dev/null && exit 9; "
        f'exec env -u XDG_RUNTIME_DIR TMPDIR={writable} {sys.executable} -c "$0"'
    )
    try:
        done = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", shell, script],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(writable, ignore_errors=True)
    assert done.stdout.split()[:2] == ["ok", "True"], (done.returncode, done.stdout + done.stderr)


@pytest.fixture
def public_dir():
    """A folder an ordinary user can reach (pytest's tmp_path sits under a 0700 folder)."""
    path = Path(tempfile.mkdtemp())
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_unsandboxed_cleanup_kills_only_the_completions_process_group(public_dir):
    # As an ordinary user on a shared host (no namespaces): the zygote's cleanup must not kill(-1),
    # which would take every process of that user (here: a bystander of the same uid, and the harness).
    box = public_dir / "box"
    box.mkdir()
    from curriculab.training.sandbox import server

    (box / "server.py").write_bytes(open(server.__file__, "rb").read())
    driver = box / "driver.py"
    driver.write_text(
        textwrap.dedent("""
        import os, socket, subprocess, sys, time
        sys.path.insert(0, os.path.dirname(__file__))
        import server
        bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
        ours, theirs = socket.socketpair()
        zygote = subprocess.Popen([sys.executable, "-I", "-S", os.path.join(os.path.dirname(__file__), "server.py"),
                                   "zygote", str(theirs.fileno()), sys.argv[1], "group"], pass_fds=[theirs.fileno()])
        theirs.close()
        assert server.recv(ours, time.monotonic() + 20)["ready"]
        mine, child_end = socket.socketpair()
        code = os.memfd_create("c")
        os.write(code, b'{"kind": "function"}\\n' b"import os, time\\nif os.fork() == 0:\\n    time.sleep(60)\\ndef add(a, b):\\n    return a + b\\n")
        out = os.memfd_create("o")
        server.send(ours, {"op": "run", "tmp_bytes": 1 << 20}, fds=[child_end.fileno(), code, out])
        forked = server.recv(ours, time.monotonic() + 10)["forked"]
        assert server.recv(mine, time.monotonic() + 10)["ready"] is True
        server.send(ours, {"op": "end"})
        assert server.recv(ours, time.monotonic() + 10)["ended"]
        time.sleep(0.2)
        survivors = []  # live processes left in the completion's group (a zombie waiting for its reaper is not one)
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[2] == str(forked) and fields[0] != "Z":
                survivors.append(pid)
        print("bystander", "alive" if bystander.poll() is None else "killed", "group", len(survivors))
        bystander.kill()
        zygote.kill()
    """)
    )
    scratch = public_dir / "scratch"
    scratch.mkdir()
    os.chown(scratch, 65534, 65534)
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-I",
            "-S",
            str(driver),
            str(scratch),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "bystander alive group 0", done.stdout + done.stderr


def test_unsandboxed_has_no_network():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = (
        f"import socket\ndef add(a, b):\n    try:\n        socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
        "        return 'reached the host'\n    except OSError:\n        return a + b\n"
    )
    try:
        result = run_tests(code, "add", TESTS[:1], FAST, backend="rlimits")
    finally:
        listener.close()
    assert result.status == "unsandboxed" and result.outcomes[0].passed, result.outcomes[0].detail


def test_the_unsandboxed_warning_says_what_is_not_protected(monkeypatch):
    import warnings

    from curriculab.training import rewards
    from curriculab.training.problems import builtin_problems

    monkeypatch.setattr(rewards, "detect_backend", lambda: "rlimits")
    monkeypatch.setattr(rewards, "unsandboxed_backend", lambda: "rlimits")  # not root, or no unshare
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rewards.Scorer({p.problem_id: p for p in builtin_problems()[:1]}, allow_unsandboxed=True)
    (message,) = [str(w.message) for w in caught if "WITHOUT a sandbox" in str(w.message)]
    for unprotected in ("your files", "the network", "answer key"):
        assert unprotected in message, message


def _zygotes():
    """The zygote processes on this host (bubblewrap's command; its children are completions)."""
    import psutil

    return [
        p
        for p in psutil.process_iter(["cmdline"])
        if (p.info["cmdline"] or [""])[0] == "/usr/bin/python3"
        and "zygote" in p.info["cmdline"][-4:-3]
        and (p.parent().cmdline() or [""])[0] == "bwrap"
    ]


def test_the_next_completion_runs_in_a_process_made_ahead_and_a_lost_one_is_replaced():
    """On bubblewrap each completion's process is made (cloned into its namespaces, confined) while
    the one before runs; one that is gone when its completion comes is replaced by a fresh one."""
    import psutil

    from curriculab.training.sandbox.runner import close_pools

    close_pools()
    limits = one_slot_limits()
    honest = ("def add(a, b):\n    return a + b\n", "add", TESTS)
    assert all(o.passed for o in run_many([honest], limits, workers=1, backend="bwrap")[0].outcomes)
    (zygote,) = _zygotes()
    deadline = time.monotonic() + 5
    while (
        not (spares := [p for p in zygote.children() if p.status() != psutil.STATUS_ZOMBIE])
        and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    assert len(spares) == 1, "no process was made ahead for the next completion"
    spares[0].kill()  # lost: killed from outside while it waited (and dead before its completion comes)
    deadline = time.monotonic() + 5
    while spares[0].status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.01)
    results = run_many([honest] * 3, limits, workers=1, backend="bwrap")
    assert [all(o.passed for o in r.outcomes) for r in results] == [True, True, True], [r.outcomes for r in results]
    assert not any(r.status == "sandbox_error" for r in results)
    assert [p for p in zygote.children() if p.status() != psutil.STATUS_ZOMBIE]  # made ahead again
    close_pools()
