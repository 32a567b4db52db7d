"""Hostile completions against every sandbox backend (bubblewrap, Docker, and the namespaces backend
of a machine without bubblewrap): every one ends in failed tests or a recorded status, never a pass.
Payloads are narrow: canaries this test creates, bounded sizes."""

import os
import socket
import threading
import time
from dataclasses import replace

import pytest

from curriculab.training.sandbox import Limits, detect_backend, run_many
from curriculab.training.sandbox import run_tests as _run_tests
from curriculab.training.sandbox.docker_backend import client as docker_client
from curriculab.training.sandbox.runner import GRACE_S

BACKEND = detect_backend()
TESTS = [
    ("basic_1", "assert add(1, 2) == 3"),
    ("basic_2", "assert add(-4, 4) == 0"),
    ("edge_1", "assert add(10**20, 1) == 10**20 + 1"),
]
FAST = Limits(test_timeout_s=2.0, load_timeout_s=10.0, cpu_s=10, memory_bytes=512 << 20, file_bytes=1 << 20)


@pytest.fixture(params=["bwrap", "docker", "namespaces"], autouse=True)
def backend(request, require_docker):
    """Every red-team test runs on the default backend, on Docker (scripts/setup.sh starts a daemon)
    and on the namespaces backend of a machine without bubblewrap (root only)."""
    if request.param == "docker":
        require_docker(docker_client() is not None)
    if request.param == "namespaces" and os.geteuid() != 0:
        pytest.skip("the namespaces backend needs root (CI and scripts/setup.sh run as root)")
    request.node.backend = request.param
    yield request.param


WIRE_ONLY = pytest.mark.parametrize("backend", ["bwrap", "docker"], indirect=True)
"""For attacks on the wire, the judge and the harness's clock, which are the same code on every
backend: bubblewrap and Docker only (the namespaces backend differs in the box alone)."""

_CURRENT: list[str] = []


@pytest.fixture(autouse=True)
def _route(backend):
    _CURRENT[:] = [backend]
    yield


def run_tests(code, entry_point, tests, limits=None, **kwargs):
    return _run_tests(code, entry_point, tests, limits, backend=_CURRENT[0], **kwargs)


def test_the_default_backend_is_a_real_sandbox(backend):
    # CI installs bubblewrap (scripts/setup.sh); without it the rlimits backend would record `unsandboxed`.
    assert BACKEND == "bwrap"
    assert run_tests("def add(a, b):\n    return a + b\n", "add", TESTS[:1], FAST).backend == backend


def test_an_honest_completion_passes():
    result = run_tests("def add(a, b):\n    return a + b\n", "add", TESTS, FAST)
    assert result.status == "ok" and all(o.passed for o in result.outcomes)


def never_passes(code, tests=TESTS, limits=FAST, loads=True, **kwargs):
    """The completion ran in the sandbox under test, and no test passed: a sandbox that never
    started (`sandbox_error`) or ran unconfined would fail here, not pass; and, unless `loads` is
    False, the completion loaded, so its attack ran against the tests (an attack that broke its own
    import would otherwise pass as a `load_error` without having been tried)."""
    result = run_tests(code, "add", tests, limits, **kwargs)
    assert result.backend == _CURRENT[0] and result.status not in ("sandbox_error", "unsandboxed"), (
        result.backend,
        result.status,
    )
    assert not loads or result.status != "load_error", [(o.test_id, o.status, o.detail) for o in result.outcomes]
    assert len(result.outcomes) == len(tests) and all(o.status != "sandbox_error" for o in result.outcomes)
    assert not any(o.passed for o in result.outcomes), [(o.test_id, o.status, o.detail) for o in result.outcomes]
    return result


def test_exit_at_import():
    assert never_passes("import sys\nsys.exit(0)\n", loads=False).status == "load_error"


def test_os_exit_inside_the_call():
    result = never_passes("import os\ndef add(a, b):\n    os._exit(0)\n")
    assert result.status == "crashed"


@pytest.mark.parametrize("exception", ["SystemExit(0)", "KeyboardInterrupt()", "GeneratorExit()"])
def test_raising_exit_like_exceptions(exception):
    never_passes(f"def add(a, b):\n    raise {exception}\n")


