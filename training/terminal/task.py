"""A Harbor task directory as something to run: its steps, what its Dockerfile lays out and what
it installs, where its tests and oracle live.

The Dockerfile is read, never built: `COPY`/`ADD` of local files say where the task's files go,
`WORKDIR` and `ENV` the shell's start, package installs (`apt-get install`, `pip install`) what the
task needs from the machine, and any other `RUN` is replayed in the episode before the agent starts
(a task whose `RUN` cannot work there needs its image)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from curriculab.analysis.ingest.common import read_bytes
from curriculab.analysis.ingest.harbor_task import HarborTaskConfig, read_task_config
from curriculab.analysis.ingest.tasks import step_instruction
from curriculab.analysis.issues import IngestFailure, fail
from curriculab.trajectory.errors import CurriculabError

DEFAULT_WORKDIR = "/app"
"""Where the agent starts when neither task.toml nor the Dockerfile says (Terminal-Bench's habit)."""


class TaskError(CurriculabError, ValueError):
    """A task directory that cannot be run as written; the message names the file, the field and the fix."""


@dataclass(frozen=True)
class Placement:
    """One file or folder the Dockerfile copies into the image."""

    source: Path
    """On the host, inside the task's `environment/`."""
    target: str
    """Absolute path in the episode."""


@dataclass
class ImagePlan:
    """What `environment/Dockerfile` asks of the machine, in its order."""

    base: str | None = None
    """`FROM` (the bubblewrap backend runs on the host's tools instead)."""
    workdir: str | None = None
    """The last `WORKDIR`."""
    env: dict[str, str] = field(default_factory=dict)
    """`ENV` variables."""
    placements: list[Placement] = field(default_factory=list)
    """`COPY`/`ADD` of the build context."""
    commands: list[str] = field(default_factory=list)
    """`RUN` parts replayed in the episode (package installs and package-index housekeeping left out)."""
    apt_packages: list[str] = field(default_factory=list)
    """Packages `apt-get install` adds: the host must have them."""
    pip_packages: list[str] = field(default_factory=list)
    """Requirements `pip install` adds (with their pins): the host's python3 must have them."""
    unsupported: list[str] = field(default_factory=list)
    """Instructions that cannot be honoured without building the image (`COPY --from`, remote `ADD`, …)."""


@dataclass(frozen=True)
class Step:
    """One agent turn of the task and the verifier that judges it (a single-step task has one)."""

    name: str
    """`main` for a single-step task, else the `[[steps]]` name."""
    instruction: str
    """What the agent is told."""
    test_dirs: list[Path]
    """Folders uploaded to /tests, in order (a step's own files over the task's)."""
    test_script: str
    """Path of the script under /tests (`test.sh`)."""
    solution_dir: Path | None
    """The oracle's folder (mounted at /solution), or None when the task ships no solution."""
    agent_timeout_s: float | None
    """`[agent] timeout_sec` (the step's, else the task's)."""
    verifier_timeout_s: float | None
    """`[verifier] timeout_sec` (the step's, else the task's)."""
    verifier_env: dict[str, str]
    """`[verifier.env]`, the step's over the task's."""
    milestones: tuple[str, ...] | None = None
    """The keys its reward.json must hold, when the task names them (`[metadata] milestones`, or the
    step's `milestones` in a multi-step task); a verdict with other keys is refused."""
    milestone_count: int | None = None
    """How many named milestones its reward.json must hold (a single-step task's
    `number_of_milestones`, when the names are not given): more than one refuses a bare `reward`."""


@dataclass(frozen=True)
class TerminalTask:
    """A Harbor task ready to run: config, steps, image plan."""

    path: Path
    """The task directory."""
    task_id: str
    """Its directory name (as the store keys it)."""
    config: HarborTaskConfig
    """Its task.toml."""
    steps: list[Step]
    """In order."""
    image: ImagePlan
    """Its Dockerfile, read."""

    @property
    def workdir(self) -> str:
        return self.config.environment.workdir or self.image.workdir or DEFAULT_WORKDIR

    @property
    def reward_strategy(self) -> str:
        return self.config.multi_step_reward_strategy or "mean"

    @property
    def has_oracle(self) -> bool:
        return all(step.solution_dir is not None for step in self.steps)

    @property
    def agent_instruction(self) -> str:
        """What an agent trained on the task is told: a single step's instruction, or every step's
        in order under its name. TRL's environments have no "done" signal to move an episode on to
        its next step, so the agent hears the whole task at once and each step is judged at the end."""
        if len(self.steps) == 1:
            return self.steps[0].instruction
        count = len(self.steps)
        return (
            "\n\n".join(
                f"Step {number} of {count} ({step.name}):\n{step.instruction.strip()}"
                for number, step in enumerate(self.steps, start=1)
            )
            + f"\n\nDo all {count} steps; each is checked when you finish."
        )


def load_task(task_dir: Path | str) -> TerminalTask:
    """Read a task directory; `TaskError` names the file, the field and the fix."""
    task_dir = Path(task_dir).resolve()
    toml_path = task_dir / "task.toml"
    try:
        config = read_task_config(toml_path, read_bytes(toml_path, "harbor"))
        steps = _steps(task_dir, config)
        dockerfile = task_dir / "environment" / "Dockerfile"
        image = read_dockerfile(dockerfile) if dockerfile.is_file() else ImagePlan()
    except IngestFailure as exc:
        raise TaskError(exc.issue.reason) from None
    return TerminalTask(task_dir, task_dir.name, config, steps, image)


def _steps(task_dir: Path, config: HarborTaskConfig) -> list[Step]:
    tests = task_dir / "tests"
    if not config.steps:
        instruction = task_dir / "instruction.md"
        if not instruction.is_file():
            raise fail(task_dir, "has no instruction.md", "Write the task's instruction in instruction.md")
        if not (tests / "test.sh").is_file():
            raise fail(
                tests / "test.sh", "is missing", "Write the verifier: tests/test.sh writing /logs/verifier/reward.txt"
            )
        solution = task_dir / "solution"
        return [
            Step(
                "main",
                instruction.read_text(errors="replace"),
                [tests],
                "test.sh",
                solution if (solution / "solve.sh").is_file() else None,
                config.agent.timeout_sec,
                config.verifier.timeout_sec,
                dict(config.verifier.env),
                config.milestone_names,
                config.declared_milestones,
            )
        ]
    steps = []
    for index, step in enumerate(config.steps):
        folder = task_dir / "steps" / step.name
        instruction = step_instruction(task_dir, config, index)
        dirs = [d for d in (tests, folder / "tests") if d.is_dir()]
        if not any((d / "test.sh").is_file() for d in dirs):
            raise fail(
                config.path,
                f"step {step.name!r} has no verifier",
                f"Write steps/{step.name}/tests/test.sh (or a shared tests/test.sh)",
                field=f"steps[{index}].name",
            )
        solution = folder / "solution"
        steps.append(
            Step(
                step.name,
                instruction.read_text(errors="replace"),
                dirs,
                "test.sh",
                solution if (solution / "solve.sh").is_file() else None,
                step.agent.timeout_sec or config.agent.timeout_sec,
                step.verifier.timeout_sec or config.verifier.timeout_sec,
                {**config.verifier.env, **step.verifier.env},
                step.milestones,
            )
        )
    return steps


_HOUSEKEEPING = re.compile(
    r"^(apt-get|apt)\s+(update|clean|autoremove|autoclean)\b|^rm\s+-rf?\s+/var/lib/apt/lists|^(apt-get|apt)\s+-\S+\s+update\b"
)
_APT_INSTALL = re.compile(r"^(?:DEBIAN_FRONTEND=\S+\s+)?(?:apt-get|apt)\s+(?:\S+\s+)*?install\s+(.*)$")
_PIP_INSTALL = re.compile(r"^(?:python3?\s+-m\s+)?(?:pip3?|uv\s+pip)\s+install\s+(.*)$")


def read_dockerfile(path: Path) -> ImagePlan:
    """Read a Dockerfile's instructions (continuation lines joined, comments dropped)."""
    text = read_bytes(path, "harbor").decode("utf-8", errors="replace")
    plan = ImagePlan()
    context = path.parent
    workdir = "/"
    for number, instruction in _instructions(text):
        keyword, _, rest = instruction.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            plan.base = rest.split()[0] if rest else None
        elif keyword == "WORKDIR":
            workdir = rest if rest.startswith("/") else f"{workdir.rstrip('/')}/{rest}"
            plan.workdir = workdir
        elif keyword == "ENV":
            plan.env.update(_env_pairs(rest))
        elif keyword in ("COPY", "ADD"):
            _place(plan, path, number, keyword, rest, context, workdir)
        elif keyword == "RUN":
            _run(plan, rest)
    return plan


def _instructions(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append((start, pending + stripped))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def _env_pairs(rest: str) -> dict[str, str]:
    words = shlex.split(rest)
    if words and "=" not in words[0]:  # the old `ENV KEY value` form
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words if "=" in word)


def _place(
    plan: ImagePlan, dockerfile: Path, number: int, keyword: str, rest: str, context: Path, workdir: str
) -> None:
    words = shlex.split(rest)
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    if any(f.startswith("--from") for f in flags) or len(paths) < 2:
        plan.unsupported.append(f"line {number}: {keyword} {rest}")
        return
    *sources, target = paths
    if not target.startswith("/"):
        target = f"{workdir.rstrip('/')}/{target}"
    for source in sources:
        if "://" in source:
            plan.unsupported.append(f"line {number}: {keyword} of a URL ({source})")
            continue
        matches = sorted(context.glob(source)) if any(c in source for c in "*?[") else [context / source]
        for match in matches:
            resolved = match.resolve()
            if not resolved.is_relative_to(context.resolve()) or not match.exists():
                raise fail(
                    dockerfile,
                    f"line {number}: {keyword} {source}: no such file in environment/",
                    "Add the file to environment/ or fix the path",
                    source_format="harbor",
                )
            into_dir = target.endswith("/") or len(sources) > 1 or len(matches) > 1
            if match.is_dir() and source.rstrip("/") in (".", ""):
                for child in sorted(match.iterdir()):
                    if child.name != "Dockerfile":
                        plan.placements.append(Placement(child, f"{target.rstrip('/')}/{child.name}"))
            elif into_dir and not match.is_dir():
                plan.placements.append(Placement(match, f"{target.rstrip('/')}/{match.name}"))
            else:
                plan.placements.append(Placement(match, target.rstrip("/") or "/"))


def _run(plan: ImagePlan, rest: str) -> None:
    if rest.startswith("["):
        plan.commands.append(rest)
        return
    for part in re.split(r"\s*(?:&&|;)\s*", rest):
        part = part.strip()
        if not part or _HOUSEKEEPING.match(part):
            continue
        apt = _APT_INSTALL.match(part)
        if apt:
            plan.apt_packages.extend(w.split("=")[0] for w in shlex.split(apt.group(1)) if not w.startswith("-"))
            continue
        pip = _PIP_INSTALL.match(part)
        if pip:
            words = shlex.split(pip.group(1))
            plan.pip_packages.extend(w for w in words if not w.startswith("-") and not w.endswith(".txt"))
            if "-r" in words or "--requirement" in words:
                plan.unsupported.append(f"pip install from a requirements file ({part})")
            continue
        plan.commands.append(part)
