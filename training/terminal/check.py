"""`tasks check`: whether a task runs here and on which backend (or why not), and whether its
verifier can be trusted: the oracle (its `solution/solve.sh`) must score 1 on every milestone and
the do-nothing run 0, as Harbor's `oracle` and `nop` agents check."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from curriculab.training.terminal.episode import Episode
from curriculab.training.terminal.shared import EpisodeError, EpisodeLimits, EpisodeResult, NeedsImage
from curriculab.training.terminal.task import TaskError, TerminalTask, load_task, read_dockerfile

SYSTEM_PYTHON = "/usr/bin/python3"
_NETWORK = re.compile(
    r"\b(curl|wget|git\s+clone|pip3?\s+install|uv\s+(pip|tool|sync|add|run)|uvx|apt(-get)?\s+install)\b"
)


@functools.cache
def _installed_apt(package: str) -> bool:
    if not shutil.which("dpkg-query"):
        return False
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${db:Status-Status}", package], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() == "installed"


@functools.cache
def _python_distribution(name: str) -> str | None:
    """The version of distribution `name` in the host's system python3 (what episodes run), or None."""
    if not Path(SYSTEM_PYTHON).exists():
        return None
    done = subprocess.run(
        [SYSTEM_PYTHON, "-I", "-c", "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))", name],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def _pip_missing(requirement: str) -> str | None:
    parts = re.split(r"(==|>=|<=|~=|!=|>|<)", requirement, maxsplit=1)
    name = re.sub(r"\[.*\]$", "", parts[0]).strip()
    have = _python_distribution(name)
    if have is None:
        return requirement
    if len(parts) == 3 and parts[1] == "==" and have != parts[2].strip():
        return f"{requirement} (python3 has {have})"
    return None


def readiness(task: TerminalTask, backend: str = "bwrap", image_present: bool = False) -> list[str]:
    """Why the task cannot run on `backend` here (empty: it can). bubblewrap runs it on this
    machine's tools; Docker in its own image when the daemon has it (`image_present`), else in the
    host-tools image (`docker.HOST_TOOL_PACKAGES`, python3 with its standard library only)."""
    image = task.config.environment.docker_image
    own_image = backend == "docker" and image_present
    reasons = [] if own_image else [f"needs its image: {item}" for item in task.image.unsupported]
    if image and not task.image.placements and not own_image:
        reasons.append(
            f"needs its image: {image} (a prebuilt image with no Dockerfile to read; "
            "`docker load` it and use --backend docker: no registry is reachable)"
        )
    if not own_image:
        if backend == "docker":
            from curriculab.training.terminal.docker import HOST_TOOL_PACKAGES

            missing_apt = [p for p in task.image.apt_packages if p not in HOST_TOOL_PACKAGES]
            missing_pip = list(task.image.pip_packages)
            where = "the host-tools image"
        else:
            missing_apt = [p for p in task.image.apt_packages if not _installed_apt(p)]
            missing_pip = [m for m in map(_pip_missing, task.image.pip_packages) if m]
            where = "here"
        if missing_apt:
            reasons.append(f"needs its image: apt packages missing {where}: {', '.join(missing_apt)}")
        if missing_pip:
            reasons.append(f"needs its image: python3 packages missing {where}: {', '.join(missing_pip)}")
    for step in task.steps:
        for folder in step.test_dirs:
            if (folder / "Dockerfile").is_file() and not own_image:  # Harbor's separate verifier image
                verifier_image = read_dockerfile(folder / "Dockerfile")
                missing = [p for p in verifier_image.apt_packages if not _installed_apt(p)]
                missing += [m for m in map(_pip_missing, verifier_image.pip_packages) if m]
                if missing:
                    reasons.append(f"verifier needs packages: {', '.join(missing)} (its tests/Dockerfile)")
            script = folder / step.test_script
            if not script.is_file():
                continue
            lines = script.read_text(errors="replace").splitlines()
            fetches = [
                f"{script.name}:{n} `{line.strip()[:60]}`"
                for n, line in enumerate(lines, 1)
                if _NETWORK.search(line) and not line.lstrip().startswith("#")
            ]
            if fetches:
                reasons.append(f"verifier needs the network: {'; '.join(fetches[:3])}")
            uses_pytest = any(re.search(r"\bpytest\b", line) for line in lines)
            if uses_pytest and not own_image and (backend == "docker" or _python_distribution("pytest") is None):
                where = "the host-tools image" if backend == "docker" else "this machine's python3"
                reasons.append(f"verifier needs packages: pytest (not in {where})")
    return list(dict.fromkeys(reasons))


@dataclass
class RunSummary:
    """One checking run (the oracle or the do-nothing agent)."""

    milestones: dict[str, float]
    """Reward per milestone."""
    reward: float
    """The trial's reward."""
    seconds: float
    """Wall-clock time of the whole episode (setup, agent, verifier)."""
    error: str | None = None
    """Why the verifier gave no reward, when it did not."""

    @classmethod
    def of(cls, result: EpisodeResult, seconds: float) -> RunSummary:
        return cls(result.milestones, result.reward, seconds, result.error)


@dataclass
class TaskCheck:
    """What `tasks check` found for one task directory."""

    path: str
    """The task directory."""
    task_id: str
    """Its name."""
    backend: str | None
    """Where it ran (`bwrap` or `docker`), or None when it cannot run here."""
    reasons: list[str] = field(default_factory=list)
    """Why it does not run here."""
    unreadable: str | None = None
    """Why the directory is not a task that can be read (file, field, fix)."""
    oracle: RunSummary | None = None
    """Its solution's run (None: it ships no solution, or it does not run here)."""
    nop: RunSummary | None = None
    """The do-nothing run."""
    flags: list[str] = field(default_factory=list)
    """Why its verifier cannot be trusted (empty: it can, as far as these runs show)."""

    @property
    def ok(self) -> bool:
        """It runs here and nothing about its verifier was flagged."""
        return self.backend is not None and not self.flags


def check_task(path: Path | str, limits: EpisodeLimits | None = None, backend: str = "bwrap") -> TaskCheck:
    """Load, check readiness, run the oracle and the do-nothing agent on `backend` (bwrap or
    docker), flag an untrustworthy verifier."""
    path = Path(path)
    try:
        task = load_task(path)
    except TaskError as exc:
        return TaskCheck(str(path), path.name, None, unreadable=str(exc))
    image_present, docker_client = False, None
    if backend == "docker":  # one client serves the check and both its episodes
        from curriculab.training.sandbox.docker_backend import client
        from curriculab.training.terminal.docker import task_image

        docker_client = client()
        if docker_client is None:
            return TaskCheck(
                str(path), task.task_id, None, ["no Docker daemon answers (start dockerd or set DOCKER_HOST)"]
            )
        image_present = task_image(docker_client, task) is not None
    reasons = readiness(task, backend, image_present)
    report = TaskCheck(str(path), task.task_id, None if reasons else backend, reasons)
    if reasons:
        return report
    limits = limits or EpisodeLimits()
    try:
        report.nop = _timed(task, limits, False, backend, docker_client)
        if task.has_oracle:
            report.oracle = _timed(task, limits, True, backend, docker_client)
    except NeedsImage as exc:
        report.backend, report.reasons = None, [str(exc)]
        return report
    except EpisodeError as exc:
        report.flags.append(f"the episode failed: {exc}")
        return report
    if report.oracle is not None:
        if report.oracle.error:
            report.flags.append(f"the oracle's verifier gave no reward: {report.oracle.error}")
        short = {k: v for k, v in report.oracle.milestones.items() if v < 1}
        if short or report.oracle.reward < 1:
            report.flags.append(
                f"the oracle scores {report.oracle.reward:g} ({_named(short)}): fix the solution or the verifier"
            )
    if report.nop.error:
        report.flags.append(f"the do-nothing run's verifier gave no reward: {report.nop.error}")
    credited = {k: v for k, v in report.nop.milestones.items() if v > 0}
    if credited or report.nop.reward > 0:
        report.flags.append(
            f"the do-nothing run scores {report.nop.reward:g} ({_named(credited)}): the verifier credits work not done"
        )
    return report


def _named(milestones: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in milestones.items()) or "no milestone"


def _timed(
    task: TerminalTask, limits: EpisodeLimits, oracle: bool, backend: str, docker_client: object | None
) -> RunSummary:
    started = time.monotonic()
    with Episode(task, limits, oracle=oracle, backend=backend, docker_client=docker_client) as episode:
        while not episode.finished:
            if oracle:
                budget = max(limits.command_timeout_s, min(task.steps[episode.step_index].agent_timeout_s or 600, 600))
                episode.run("bash /solution/solve.sh", timeout_s=budget)
            episode.end_step()
        result = episode.finish()
    return RunSummary.of(result, time.monotonic() - started)