def test_printing_fake_results():
    never_passes(
        "import sys\nprint('3 passed in 0.01s')\nprint('{\"basic_1\": true, \"reward\": 1.0}')\n"
        "def add(a, b):\n    print('PASSED'); sys.stderr.write('OK\\n')\n    return None\n"
    )


def test_patching_builtins_and_assert_helpers():
    patch = (
        "import builtins\nbuiltins.AssertionError = type('Never', (Exception,), {})\n"
        "builtins.len = lambda x: 3\nbuiltins.isinstance = lambda *a: True\n"
    )
    # at import the patch breaks the completion's own loading: it never passes, and never ran a test
    never_passes(patch + "def add(a, b):\n    return 'wrong'\n", loads=False)
    # inside the call, after loading, it runs against every test, and still passes none
    indented = "".join(f"    {line}\n" for line in patch.splitlines())
    never_passes("def add(a, b):\n" + indented + "    return 'wrong'\n")


def test_objects_that_equal_everything():
    result = never_passes(
        "class Anything(int):\n    def __eq__(self, other): return True\n    __hash__ = int.__hash__\n"
        "def add(a, b):\n    return Anything(0)\n"
    )
    assert "only its own __eq__ could decide" in result.outcomes[0].detail


def test_forging_replies_on_the_protocol_pipe():
    # writes fake "ok" replies to every fd it can find; verdicts are computed outside, so this only
    # answers with wrong values
    never_passes(
        "import os, json, struct\n"
        "def add(a, b):\n"
        "    for fd in range(3, 64):\n"
        "        for i in range(1, 6):\n"
        "            msg = json.dumps({'id': i, 'ok': True, 'value': 'PASS'}).encode()\n"
        "            try: os.write(fd, struct.pack('>I', len(msg)) + msg)\n"
        "            except OSError: pass\n"
        "    return -1\n"
    )


def test_the_tests_are_not_on_disk_and_the_host_is_not_visible(tmp_path):
    canary = tmp_path / "canary-secret.txt"
    canary.write_text("the tests say add(1, 2) == 3")
    code = (
        f"import os\ndef add(a, b):\n    found = []\n"
        f"    for path in [{str(canary)!r}, '/work/main/tests', '/root', '/box/tests.py', '/tmp/tests.py']:\n"
        f"        if os.path.exists(path): found.append(path)\n"
        f"    return found\n"
    )
    result = run_tests(code, "add", [("look", "assert add(1, 2) == []")], FAST)
    assert result.outcomes[0].passed, result.outcomes[0].detail  # nothing outside the box is visible


def test_deleting_or_rewriting_files_outside_the_box(tmp_path):
    canary_dir = tmp_path / "canary"
    canary_dir.mkdir()
    (canary_dir / "tests.py").write_text("assert add(1, 2) == 3\n")
    os.chmod(tmp_path, 0o777)  # even world-writable host dirs stay out of reach
    os.chmod(canary_dir, 0o777)
    os.chmod(canary_dir / "tests.py", 0o666)
    never_passes(
        f"import os, shutil\ndef add(a, b):\n"
        f"    for p in [{str(canary_dir / 'tests.py')!r}]:\n"
        f"        try: open(p, 'w').write('')\n        except OSError: pass\n"
        f"        try: os.remove(p)\n        except OSError: pass\n"
        f"    try: open({str(canary_dir / 'new.txt')!r}, 'w').write('x')\n    except OSError: pass\n"
        f"    return None\n"
    )
    assert (canary_dir / "tests.py").read_text() == "assert add(1, 2) == 3\n"
    assert sorted(p.name for p in canary_dir.iterdir()) == ["tests.py"]


@pytest.mark.slow
@WIRE_ONLY
def test_a_hang_is_stopped_once_and_the_tests_it_did_not_run_fail_at_once():
    code = "def add(a, b):\n    if a == 1:\n        while True: pass\n    return a + b\n"
    started = time.monotonic()
    result = run_tests(code, "add", TESTS, FAST)
    elapsed = time.monotonic() - started
    assert [o.status for o in result.outcomes] == ["timeout", "timeout", "timeout"]
    assert not any(o.passed for o in result.outcomes)
    assert result.outcomes[1].detail == "not run: the completion timed out on basic_1"
    assert result.status == "timeout"
    assert elapsed < 2.5 * FAST.test_timeout_s  # one timeout per completion: three, one per test, would take 6 s


