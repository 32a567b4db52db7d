"""The one interface both sandboxes launch through (`sandbox.backends.ProcessBackend`): the same
description of a sandbox gives the same confinement on bubblewrap and on the namespaces backend, and
what each sandbox (completions, episodes) reports as its backend is where it ran."""

import json
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import pytest

from curriculab.training.sandbox.backends import Bwrap, Namespaces, ProcessBackend, SandboxUnavailable
from curriculab.training.sandbox.isolation import UidLease, seccomp_program

# What a process can see and do, printed as JSON from inside a sandbox: its uid, whether it can
# write outside its one writable folder, its seccomp mode, the processes it sees, whether it
# reaches any address, what of the host's environment it holds, and whether a hidden folder shows.
_LOOK_AROUND = r"""
import ctypes, json, os, socket
def refused(action):
    try:
        action()
        return False
    except OSError:
        return True
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
def connect():
    s = socket.socket()
    s.settimeout(2)
    s.connect(("1.1.1.1", 53))
print(json.dumps({
    "uid": os.getuid(),
    "root_read_only": refused(lambda: open("/usr/curriculab-canary", "w")),
    "writable": not refused(lambda: open("/work/mine", "w").write("x")),
    "seccomp": status["Seccomp"].strip(),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "no_network": refused(connect),
    "unshare_refused": ctypes.CDLL(None, use_errno=True).unshare(0x40000000) == -1,  # CLONE_NEWNET
    "env": sorted(os.environ),
    "cwd": os.getcwd(),
    "hidden": os.listdir("/hidden"),
}))
"""


@pytest.fixture
def reachable():
    """A folder bubblewrap, running as the sandbox's uid, can reach (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="curriculab-backends-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("which", ["bwrap", "namespaces"])
def test_both_process_backends_confine_one_description_alike(reachable, which):
    if which == "namespaces" and os.geteuid() != 0:
        pytest.skip("the namespaces backend needs root (CI and scripts/setup.sh run as root)")
    backend: ProcessBackend = Bwrap() if which == "bwrap" else Namespaces(reachable / "root")
    work, hidden = reachable / "work", reachable / "secret"
    work.mkdir(mode=0o777)
    hidden.mkdir()
    (hidden / "answer-key").write_text("canary")
    lease = UidLease()
    try:
        if os.geteuid() == 0:
            os.chown(work, lease.uid, lease.uid)
        mounts = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
        mounts += ["--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--bind", str(work), "/work"]
        mounts += ["--ro-bind", str(hidden), "/hidden", "--tmpfs", "/hidden", "--remount-ro", "/"]
        launch = backend.launch(
            mounts,
            "/work",
            {"PATH": "/usr/bin", "HOME": "/work"},
            ["/usr/bin/python3", "-I", "-S", "-c", _LOOK_AROUND],
            uid=lease.uid,
            seccomp=seccomp_program(()),
        )
        try:
            done = subprocess.run(
                launch.command,
                capture_output=True,
                text=True,
                timeout=60,
                pass_fds=launch.pass_fds,
                env={"PATH": "/usr/bin:/bin", "CURRICULAB_HOST_SECRET": "canary"},
            )
        finally:
            launch.close()
    finally:
        lease.close()
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["uid"] == (lease.uid if os.geteuid() == 0 else os.geteuid())
    assert seen["root_read_only"] and seen["writable"] and (work / "mine").read_text() == "x"
    assert seen["seccomp"] == "2"  # the filter is installed
    assert seen["pids"][0] == 1 and len(seen["pids"]) <= 3  # its own pid namespace
    assert seen["no_network"] and seen["unshare_refused"]
    # only what was given (bubblewrap adds PWD, Python its C-locale coercion), never the host's
    assert set(seen["env"]) - {"PWD", "LC_CTYPE"} == {"HOME", "PATH"} and seen["cwd"] == "/work"
    assert seen["hidden"] == []  # a later tmpfs hides what was bound under it


def test_the_namespaces_backend_refuses_what_it_cannot_make_and_needs_root(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="the namespaces sandbox does not make bubblewrap's --ro-bind-data"):
        Namespaces(tmp_path / "root").launch(
            ["--ro-bind-data", "3", "/box/x"], "/", {}, ["/usr/bin/true"], uid=65534, seccomp=None
        )
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(
        SandboxUnavailable, match="the namespaces sandbox needs root: run as root or install bubblewrap"
    ):
        Namespaces(tmp_path / "root").launch([], "/", {}, ["/usr/bin/true"], uid=65534, seccomp=None)


@pytest.mark.skipif(os.geteuid() != 0, reason="the namespaces backend needs root (CI and scripts/setup.sh run as root)")
def test_without_bubblewrap_allowed_scoring_runs_completions_on_the_namespaces_backend(monkeypatch):
    from curriculab.training import rewards
    from curriculab.training.problems import builtin_problems

    monkeypatch.setattr(rewards, "detect_backend", lambda: "rlimits")  # as on a GPU box
    problems = {p.problem_id: p for p in builtin_problems()[:2]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scorer = rewards.Scorer(problems, allow_unsandboxed=True)
    assert scorer.backend == "namespaces"
    assert any(
        "scoring without bubblewrap: completions run under namespaces and chroot" in str(w.message) for w in caught
    )
    ids = list(problems)
    results = scorer.run(ids, [f"```python\n{problems[i].reference}\n```" for i in ids])
    assert all(r.backend == "namespaces" and r.status == "ok" for r in results), results
    assert all(all(o.passed for o in r.outcomes) for r in results)
    assert "namespaces and chroot, no bubblewrap" in results[0].isolation


def test_an_unknown_backend_is_refused_rather_than_run_unsandboxed():
    from curriculab.training.sandbox import run_tests

    with pytest.raises(ValueError, match=r"^backend 'bwarp' is not one of bwrap, namespaces, docker, rlimits$"):
        run_tests("def add(a, b):\n    return a + b\n", "add", [("t", "assert add(1, 2) == 3")], backend="bwarp")
