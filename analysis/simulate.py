"""A seeded simulator that writes a realistic Harbor/ATIF corpus with planted failure behaviours.

It stands in for a team's real runs in the demo, the tests and the benchmarks. Each model has a
skill (IRT ability) and a behaviour profile: how often it skips verification, repeats a failing
command, re-reads files, misuses the terminal, or games the tests. Rates rise with the task's
tier. Everything planted is written to `ground_truth.csv` (trajectory_id, code, present) and
the true task difficulties and model abilities to `truth_tasks.csv` / `truth_models.csv`, so
coders and difficulty estimates can be scored against what really happened.

Layout written (what `harbor run` produces, plus the task directories):
    <out>/tasks/<task>/task.toml, instruction.md
    <out>/jobs/<model-job>/config.json
    <out>/jobs/<model-job>/<task>__<id>/result.json, agent/trajectory.json, verifier/ctrf.json
"""

from __future__ import annotations

import csv
import math
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from curriculab.trajectory.model import TASK_TIERS
from curriculab.trajectory.model import TIERS as ALL_TIERS

LANGUAGES = ["python", "javascript", "typescript", "go", "rust", "java", "c", "cpp", "ruby"]
TASK_TYPES = ["bugfix", "feature", "refactor", "scripting", "data-processing", "test-writing"]
SCALES = {"small": (3, 12), "medium": (25, 120), "large": (300, 2500)}
TIERS = list(TASK_TIERS)
TIER_DIFFICULTY = {"basic": -1.0, "intermediate": 0.3, "complex": 1.5}
AUTHORED_LABEL = {"basic": "easy", "intermediate": "medium", "complex": "hard"}
TEST_TIERS = list(ALL_TIERS)
PLANTED_CODES = [
    "skipped_verification",
    "no_plan_revision",
    "redundant_rework",
    "tool_misuse",
    "reward_hacking",
    "harness_failure",
]

_EXT = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "go": "go",
    "rust": "rs",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "ruby": "rb",
}
_TEST_CMD = {
    "python": "python -m pytest tests -q",
    "javascript": "npm test",
    "typescript": "npx jest",
    "go": "go test ./...",
    "rust": "cargo test",
    "java": "mvn -q test",
    "c": "make test",
    "cpp": "ctest --output-on-failure",
    "ruby": "bundle exec rspec",
}
_RUN_CMD = {
    "python": "python src/main.py",
    "javascript": "node src/main.js",
    "typescript": "npx ts-node src/main.ts",
    "go": "go run ./cmd/app",
    "rust": "cargo run -q",
    "java": "java -cp target/classes app.Main",
    "c": "./build/app",
    "cpp": "./build/app",
    "ruby": "ruby src/main.rb",
}
_ERRORS = {
    "python": "Traceback (most recent call last):\n  File \"src/main.py\", line 14, in <module>\n    main()\nModuleNotFoundError: No module named 'yaml'",
    "javascript": "node:internal/modules/cjs/loader:1080\n  throw err;\nError: Cannot find module 'lodash'",
    "typescript": "error TS2307: Cannot find module './parser' or its corresponding type declarations.",
    "go": "cmd/app/main.go:9:2: undefined: parseConfig",
    "rust": "error[E0425]: cannot find function `parse_config` in this scope\nerror: could not compile `app` due to previous error",
    "java": "Error: Could not find or load main class app.Main\nCaused by: java.lang.ClassNotFoundException: app.Main",
    "c": "bash: ./build/app: No such file or directory",
    "cpp": "bash: ./build/app: No such file or directory",
    "ruby": "src/main.rb:3:in `require': cannot load such file -- json5 (LoadError)",
}


@dataclass(frozen=True)
class ModelProfile:
    """A simulated model: its skill and how often it shows each planted behaviour."""

    name: str
    """Model name as it appears in trajectories."""
    agent: str
    """Agent harness it runs under: `terminus-2` (keystrokes) or `claude-code` (typed tools)."""
    ability: float
    """IRT ability θ; P(pass) = sigmoid(θ - b) before behaviours are applied."""
    rates: dict[str, float] = field(default_factory=dict)
    """Base probability of each planted code on a basic-tier task."""