def test_a_crash_is_stopped_once():
    result = never_passes("import os\ndef add(a, b):\n    os._exit(3)\n")
    assert [o.status for o in result.outcomes] == ["crashed"] * 3


def _slot_processes():
    import psutil

    from curriculab.training.sandbox.isolation import UID_BASE, UID_COUNT

    found = []
    for p in psutil.process_iter(["uids", "status"]):
        try:
            if UID_BASE <= p.info["uids"].real < UID_BASE + UID_COUNT or p.info["uids"].real == 65534:
                found.append(p.info["status"])
        except (psutil.NoSuchProcess, TypeError):
            pass
    return found


def _settled(count_at_most, deadline_s=10):
    deadline = time.monotonic() + deadline_s
    while len(_slot_processes()) > count_at_most and time.monotonic() < deadline:
        time.sleep(0.1)
    return len(_slot_processes())


@pytest.mark.slow
def test_fork_bomb_is_contained_and_cleaned_up():
    run_tests("def add(a, b):\n    return a + b\n", "add", TESTS[:1], FAST)  # the slot is warm
    before = len(_slot_processes())
    never_passes(
        "import os, time\ndef add(a, b):\n    for _ in range(2000):\n"
        "        try:\n            if os.fork() == 0:\n                time.sleep(30)\n                os._exit(0)\n"
        "        except OSError:\n            break\n    time.sleep(30)\n"
    )
    assert _settled(before) <= before  # every process the completion made is gone; the slot remains


@pytest.mark.slow
def test_a_fork_bomb_does_not_starve_honest_neighbours():
    # one slot's bomb holds its own uid's process cap (and its cgroup's pids.max); the others have their own
    from curriculab.training.sandbox import run_many

    bomb = (
        "import os, time\ndef add(a, b):\n    for _ in range(5000):\n        try:\n"
        "            if os.fork() == 0:\n                time.sleep(20)\n                os._exit(0)\n"
        "        except OSError:\n            pass\n    time.sleep(20)\n"
    )
    honest = "def add(a, b):\n    import subprocess\n    subprocess.run(['true'])\n    return a + b\n"
    # enough jobs for three slots (a small batch starts fewer: JOBS_PER_NEW_SLOT)
    jobs = [(bomb, "add", TESTS[:1])] + [(honest, "add", TESTS[:1])] * 23
    results = run_many(jobs, FAST, workers=3, backend=_CURRENT[0])
    assert results[0].outcomes[0].status == "timeout"
    assert [r.status for r in results[1:]] == ["ok"] * 23, [r.outcomes for r in results[1:]]


def test_memory_bomb():
    # really fills memory (a bytearray of zeros would only reserve it)
    result = never_passes("def add(a, b):\n    block = 'x' * (8 * 1024 ** 3)\n    return a + b\n")
    assert result.outcomes[0].status == "memory"


def test_huge_output_passes_as_at_a_terminal_and_only_its_tail_is_kept(tmp_path):
    # 256 MiB printed: at home it goes to a terminal; here the first MiB goes to the log, then only
    # its tail is kept, so the printer never meets a full disk and the harness reads 2,000 bytes
    result = run_tests(
        "import sys\ndef add(a, b):\n    chunk = 'x' * 65535 + '\\n'\n"
        "    for _ in range(4096):\n        sys.stdout.write(chunk)\n    print('last line')\n    return a + b\n",
        "add",
        TESTS,
        FAST,
    )
    assert result.status == "ok" and all(o.passed for o in result.outcomes), result.outcomes
    assert len(result.stderr_tail) <= 2000 and result.stderr_tail.endswith("last line\n")


def test_raw_writes_past_the_file_cap_fail_inside_the_completion():
    # os.write to its descriptor is a file write, capped by RLIMIT_FSIZE (EFBIG), never the disk
    result = never_passes(
        "import os\ndef add(a, b):\n    for _ in range(64):\n        os.write(1, b'x' * 65536)\n    return a + b\n"
    )
    assert result.status == "output_limit" and len(result.stderr_tail) <= 2000


