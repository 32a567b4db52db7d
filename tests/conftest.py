"""Shared test helpers: fixture paths, a fresh store on disk, and a CLI runner."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from curriculab.analysis.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
FORMAT_DIRS = ("harbor", "atif", "tb", "swe-agent", "jsonl")
"""One sample folder per supported format (the rest of fixtures/ serves the coders)."""


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def formats() -> list[Path]:
    """The format sample folders, to ingest together."""
    return [FIXTURES / name for name in FORMAT_DIRS]


@pytest.fixture
def copy_fixture(tmp_path: Path):
    """Copy a fixture file or directory into tmp_path so a test may change it."""

    def _copy(relative: str) -> Path:
        source = FIXTURES / relative
        target = tmp_path / "input" / relative
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
        return target

    return _copy


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture
def store(db_path: Path):
    with Store(db_path) as s:
        yield s


@pytest.fixture
def cli_run(db_path: Path):
    """Invoke the real click command in-process; returns the click Result."""
    from curriculab.cli import cli

    def _run(*args: str, input: str | None = None, db: bool = True):
        runner = CliRunner()
        argv = (["--db", str(db_path)] if db else []) + list(args)
        return runner.invoke(cli, argv, input=input, catch_exceptions=False)

    return _run


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory) -> Path:
    """The demo's store, built once: three simulated models, rule codes, planted-truth labels and
    reliability, an IRT fit, and a stored plan per model over the built-in problems. Copy it
    (`demo_store_copy`) before writing to it."""
    from curriculab.analysis import queries
    from curriculab.analysis.coding import run_rule_coders
    from curriculab.analysis.difficulty import fit_store
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.labels import agreement, import_labels
    from curriculab.analysis.simulate import simulate_corpus
    from curriculab.planner import plan as planning
    from curriculab.training.problems import builtin_problems

    root = tmp_path_factory.mktemp("demo-store")
    corpus = simulate_corpus(root / "corpus", n_tasks=36, attempts=3, seed=0)
    path = root / "store.duckdb"
    with Store(path) as store:
        ingest(store, [corpus.root])
        run_rule_coders(store)
        import_labels(store, corpus.root / "ground_truth.csv", annotator="simulator")
        agreement(store, "rules", "simulator")
        fit_store(store)
        problems = builtin_problems()
        for model in queries.known_models(store):
            planning.save(store, planning.build_plan(store, model, problems, "builtin"))
    return path


@pytest.fixture
def demo_store_copy(demo_store: Path, tmp_path: Path) -> Path:
    target = tmp_path / "demo.duckdb"
    shutil.copy(demo_store, target)
    return target


ON_THE_MACHINE_WORKER = (
    "training/",
    "dashboard/",
    "test_cli.py",
    "test_tiers.py",
    "taxonomy/test_verifier.py",
    "analysis/test_verifier_coding.py",
)
"""Test files that start sandboxes, episodes or containers (trainers: `TRAINER_WORKER`), or count the host's processes
(a test that finds every process left behind sees every sandbox on the machine): under
`scripts/test.sh` (pytest-xdist, `--dist loadgroup`) one worker runs them one after another, as a
plain `pytest` does, while the other worker runs the rest beside them."""


TRAINER_WORKER = (
    "training/test_grpo.py",
    "training/test_agentic.py",
    "training/test_ddp.py",
    "training/test_generation.py",
    "training/test_sampling.py",
)
"""Test files that train (torch-bound; their sandboxes are bubblewrap and namespaces, never Docker,
and none counts another test's processes): one after another on the worker that does not run
`ON_THE_MACHINE_WORKER`, the rest filling in beside both. The two groups are dispatched first, so
neither waits behind the short tests."""


ALONE = ("training/test_sandbox_redteam.py", "training/test_sandbox_isolation.py")
"""Test files that count every sandbox process on the host right after a teardown: they run after
the others, on a machine with nothing else running (`scripts/test.sh`'s second pass), since a
teardown waits on the CPU the other tests take. A single test marked `alone` (one that must do an
amount of CPU work inside a wall-clock budget) runs in that pass too."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers by what a test needs: the demo store (built once, ~15 s) makes a test `slow`; a
    test run on the Docker backend is `docker` (it needs a daemon) and `slow`. Modules whose
    every test is slow say so with `pytestmark`; `pytest -m "not slow"` is the fast tier. The
    files of `ON_THE_MACHINE_WORKER` share one xdist group, those of `TRAINER_WORKER` another. `CURRICULAB_TESTS=shared` keeps all but
    the `ALONE` files, `CURRICULAB_TESTS=alone` only those (unset: every test)."""
    tests = Path(__file__).resolve().parent
    wanted = os.environ.get("CURRICULAB_TESTS")
    kept, left_out = [], []
    for item in items:
        path = item.path.relative_to(tests).as_posix()
        alone = path in ALONE or item.get_closest_marker("alone") is not None
        if wanted in ("shared", "alone") and alone != (wanted == "alone"):
            left_out.append(item)
            continue
        kept.append(item)
        if path.startswith(TRAINER_WORKER):
            item.add_marker(pytest.mark.xdist_group("trainer"))
        elif path.startswith(ON_THE_MACHINE_WORKER):
            item.add_marker(pytest.mark.xdist_group("machine"))
        if "demo_store" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
        callspec = getattr(item, "callspec", None)
        if (
            callspec is not None and callspec.params.get("backend") == "docker"
        ) or item.path.name == "test_docker_remote.py":
            item.add_marker(pytest.mark.docker)
            item.add_marker(pytest.mark.slow)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
    # the two long groups first (xdist hands out work in collection order), the short tests after
    rank = {"machine": 0, "trainer": 1}
    kept.sort(key=lambda item: min((rank.get(str(m.args[0]), 2) for m in item.iter_markers("xdist_group")), default=2))
    items[:] = kept


def _require_docker(reachable: bool) -> None:
    if reachable:
        return
    if os.environ.get("CURRICULAB_SKIP_DOCKER") == "1":
        pytest.skip("CURRICULAB_SKIP_DOCKER=1: the Docker backend's tests are left out")
    pytest.fail(
        "no Docker daemon reachable: run ./scripts/setup.sh as root (it starts dockerd), or set "
        "CURRICULAB_SKIP_DOCKER=1 to leave the Docker backend's tests out",
        pytrace=False,
    )


@pytest.fixture
def require_docker():
    """`require_docker(reachable)`: a Docker-backend test without a daemon fails saying how to get
    one, unless Docker was left out on purpose (CURRICULAB_SKIP_DOCKER=1); never a silent skip."""
    return _require_docker


def leaderboard_with_a_pass_after_timeout(tmp_path: Path) -> Path:
    """A copy of the Terminal-Bench leaderboard fixture with one more trial in the real shape: its
    tests passed although the harness recorded `agent_timeout` (378 of the real leaderboard's
    1,614 agent faults are such: `is_resolved: true`, `failure_mode: agent_timeout`)."""
    import json
    import shutil

    source = Path(shutil.copytree(FIXTURES / "tb-leaderboard", tmp_path / "tb-leaderboard"))
    run = source / "20250811_cursor-cli_claude-4-sonnet" / "run1_2025-08-10__05-27-18"
    trial = json.loads(next((run / "hello-world").glob("*/results.json")).read_text())
    trial.update(
        id="00000000-0000-4000-8000-379752412299",
        task_id="hello-world-2",
        trial_name="hello-world-2.1-of-1.2025-08-10__05-27-18",
        is_resolved=True,
        failure_mode="agent_timeout",
        parser_results={"test_hello_file_exists": "passed", "test_hello_file_content": "passed"},
    )
    folder = run / "hello-world-2" / trial["trial_name"]
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(trial, indent=4))
    return source


def leaderboard_that_mostly_times_out(tmp_path: Path) -> Path:
    """A copy of the Terminal-Bench leaderboard fixture where cursor-cli with claude-sonnet-4 runs out
    of time on two more tasks, in the real shape (`failure_mode: agent_timeout`, the tests then
    failed): 3 of its 4 failures are timeouts, most on tasks the real leaderboard's systems time out on."""
    import json
    import shutil

    source = Path(shutil.copytree(FIXTURES / "tb-leaderboard", tmp_path / "tb-leaderboard"))
    run = source / "20250811_cursor-cli_claude-4-sonnet" / "run2_2025-08-10__21-53-39"
    timed_out = json.loads(next((run / "reshard-c4-data").glob("*/results.json")).read_text())
    for number, task in enumerate(("build-linux-kernel-qemu", "train-fasttext"), start=1):
        trial = {
            **timed_out,
            "id": f"00000000-0000-4000-8000-00000000000{number}",
            "task_id": task,
            "trial_name": f"{task}.1-of-1.2025-08-10__21-53-39",
            "instruction": f"Task text of {task} (shortened).",
            "parser_results": {"test_output_exists": "failed"},
        }
        folder = run / task / trial["trial_name"]
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(trial, indent=4))
    return source


def leaderboard_with_a_broken_and_a_trivial_task(
    tmp_path: Path,
    tasks: tuple[str, str, str] = ("nginx-request-logging", "hello-world", "fix-permissions"),
    submissions: tuple[str, ...] = ("20250818_goose_claude-opus-4-1", "20250820_terminus_gpt-5", "20250821_codex_o3"),
) -> Path:
    """Three Terminal-Bench submissions in the real run-level shape (the goose fixture's
    `<timestamp>_results.json`), four runs each, over three `tasks`: the first never solved (as
    nginx-request-logging on the real leaderboard), the second always solved, the third mixed."""
    import json

    template = json.loads(
        (
            FIXTURES / "tb-leaderboard" / "20250818_goose_claude-opus-4-1" / "2025-08-17__09-12-00_results.json"
        ).read_text()
    )
    trial = template["results"][0]
    root = tmp_path / "tb-health"
    for s, submission in enumerate(submissions):
        folder = root / submission
        folder.mkdir(parents=True)
        for run in range(4):
            stamp = f"2025-08-1{run}__0{s}-12-00"
            results = []
            for t, (task, resolved) in enumerate(zip(tasks, (False, True, (run + s) % 2 == 0))):
                results.append(
                    {
                        **trial,
                        "id": f"00000000-0000-4000-8000-{s:04d}{run:04d}{t:04d}",
                        "task_id": task,
                        "trial_name": f"{task}.1-of-1.{stamp}",
                        "instruction": f"Task text of {task} (shortened).",
                        "is_resolved": resolved,
                        "failure_mode": "unset",
                        "parser_results": {"test_outcome": "passed" if resolved else "failed"},
                    }
                )
            resolved_ids = [r["id"] for r in results if r["is_resolved"]]
            document = {
                **template,
                "id": f"00000000-0000-4000-9000-{s:04d}{run:08d}",
                "results": results,
                "n_resolved": len(resolved_ids),
                "n_unresolved": len(results) - len(resolved_ids),
                "resolved_ids": resolved_ids,
                "unresolved_ids": [r["id"] for r in results if not r["is_resolved"]],
                "accuracy": len(resolved_ids) / len(results),
            }
            (folder / f"{stamp}_results.json").write_text(json.dumps(document, indent=4))
    return root
