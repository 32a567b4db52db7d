"""Alternated A/B runs of this checkout against an earlier revision, for the `*_ab.py` benchmarks.

The baseline revision is checked out into a git worktree and imported from there (its own
`analysis/`, `taxonomy/`, ... under a `curriculab` package built from symlinks), so both sides run
the real `curriculab` command, one after the other, the order swapped every pair.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("analysis", "taxonomy", "planner", "training", "dashboard")

BASELINE_IMPORTS = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in "
    "str(getattr(f, '__module__', '')) + type(f).__module__]"
)
"""Python a baseline side runs first: it drops the editable install's import finder, which would
otherwise win over PYTHONPATH and import this checkout."""
_BASELINE_BOOT = (
    BASELINE_IMPORTS + "; import runpy; sys.argv[0] = 'curriculab'; "
    "runpy.run_module('curriculab.cli', run_name='__main__')"
)


def _remove_worktree(work: Path) -> None:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "baseline-src")], capture_output=True
    )


@contextmanager
def baseline_site(revision: str, work: Path) -> Iterator[str]:
    """A fresh `work` directory and in it a directory to put on PYTHONPATH that imports
    `curriculab.*` from `revision` (checked: the comparison would otherwise be with itself);
    the worktree is removed on the way out."""
    if work.exists():
        _remove_worktree(work)
        shutil.rmtree(work)
    work.mkdir(parents=True)
    checkout = work / "baseline-src"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(checkout), revision],
        check=True,
        capture_output=True,
    )
    try:
        site = work / "baseline-site"
        package = site / "curriculab"
        shutil.copytree(checkout / "curriculab", package)  # a revision with curriculab/<name> symlinks: followed
        for name in PACKAGES:
            if (checkout / name).is_dir() and not (package / name).exists():  # older revisions: package-dir remap
                (package / name).symlink_to(checkout / name)
        source = imported_from(str(site))
        if not source.startswith(str(work)):
            raise SystemExit(f"the baseline imports {source}, not the worktree: the comparison would be with itself")
        # its bytecode compiled once, as scripts/setup.sh compiles this checkout's: where
        # PYTHONDONTWRITEBYTECODE is set, the baseline would otherwise compile every module in every run
        compileall.compile_dir(str(package), quiet=1, workers=0)
        print(f"baseline {revision} imported from {source}", flush=True)
        yield str(site)
    finally:
        _remove_worktree(work)


def imported_from(site: str) -> str:
    """Where the baseline side imports the ingest code from."""
    code = BASELINE_IMPORTS + "; import curriculab.analysis.ingest.common as c; print(c.__file__)"
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": site},
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(site).parent,
    ).stdout.strip()


def run_curriculab(args: list[str], site: str | None, cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    """Seconds one `curriculab ARGS` process took: this checkout's (`site` None) or the baseline's.
    Run from `cwd`: `-c` puts the working directory first on sys.path, and the repo root holds curriculab/."""
    env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
    command = [sys.executable, "-c", _BASELINE_BOOT] if site else [sys.executable, "-m", "curriculab.cli"]
    started = time.perf_counter()
    done = subprocess.run([*command, *args], env=env, capture_output=True, timeout=1800, cwd=cwd)
    if done.returncode not in ok:
        raise SystemExit(f"curriculab {args[0]} failed: {done.stderr.decode()[-500:]}")
    return time.perf_counter() - started


def alternate(pairs: int, run: Callable[[str | None], float], site: str, report: dict) -> None:
    """`pairs` alternated pairs of `run(None)` (this checkout) and `run(site)` (the baseline);
    prints each pair, then `report` with the pairs, the medians and the median ratio (current / baseline)."""
    current, baseline = [], []
    for k in range(pairs):
        order = [(current, None), (baseline, site)]
        for times, side in order if k % 2 == 0 else order[::-1]:
            times.append(run(side))
        print(f"pair {k + 1}: current {current[-1]:.2f} s, baseline {baseline[-1]:.2f} s", flush=True)
    ratios = [c / b for c, b in zip(current, baseline)]
    print(
        json.dumps(
            {
                **report,
                "pairs": [{"current": c, "baseline": b} for c, b in zip(current, baseline)],
                "current_s": round(statistics.median(current), 3),
                "baseline_s": round(statistics.median(baseline), 3),
                "ratio_median": round(statistics.median(ratios), 3),
                "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
            }
        )
    )