def test_no_network():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    port = server.getsockname()[1]
    contacted = []
    threading.Thread(target=lambda: contacted.append(_accept(server)), daemon=True).start()
    code = (
        f"import socket\ndef add(a, b):\n    s = socket.socket()\n    s.settimeout(1)\n"
        f"    s.connect(('127.0.0.1', {port}))\n    return a + b\n"
    )
    result = never_passes(code, tests=TESTS[:1])
    assert "OSError" in result.outcomes[0].detail or "Error" in result.outcomes[0].detail
    server.close()
    assert contacted in ([], [False])


def _accept(server):
    try:
        server.accept()
        return True
    except OSError:
        return False


def test_environment_secrets_do_not_reach_the_completion():
    code = "import os\ndef add(a, b):\n    return sorted(k for k in os.environ if 'SECRET' in k or 'TOKEN' in k)\n"
    os.environ["CURRICULAB_TEST_SECRET_TOKEN"] = "s3cr3t"  # set in the harness; must not reach the sandbox
    try:
        result = run_tests(code, "add", [("env", "assert add(1, 2) == []")], FAST)
    finally:
        del os.environ["CURRICULAB_TEST_SECRET_TOKEN"]
    assert result.outcomes[0].passed, result.outcomes[0].detail


def test_writing_inside_the_box_tmp_is_allowed_but_bounded():
    code = (
        "def add(a, b):\n    with open('/tmp/scratch', 'w') as f:\n        f.write('x' * 1000)\n"
        "    return len(open('/tmp/scratch').read()) + a + b - 1000\n"
    )
    result = run_tests(code, "add", TESTS[:1], FAST)
    assert result.outcomes[0].passed, result.outcomes[0].detail


def test_stop_iteration_cannot_end_a_map_style_test_early():
    # the test asserts over `map`: a StopIteration crossing the proxy would end the map, and `all([])` is True
    tests = [("basic_1", "assert all(map(lambda c: add(*c[0]) == c[1], [((1, 2), 3), ((2, 2), 4)]))")]
    for exception in ("StopIteration", "StopAsyncIteration"):
        result = never_passes(f"def add(a, b):\n    raise {exception}\n", tests=tests)
        assert result.outcomes[0].status == "failed"


@pytest.mark.slow
@WIRE_ONLY
def test_a_hang_at_import_scores_zero_not_none():
    from curriculab.training.sandbox import Limits as _Limits

    quick = _Limits(test_timeout_s=1.0, load_timeout_s=2.0, cpu_s=10, memory_bytes=512 << 20, file_bytes=1 << 20)
    result = never_passes("import time\ntime.sleep(60)\ndef add(a, b):\n    return a + b\n", limits=quick)
    assert result.status == "timeout"  # the completion's failure (reward 0), not a sandbox fault (None)


def test_a_completion_cannot_fake_a_sandbox_fault():
    # it prints what a failing launcher prints and dies: the harness saw the sandbox start, so this is a load error
    result = never_passes(
        "import os, sys\nsys.stderr.write('bwrap: Creating new namespace failed\\n')\n"
        "sys.stderr.flush()\nos._exit(1)\n",
        loads=False,
    )
    assert result.status == "load_error"


def test_the_reward_of_a_faked_fault_is_zero():
    from curriculab.planner.portfolio import TierCurriculum
    from curriculab.training.problems import Problem, ProblemTest
    from curriculab.training.rewards import score_completions

    problem = Problem(
        problem_id="p/add",
        prompt="def add(a, b):\n",
        entry_point="add",
        reference="def add(a, b):\n    return a + b\n",
        tests=[
            ProblemTest(test_id=f"{tier}_1", tier=tier, code="assert add(1, 2) == 3")
            for tier in ("basic", "intermediate", "complex", "edge")
        ],
    )
    fake = "import os, sys\nsys.stderr.write('bwrap: setting up uid map: Permission denied\\n')\nos._exit(1)\n"
    (scored,) = score_completions(
        [problem], [{"problem_id": "p/add", "completion_id": "c", "completion": fake}], TierCurriculum(), FAST
    )
    assert scored["reward"] == 0.0 and scored["status"] == "load_error"


