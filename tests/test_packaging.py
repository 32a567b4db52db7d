"""`pip install` adds exactly one top-level name, `curriculab`: the repository's analysis/,
taxonomy/, planner/ and training/ folders install as curriculab.analysis, ... and nothing named
`analysis` or `training` can shadow (or be shadowed by) a user's own folders."""

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds and installs the wheel

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_one_top_level_name_and_imports_outside_the_repo(tmp_path):
    import shutil

    source = tmp_path / "source"  # build from a copy: setuptools leaves build/ beside the sources
    anywhere = shutil.ignore_patterns("*.egg-info", "__pycache__", "*.duckdb")

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = {".venv", ".git", "build", "bench", "tests"} if Path(folder) == ROOT else set()
        return set(anywhere(folder, names)) | (top & set(names))

    shutil.copytree(ROOT, source, ignore=ignore)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("curriculab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {
        "curriculab",
        wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info",
    }
    assert "curriculab/taxonomy/v1.yaml" in names and "curriculab/trajectory/agents.yaml" in names
    # every package of the checkout (the symlinked folders' too) and the built-in task suite's files
    repo = Path(source)
    packages = {
        str(Path(root).relative_to(repo) / "__init__.py")
        for root, _, files in os.walk(repo / "curriculab", followlinks=True)
        if "__init__.py" in files and "__pycache__" not in root
    }
    assert packages - set(names) == set()
    suite = repo / "curriculab/training/terminal/suite"
    suite_files = {str(p.relative_to(repo)) for p in suite.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert suite_files - set(names) == set() and len(suite_files) > 100
    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    # bin/ holds the `curriculab` console script; the only importable name is curriculab
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith(".dist-info")) == ["bin", "curriculab"]
    # A user's project with its own analysis/ and training/ folders, outside this repository.
    project = tmp_path / "project"
    for folder in ("analysis", "training"):
        (project / folder).mkdir(parents=True)
        (project / folder / "__init__.py").write_text("MINE = True\n")
    script = (
        "import analysis, training, curriculab.analysis.store, curriculab.training.rewards, curriculab.cli;"
        "from curriculab.taxonomy.taxonomy import load_taxonomy;"
        "assert analysis.MINE and training.MINE;"
        "assert curriculab.analysis.store.__file__.startswith(" + repr(str(target)) + ");"
        "print(load_taxonomy('v2').version)"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run([sys.executable, "-c", script], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "v2", done.stderr[-2000:]
    bare = subprocess.run(
        [sys.executable, "-c", "import analysis"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert bare.returncode == 1 and "No module named 'analysis'" in bare.stderr


def test_the_commit_hooks_are_the_test_commands_static_checks():
    """.pre-commit-config.yaml: local hooks only (nothing to clone), each running a command of
    scripts/test.sh, and every static check of scripts/test.sh a hook."""
    import yaml

    root = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert {repo["repo"] for repo in config["repos"]} == {"local"}
    assert {hook["language"] for hook in hooks} == {"system"}
    script = [line.strip() for line in (root / "scripts" / "test.sh").read_text().splitlines()]
    # a check run in the background is the command before its redirection
    checks = [
        re.sub(r"\s+\d*>.*$", "", line) for line in script if line.startswith(".venv/bin/") and "pytest" not in line
    ]
    # a hook given the changed files runs on them where the script runs on the whole tree (`.`)
    ran = [hook["entry"] + ("" if hook.get("pass_filenames") is False else " .") for hook in hooks]
    assert sorted(ran) == sorted(checks)