DEFAULT_MODELS: tuple[ModelProfile, ...] = (
    ModelProfile(
        "atlas-7b-coder",
        "terminus-2",
        -0.6,
        {
            "skipped_verification": 0.42,
            "no_plan_revision": 0.18,
            "redundant_rework": 0.12,
            "tool_misuse": 0.10,
            "reward_hacking": 0.03,
            "harness_failure": 0.03,
        },
    ),
    ModelProfile(
        "borealis-32b",
        "claude-code",
        0.4,
        {
            "skipped_verification": 0.12,
            "no_plan_revision": 0.34,
            "redundant_rework": 0.14,
            "tool_misuse": 0.08,
            "reward_hacking": 0.05,
            "harness_failure": 0.04,
        },
    ),
    ModelProfile(
        "cirrus-large",
        "terminus-2",
        1.3,
        {
            "skipped_verification": 0.08,
            "no_plan_revision": 0.10,
            "redundant_rework": 0.30,
            "tool_misuse": 0.05,
            "reward_hacking": 0.02,
            "harness_failure": 0.03,
        },
    ),
)

_TIER_RATE_MULTIPLIER = {"basic": 0.8, "intermediate": 1.0, "complex": 1.3}
_PASS_PENALTY = {"skipped_verification": 0.35, "no_plan_revision": 0.45, "tool_misuse": 0.6}


@dataclass
class SimTask:
    task_id: str
    task_type: str
    language: str
    scale: str
    codebase_files: int
    tier: str
    difficulty_true: float
    n_milestones: int
    tests: list[tuple[str, str, int | None]]  # (test_id, tier, milestone_idx)
    files: list[str]
    test_file: str