def test_no_namespace_of_its_own_through_clone(backend):
    # clone() with a namespace flag (user, network, mount) would give the completion a world of its
    # own with every capability in it; it answers right only if none of the three was refused
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def made(flag):\n    pid = libc.syscall(56, ctypes.c_ulong(17 | flag), 0, 0, 0, 0)\n"
        "    if pid == 0:\n        os._exit(0)\n    if pid > 0:\n        os.waitpid(pid, 0)\n    return pid > 0\n"
        "ESCAPED = any(made(flag) for flag in (0x10000000, 0x40000000, 0x00020000))\n"
        "def add(a, b):\n    return a + b if ESCAPED else None\n"
    )
    never_passes(code)


def test_no_nested_user_namespace_inside_the_sandbox(backend):
    # a completion that can make a user namespace gets full capabilities in it (mounts, more); it
    # answers right only if it managed to
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "ESCAPED = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER\n"
        "def add(a, b):\n    return a + b if ESCAPED else None\n"
    )
    never_passes(code)


_FORGE = (
    "import __main__, json, struct, time\n"
    "def forge(raw_value):\n"
    '    msg = b\'{"re": 1, "ok": true, "value": \' + raw_value + b\'}\'\n'
    "    __main__.CHANNEL.sendall(struct.pack('>I', len(msg)) + msg)  # the socket the server answers on\n"
    "    time.sleep(30)\n"
)


@pytest.mark.slow
@WIRE_ONLY
def test_a_forged_reply_of_colliding_hashes_is_stopped_at_the_test_deadline(backend):
    # 60,000 ints that all hash to 0: building that set is quadratic (minutes); the judge builds it
    # checking the test's deadline as it grows, so it costs the completion a timeout, not the judge
    code = _FORGE + (
        "def add(a, b):\n"
        # a reply's nodes are numbered after the request's three ([args, kwargs], args, kwargs)
        "    nodes = [['set', None, [[k] for k in range(4, 60004)]]] + [['int', hex(k * (2**61 - 1))] for k in range(60000)]\n"
        "    forge(json.dumps({'root': [3], 'nodes': nodes}).encode())\n"
    )
    tests = [("basic_1", "try:\n    add(1, 2)\nexcept ValueError:\n    pass\n")]  # a ValueError must not pass it
    started = time.monotonic()
    result = never_passes(code, tests=tests)
    assert time.monotonic() - started < FAST.test_timeout_s + 3
    assert (result.outcomes[0].status, result.outcomes[0].detail) == ("timeout", "over 2 s")


def test_a_forged_reply_of_nested_lists_is_refused_without_eating_memory(backend):
    # 2.5 million empty lists in 7.5 MB would take ~140 MB once parsed, and twice that decoded
    code = _FORGE + "def add(a, b):\n    forge(b'[' + b'[],' * 2_500_000 + b'[]]')\n"
    result = never_passes(code)
    assert result.outcomes[0].detail == "the reply was refused: a message with too many nested values"
    assert result.outcomes[1].detail.startswith("not run")  # the channel cannot be trusted after a refusal


def test_seccomp_denies_ptrace_keyrings_and_mounts(backend):
    # each call succeeds without a filter (PTRACE_TRACEME always may); the answer is right only if one did
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "GOT = [libc.ptrace(0, 0, 0, 0) == 0,  # PTRACE_TRACEME\n"
        "       libc.syscall(250, 1, -3, 0, 0, 0) >= 0 if ctypes.sizeof(ctypes.c_void_p) == 8 else False,  # keyctl\n"
        "       libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) == 0]\n"
        "def add(a, b):\n    return a + b if any(GOT) else None\n"
    )
    never_passes(code)


def test_root_and_dev_are_read_only_and_tmp_is_capped(backend):
    code = (
        "def add(a, b):\n    wrote = []\n"
        "    for path in ['/escape.txt', '/dev/escape', '/box/escape']:\n"
        "        try:\n            open(path, 'w').write('x')\n            wrote.append(path)\n"
        "        except OSError:\n            pass\n"
        "    total = 0\n"
        "    try:\n"
        "        with open('/tmp/fill', 'wb') as f:\n"
        "            for _ in range(40):\n                f.write(b'x' * (1 << 20))\n                total += 1\n"
        "    except OSError:\n        pass\n"
        "    return wrote or total\n"
    )
    limits = Limits(
        test_timeout_s=5.0,
        load_timeout_s=5.0,
        cpu_s=10,
        memory_bytes=512 << 20,
        file_bytes=64 << 20,
        tmp_bytes=16 << 20,
    )
    result = run_tests(code, "add", [("look", "assert add(1, 2) == 16 or add(1, 2) == 15")], limits)
    assert result.outcomes[0].passed, result.outcomes[0].detail  # nothing outside /tmp; /tmp stops at 16 MiB


@pytest.mark.slow
def test_memory_is_capped_per_sandbox_not_per_process(backend):
    # four processes of 200 MiB each stay under the 512 MiB per-process address-space limit; together
    # they exceed the sandbox's 512 MiB cap and are killed
    code = (
        "import os, time\ndef add(a, b):\n    kids = []\n    for _ in range(4):\n        pid = os.fork()\n"
        "        if pid == 0:\n            block = b'x' * (200 << 20)\n            time.sleep(3)\n            os._exit(0)\n"
        "        kids.append(pid)\n"
        "    ok = 0\n    for pid in kids:\n        _, status = os.waitpid(pid, 0)\n        ok += status == 0\n"
        "    return a + b if ok == 4 else -ok\n"
    )
    result = run_tests(code, "add", [("t", "assert add(1, 2) == 3")], FAST)
    if result.isolation.startswith("rlimits"):
        # no writable cgroup on this host: the documented fallback is a per-process cap, which must hold
        single = never_passes("def add(a, b):\n    block = b'x' * (600 << 20)\n    return a + b\n", tests=TESTS[:1])
        assert single.outcomes[0].status == "memory", result.isolation
        return
    assert result.isolation.startswith(("cgroup", "Docker cgroup"))
    assert not result.outcomes[0].passed, result.isolation


@pytest.mark.slow
def test_no_process_is_left_behind_after_200_completions():
    import psutil

    from curriculab.training.sandbox import run_many
    from curriculab.training.sandbox.runner import close_pools

    def zombies():
        # containerd-shim double-forks by design and leaves its parent to pid 1: Docker's, not ours
        return sum(
            p.info["status"] == psutil.STATUS_ZOMBIE and not (p.info["name"] or "").startswith("containerd-shim")
            for p in psutil.process_iter(["status", "name"])
        )

    close_pools()
    zombies_before = zombies()
    kinds = [
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    return 0\n",
        "import os\ndef add(a, b):\n    os._exit(1)\n",
        "import os, time\ndef add(a, b):\n    if os.fork() == 0:\n        time.sleep(60)\n    return a + b\n",
        "import os, signal\ndef add(a, b):\n    os.kill(-1, signal.SIGKILL)\n",
    ]  # kills its own zygote
    jobs = [(kinds[i % len(kinds)], "add", TESTS[:2]) for i in range(200)]
    results = run_many(jobs, FAST, workers=4, backend=_CURRENT[0])
    assert [r.outcomes[0].passed for r in results[:5]] == [True, False, False, True, False]
    assert not any(r.status == "sandbox_error" for r in results)
    warm = len(_slot_processes())
    assert warm <= 4 * 2 * 4  # 4 slots × (zygote + judge) × at most (reaper, bwrap, its init, the server)
    close_pools()
    assert _settled(0) == 0
    time.sleep(0.5)
    assert zombies() <= zombies_before


_STUCK_JUDGE = """
import sys
from curriculab.training.sandbox import Limits, run_tests
from curriculab.training.sandbox.runner import close_pools
limits = Limits(test_timeout_s=1.0, load_timeout_s=5.0, cpu_s=20, memory_bytes=512 << 20)
looping = run_tests("def add(a, b):\\n    return a + b\\n", "add", [("loops", "while True:\\n    pass")], limits,
                    backend=sys.argv[2])
close_pools()
print(looping.outcomes[0].status)
"""