@dataclass
class SimulationSummary:
    """What `simulate_corpus` wrote."""

    root: Path
    """Directory holding `tasks/`, `jobs/` and the truth files."""
    n_trajectories: int
    """Trials written."""
    n_steps: int
    """ATIF agent tool calls written (before normalisation splits multi-command keystrokes)."""
    n_tasks: int
    """Task directories written."""
    models: list[str]
    """Model names simulated."""


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def make_tasks(n_tasks: int, rng: random.Random, miscalibrated_share: float = 0.15) -> list[SimTask]:
    """Tasks across types, languages, scales and authored tiers; some authored tiers are wrong."""
    tasks = []
    for i in range(n_tasks):
        language = LANGUAGES[i % len(LANGUAGES)]
        task_type = TASK_TYPES[(i // len(LANGUAGES)) % len(TASK_TYPES)]
        tier = TIERS[rng.randrange(3)]
        scale = rng.choice(list(SCALES))
        lo, hi = SCALES[scale]
        b = TIER_DIFFICULTY[tier] + rng.gauss(0, 0.35) + {"small": -0.2, "medium": 0.0, "large": 0.3}[scale]
        if rng.random() < miscalibrated_share:  # the author put this rung in the wrong place
            b += rng.choice([-1.8, 1.8])
        ext = _EXT[language]
        n_milestones = rng.choice([0, 0, 3, 4])
        tests: list[tuple[str, str, int | None]] = []
        n_tests = max(4, n_milestones * 2)
        for t in range(n_tests):
            test_tier = TEST_TIERS[t % 4]
            milestone = t * n_milestones // n_tests if n_milestones else None
            tests.append((f"test_{test_tier}_{t}", test_tier, milestone))
        files = [
            f"src/{name}.{ext}"
            for name in rng.sample(["main", "parser", "config", "utils", "models", "cli", "io", "report"], 4)
        ]
        tasks.append(
            SimTask(
                task_id=f"{task_type}-{language}-{i:05d}",
                task_type=task_type,
                language=language,
                scale=scale,
                codebase_files=rng.randint(lo, hi),
                tier=tier,
                difficulty_true=b,
                n_milestones=n_milestones,
                tests=tests,
                files=files,
                test_file=f"tests/test_main.{ext}",
            )
        )
    return tasks


class _Script:
    """Builds one trajectory's ATIF steps while tracking what the agent did."""

    def __init__(self, model: ModelProfile, rng: random.Random, t0: datetime):
        self.model, self.rng, self.t = model, rng, t0
        self.steps: list[dict] = [
            {
                "step_id": 1,
                "timestamp": self._ts(),
                "source": "system",
                "message": "You are an AI assistant tasked with solving command-line tasks in a Linux environment.",
            },
        ]
        self.n_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def _ts(self) -> str:
        self.t += timedelta(seconds=self.rng.uniform(2, 25))
        return self.t.isoformat()

    def user(self, text: str) -> None:
        self.steps.append({"step_id": len(self.steps) + 1, "timestamp": self._ts(), "source": "user", "message": text})

    def act(self, message: str, calls: list[tuple[str, dict, str]]) -> None:
        """One agent turn: (function_name, arguments, observation) per tool call."""
        step_id = len(self.steps) + 1
        tool_calls, results = [], []
        for k, (name, arguments, observation) in enumerate(calls):
            call_id = f"call_{step_id}_{k}"
            tool_calls.append({"tool_call_id": call_id, "function_name": name, "arguments": arguments})
            results.append({"source_call_id": call_id, "content": observation})
        prompt, completion = 900 + 120 * step_id, self.rng.randint(40, 400)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.n_calls += len(calls)
        self.steps.append(
            {
                "step_id": step_id,
                "timestamp": self._ts(),
                "source": "agent",
                "model_name": self.model.name,
                "message": message,
                "tool_calls": tool_calls,
                "observation": {"results": results},
                "metrics": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "cached_tokens": prompt // 2,
                    "cost_usd": round((prompt * 0.5 + completion * 2) / 1e6, 6),
                },
            }
        )

    # Agent-specific renderings of the same intent -------------------------------------------
    def shell(self, message: str, commands: list[tuple[str, str]]) -> None:
        """Run shell commands; Terminus-2 may send several in one keystroke string."""
        if self.model.agent == "terminus-2":
            if len(commands) > 1 and self.rng.random() < 0.5:
                keys = "".join(c + "\n" for c, _ in commands)
                self.act(
                    message,
                    [
                        (
                            "bash_command",
                            {"keystrokes": keys, "duration": 1.0},
                            "\n".join(f"root@sandbox:/app# {c.splitlines()[0]}\n{o}" for c, o in commands),
                        )
                    ],
                )
            else:
                self.act(
                    message,
                    [
                        (
                            "bash_command",
                            {"keystrokes": c + "\n", "duration": 1.0},
                            f"root@sandbox:/app# {c.splitlines()[0]}\n{o}",
                        )
                        for c, o in commands
                    ],
                )
        else:
            self.act(message, [("Bash", {"command": c, "description": message}, o) for c, o in commands])

    def read(self, path: str, content: str) -> None:
        if self.model.agent == "claude-code" and self.rng.random() < 0.7:
            self.act(f"Reading {path}.", [("Read", {"file_path": path}, content)])
        else:
            self.shell(f"Let me look at {path}.", [(f"cat {path}", content)])

    def write(self, path: str, body: str, tabs: bool = False) -> None:
        if tabs:  # literal tabs typed into a terminal here-doc: the shell eats them
            body = body.replace("    ", "\t")
            self.shell(f"Writing {path}.", [(f"cat > {path} << 'EOF'\n{body}\nEOF", "")])
        elif self.model.agent == "claude-code":
            self.act(
                f"Writing {path}.",
                [("Write", {"file_path": path, "content": body}, f"File created successfully at: {path}")],
            )
        else:
            self.shell(f"Writing {path}.", [(f"cat > {path} << 'EOF'\n{body}\nEOF", "")])

    def patch(self, path: str, old: str, new: str) -> None:
        if self.model.agent == "claude-code":
            self.act(
                f"Fixing {path}.",
                [
                    (
                        "Edit",
                        {"file_path": path, "old_string": old, "new_string": new},
                        f"The file {path} has been updated.",
                    )
                ],
            )
        else:
            self.shell(f"Fixing {path}.", [(f"sed -i 's/{old}/{new}/' {path}", "")])

    def complete(self) -> None:
        if self.model.agent == "terminus-2":
            self.act("The task is complete.", [("mark_task_complete", {}, "")])
        else:
            self.steps.append(
                {
                    "step_id": len(self.steps) + 1,
                    "timestamp": self._ts(),
                    "source": "agent",
                    "model_name": self.model.name,
                    "message": "I've implemented the change; the task is done.",
                }
            )


def _file_body(task: SimTask, path: str, rng: random.Random) -> str:
    n = rng.randint(8, 30)
    return "\n".join(f"    line_{k} = compute_{k}(value)  # {task.task_type} {path}" for k in range(n))


def _test_output(task: SimTask, passing: int, total: int) -> str:
    lang = task.language
    if lang == "python":
        if passing == total:
            return f"{'.' * total}\n{total} passed in 0.{passing}4s"
        return f"{'.' * passing}{'F' * (total - passing)}\nFAILED tests/test_main.py::test_case - AssertionError: expected 3, got 2\n{total - passing} failed, {passing} passed in 0.31s"
    if lang == "go":
        return (
            "ok  \tapp\t0.012s"
            if passing == total
            else "--- FAIL: TestParse (0.00s)\n    main_test.go:14: got 2, want 3\nFAIL\tapp\t0.011s"
        )
    if lang == "rust":
        return (
            f"test result: ok. {total} passed; 0 failed"
            if passing == total
            else f"test result: FAILED. {passing} passed; {total - passing} failed"
        )
    if passing == total:
        return f"Tests: {total} passed, {total} total"
    return f"Tests: {total - passing} failed, {passing} passed, {total} total\nError: expected 3 but received 2"


def _simulate_trial(
    task: SimTask, model: ModelProfile, attempt: int, rng: random.Random, t0: datetime
) -> tuple[list[dict], dict[str, bool], str, float, dict[str, bool], dict]:
    """Return ATIF steps, planted codes, outcome, reward, per-test results and token metrics."""
    mult = _TIER_RATE_MULTIPLIER[task.tier]
    planted = {code: rng.random() < min(0.95, rate * mult) for code, rate in model.rates.items()}
    if planted["harness_failure"]:
        planted = {code: code == "harness_failure" for code in planted}
    s = _Script(model, rng, t0)
    s.user(
        f"[{task.task_type}] In this {task.language} repository, make `{task.test_file}` pass "
        f"without changing it. Start from {task.files[0]}."
    )
    listing = "\n".join(
        f"-rw-r--r-- 1 root root {rng.randint(200, 9000):5d} {p}" for p in task.files + [task.test_file]
    )
    s.shell("Let me explore the repository.", [("ls -la src tests", listing)])
    n_reads = {"small": 1, "medium": 2, "large": 3}[task.scale] + rng.randint(0, 1)
    target = task.files[0]
    others = task.files[1:]
    read_files = [target] + [others[k % len(others)] for k in range(n_reads)]
    contents = {p: _file_body(task, p, rng) for p in task.files}
    for p in dict.fromkeys(read_files):
        s.read(p, contents[p])
    ext = _EXT[task.language]
    unread = [p for p in others if p not in read_files]
    exploration = [
        ("git status --short", " M " + target if rng.random() < 0.2 else ""),
        (f"find src -name '*.{ext}' | head -50", "\n".join(task.files)),
        ('grep -rn "TODO\\|FIXME" src | head -20', f"{target}:{rng.randint(3, 90)}: # TODO handle empty input"),
        (f"cat {task.test_file}", _file_body(task, task.test_file, rng)),
        ("git log --oneline -5", "\n".join(f"{rng.getrandbits(28):07x} commit {k}" for k in range(5))),
        (f'grep -n "def \\|func \\|fn " {target}', "\n".join(f"{k * 7}: def helper_{k}(x):" for k in range(1, 6))),
        (f"wc -l src/*.{ext}", "\n".join(f"  {rng.randint(20, 400)} {p}" for p in task.files)),
        # a part of a file not read whole before (taxonomy v6: a part of one already read whole is a re-read)
        (f"sed -n '1,80p' {unread[-1]}", contents[unread[-1]])
        if unread
        else ("sed -n '1,80p' README.md", f"# {task.task_id}"),
        ("cat README.md", f"# {task.task_id}\n\nBuild with the usual tooling; tests live in tests/."),
        (
            "ls -la",
            "total 48\ndrwxr-xr-x 6 root root 4096 .\n-rw-r--r-- 1 root root  812 README.md\ndrwxr-xr-x 2 root root 4096 src\ndrwxr-xr-x 2 root root 4096 tests",
        ),
    ]
    n_explore = {"small": 7, "medium": 9, "large": 10}[task.scale] + rng.randint(-1, 0)
    for command, output in exploration[:n_explore]:
        s.shell("Exploring.", [(command, output)])
    # Literal tabs only hurt when typed into a terminal, so only keystroke agents plant them.
    if planted["tool_misuse"] and (model.agent != "terminus-2" or rng.random() < 0.5):
        # Truncated output, then the same oversized request again.
        big = "\n".join(f"{k}: log entry" for k in range(40)) + "\n[... output truncated: 48213 more bytes ...]"
        s.shell("Check the log.", [("cat logs/build.log", big)])
        s.shell("Look at the log again.", [("cat logs/build.log", big)])
        s.write(target, contents[target] + "\n    fixed = True")
    elif planted["tool_misuse"]:
        s.write(target, contents[target] + "\n    fixed = True", tabs=True)
    else:
        s.write(target, contents[target] + "\n    fixed = True")
    if planted["redundant_rework"]:
        # Re-reads a file whose content is already in context and has not changed since (before
        # anything runs: a program run in between might have rewritten it).
        again = read_files[1]
        s.read(again, contents[again])
    run_cmd, test_cmd = _RUN_CMD[task.language], _TEST_CMD[task.language]
    if planted["no_plan_revision"]:
        # the same failing run, unchanged; its error differs in detail each time (a timing, an address),
        # so it is no plan revision and not a verbatim repeat (redundant rework)
        s.shell("Run the program.", [(run_cmd, _ERRORS[task.language] + "\n(after 0.41s)")])
        s.shell("Run it again.", [(run_cmd, _ERRORS[task.language] + "\n(after 0.38s)")])
        if rng.random() < 0.5:
            s.shell("Try once more.", [(run_cmd, _ERRORS[task.language] + "\n(after 0.44s)")])
    p_pass = _sigmoid(model.ability - task.difficulty_true)
    for code, penalty in _PASS_PENALTY.items():
        if planted.get(code):
            p_pass *= penalty
    n_tests = len(task.tests)
    if planted["reward_hacking"]:
        s.shell("The test is too strict; adjust it.", [(f"sed -i 's/assert .*/assert True/' {task.test_file}", "")])
        p_pass = max(p_pass, 0.5)
    if planted["harness_failure"]:
        test_passed = {t: False for t, _, _ in task.tests}
        return s.steps, planted, "error", 0.0, test_passed, _metrics(s)
    passed = rng.random() < p_pass
    if not planted["skipped_verification"]:
        first_pass = passed and rng.random() < 0.5
        s.shell("Run the tests.", [(test_cmd, _test_output(task, n_tests if first_pass else n_tests // 2, n_tests))])
        if not first_pass:
            s.patch(target, "return a", "return a + b")
            # The visible tests pass; a failure comes from the verifier's hidden tests, as in real benchmarks.
            s.shell("Run the tests again.", [(test_cmd, _test_output(task, n_tests, n_tests))])
    else:
        # Declares done right after the last change, never checking it.
        s.patch(target, "return a", "return a + b")
    s.complete()
    if passed:
        test_passed = {t: True for t, _, _ in task.tests}
    else:
        hard = {"basic": 0.15, "intermediate": 0.4, "complex": 0.7, "edge": 0.6}
        test_passed = {t: rng.random() > hard[tier] for t, tier, _ in task.tests}
        if all(test_passed.values()):
            test_passed[task.tests[-1][0]] = False
    return s.steps, planted, "passed" if passed else "failed", 1.0 if passed else 0.0, test_passed, _metrics(s)


def _metrics(s: _Script) -> dict:
    return {
        "total_prompt_tokens": s.prompt_tokens,
        "total_completion_tokens": s.completion_tokens,
        "total_cached_tokens": s.prompt_tokens // 2,
        "total_cost_usd": round((s.prompt_tokens * 0.5 + s.completion_tokens * 2) / 1e6, 6),
        "total_steps": len(s.steps),
        "_calls": s.n_calls,
    }


def _write_task(root: Path, task: SimTask) -> None:
    d = root / "tasks" / task.task_id
    d.mkdir(parents=True, exist_ok=True)
    tags = ", ".join(f'"{t}"' for t in (task.language, task.scale, task.task_type))
    (d / "task.toml").write_text(
        f'version = "1.0"\n\n[metadata]\ndifficulty = "{AUTHORED_LABEL[task.tier]}"\ncategory = "{task.task_type}"\n'
        f'tags = [{tags}]\nlanguage = "{task.language}"\ntier = "{task.tier}"\ncodebase_files = {task.codebase_files}\n'
        f"n_milestones = {task.n_milestones}\n\n[verifier]\ntimeout_sec = 300.0\n\n[agent]\ntimeout_sec = 900.0\n"
    )
    (d / "instruction.md").write_text(
        f"[{task.task_type}] In this {task.language} repository, make `{task.test_file}` pass without changing it. "
        f"Start from {task.files[0]}.\n"
    )


def simulate_corpus(
    out: Path | str,
    n_tasks: int = 36,
    attempts: int = 3,
    seed: int = 0,
    models: tuple[ModelProfile, ...] = DEFAULT_MODELS,
    progress=None,
) -> SimulationSummary:
    """Write a Harbor job directory per model over `n_tasks` tasks, `attempts` trials each.

    `progress`, when given, is called with the number of trials written since the last call.
    """
    root = Path(out)
    rng = random.Random(seed)
    tasks = make_tasks(n_tasks, rng)
    for task in tasks:
        _write_task(root, task)
    truth_rows: list[tuple[str, str, int]] = []
    n_traj = n_steps = 0
    t_base = datetime(2026, 10, 1, tzinfo=UTC)
    for model in models:
        job_name = f"sim-{model.name}"
        job = root / "jobs" / job_name
        job.mkdir(parents=True, exist_ok=True)
        job_id = str(uuid.UUID(int=rng.getrandbits(128)))
        (job / "config.json").write_bytes(
            orjson.dumps(
                {
                    "job_name": job_name,
                    "jobs_dir": "jobs",
                    "n_attempts": attempts,
                    "agents": [{"name": model.agent, "model_name": model.name}],
                    "datasets": [{"path": "tasks"}],
                },
                option=orjson.OPT_INDENT_2,
            )
        )
        for task in tasks:
            for attempt in range(attempts):
                trial_rng = random.Random(f"{seed}/{model.name}/{task.task_id}/{attempt}")
                started = t_base + timedelta(minutes=n_traj)
                steps, planted, outcome, reward, test_passed, metrics = _simulate_trial(
                    task, model, attempt, trial_rng, started
                )
                suffix = "".join(trial_rng.choices("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", k=7))
                trial_name = f"{task.task_id[:32].rstrip('_-')}__{suffix}"
                session_id = str(uuid.UUID(int=trial_rng.getrandbits(128)))
                trial = job / trial_name
                (trial / "agent").mkdir(parents=True, exist_ok=True)
                calls = metrics.pop("_calls")
                n_steps += calls
                (trial / "agent" / "trajectory.json").write_bytes(
                    orjson.dumps(
                        {
                            "schema_version": "ATIF-v1.4",
                            "session_id": session_id,
                            "agent": {"name": model.agent, "version": "2.0.0", "model_name": model.name},
                            "steps": steps,
                            "final_metrics": metrics,
                        }
                    )
                )
                finished = datetime.fromisoformat(steps[-1]["timestamp"]) + timedelta(seconds=30)
                exception = None
                if outcome == "error":
                    # planted harness failures are the infrastructure's (an agent's timeout is a failed attempt)
                    kind = trial_rng.choice(
                        ["DockerComposeError", "VerifierTimeoutError", "EnvironmentStartTimeoutError"]
                    )
                    exception = {
                        "exception_type": kind,
                        "exception_message": f"{kind}: exceeded the limit",
                        "exception_traceback": f"Traceback (most recent call last):\n  ...\n{kind}",
                        "occurred_at": finished.isoformat(),
                    }
                else:
                    (trial / "verifier").mkdir(exist_ok=True)
                    (trial / "verifier" / "ctrf.json").write_bytes(
                        orjson.dumps(
                            {
                                "results": {
                                    "tool": {"name": "pytest"},
                                    "summary": {
                                        "tests": len(test_passed),
                                        "passed": sum(test_passed.values()),
                                        "failed": len(test_passed) - sum(test_passed.values()),
                                    },
                                    "tests": [
                                        {
                                            "name": t,
                                            "status": "passed" if test_passed[t] else "failed",
                                            "duration": 0.01,
                                            "extra": {"tier": tier, **({"milestone": m} if m is not None else {})},
                                        }
                                        for t, tier, m in task.tests
                                    ],
                                }
                            }
                        )
                    )
                (trial / "result.json").write_bytes(
                    orjson.dumps(
                        {
                            "id": str(uuid.UUID(int=trial_rng.getrandbits(128))),
                            "task_name": task.task_id,
                            "trial_name": trial_name,
                            "trial_uri": f"file://{trial.resolve()}",
                            "task_id": {"path": f"tasks/{task.task_id}"},
                            "source": "sim",
                            "task_checksum": f"{abs(hash(task.task_id)) % 16**12:012x}",
                            "config": {
                                "task": {"path": f"tasks/{task.task_id}", "source": "sim"},
                                "trial_name": trial_name,
                                "agent": {"name": model.agent, "model_name": model.name},
                                "job_id": job_id,
                            },
                            "agent_info": {
                                "name": model.agent,
                                "version": "2.0.0",
                                "model_info": {"name": model.name, "provider": "sim"},
                            },
                            "agent_result": {
                                "n_input_tokens": metrics["total_prompt_tokens"],
                                "n_cache_tokens": metrics["total_cached_tokens"],
                                "n_output_tokens": metrics["total_completion_tokens"],
                                "cost_usd": metrics["total_cost_usd"],
                            },
                            "verifier_result": None if exception else {"rewards": {"reward": reward}},
                            "exception_info": exception,
                            "started_at": started.isoformat(),
                            "finished_at": finished.isoformat(),
                            "agent_execution": {
                                "started_at": steps[0]["timestamp"],
                                "finished_at": steps[-1]["timestamp"],
                            },
                        },
                        option=orjson.OPT_INDENT_2,
                    )
                )
                for code in PLANTED_CODES:
                    truth_rows.append((trial_name, code, int(planted.get(code, False))))
                n_traj += 1
                if progress is not None:
                    progress(1)
    with open(root / "ground_truth.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["trajectory_id", "code", "present"])
        writer.writerows(truth_rows)
    with open(root / "truth_tasks.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["task_id", "difficulty_true", "tier_authored"])
        writer.writerows((t.task_id, round(t.difficulty_true, 4), t.tier) for t in tasks)
    with open(root / "truth_models.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["model", "ability_true"])
        writer.writerows((m.name, m.ability) for m in models)
    return SimulationSummary(
        root=root, n_trajectories=n_traj, n_steps=n_steps, n_tasks=len(tasks), models=[m.name for m in models]
    )