@pytest.mark.slow
def test_a_stuck_judge_is_replaced_without_orphaning_a_process(backend, under_subreaper):
    # a container without an init never reaps orphans: each stuck judge would leave a zombie there
    assert under_subreaper(_STUCK_JUDGE, backend) == (["timeout"], 0)


@pytest.mark.slow
@WIRE_ONLY
def test_a_bare_except_in_a_test_cannot_swallow_a_timeout_or_a_crash():
    tests = [("t", "try:\n    assert add(1, 2) == 3\nexcept:\n    pass\n")]
    for code in ("def add(a, b):\n    while True: pass\n", "import os\ndef add(a, b):\n    os._exit(1)\n"):
        result = never_passes(code, tests=tests)
        assert result.outcomes[0].status in ("timeout", "crashed")


@pytest.mark.slow
def test_hostile_test_code_from_a_problems_file_stays_in_the_judge(capfd):
    honest = "def add(a, b):\n    return a + b\n"
    printing = run_tests(honest, "add", [("prints", "print('{\"forged\": true}')\nassert add(1, 2) == 3")], FAST)
    assert printing.outcomes[0].passed and "forged" not in capfd.readouterr().out  # stdout stays the harness's
    exiting = run_tests(honest, "add", [("exits", "import os\nos._exit(0)"), ("after", "assert add(2, 2) == 4")], FAST)
    assert [(o.passed, o.status) for o in exiting.outcomes] == [(False, "failed"), (False, "failed")]
    assert exiting.outcomes[1].detail == "not run: testing stopped at exits"
    assert exiting.outcomes[0].detail == "the test code ended the test runner"
    started = time.monotonic()
    looping = run_tests(honest, "add", [("loops", "while True:\n    pass")], FAST)
    assert (looping.outcomes[0].status, looping.outcomes[0].detail) == (
        "timeout",
        "the test code did not finish in time",
    )
    # the test deadline and its grace stopped it, then the stuck judge was removed (a container takes
    # a second or two on a loaded machine); the load timeout and the CPU limit would take 10 s
    assert time.monotonic() - started < FAST.test_timeout_s + GRACE_S + 3 < min(FAST.load_timeout_s, FAST.cpu_s)
    again = run_tests(honest, "add", [("after", "assert add(2, 2) == 4")], FAST)
    assert again.outcomes[0].passed  # a fresh judge replaced the stuck one


@pytest.mark.slow
@WIRE_ONLY
def test_a_refused_reply_leaves_nothing_in_the_judge_for_the_completions_after(backend):
    # Two replies of two million ints (~75 MB each once parsed) whose last node cannot be decoded
    # (a refusal's traceback once held such a reply in a cycle, ~350 MB of it). The judge (220 MiB)
    # holds nothing of them when the next completion starts, so three honest ones that each return
    # 1.5 million ints all pass (kept, the two replies leave too little: checked by keeping them).
    limits = replace(FAST, memory_bytes=220 << 20, open_files=300 + os.getpid() % 100)  # a slot of its own
    forger = _FORGE + (
        "def add(a, b):\n"
        "    nodes = [['list', None, [[1], [2]]], ['list', None, list(range(2_000_000))], ['no such tag', 0]]\n"
        "    forge(json.dumps({'root': [3], 'nodes': nodes}).encode())\n"
    )
    honest = "def add(a, b):\n    return list(range(1_500_000)) if a == -1 else a + b\n"
    tests = [
        ("big", "r = add(-1, 0)\nassert len(r) == 1_500_000 and r[-1] == 1_499_999"),
        ("small", "assert add(1, 2) == 3"),
    ]
    results = run_many([(forger, "add", tests)] * 2 + [(honest, "add", tests)] * 3, limits, workers=1, backend=backend)
    for result in results[:2]:
        assert result.outcomes[0].detail.startswith("the reply was refused"), result.outcomes[0].detail
    for result in results[2:]:
        assert [o.passed for o in result.outcomes] == [True, True], [(o.status, o.detail) for o in result.outcomes]
