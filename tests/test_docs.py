"""The README fits on a few screens and points to the reference; every script in bench/ and
scripts/investigations/ is indexed in its folder's README; every doc link resolves."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_fits_in_250_lines_and_links_every_reference_doc():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme))
    assert linked == {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}


@pytest.mark.parametrize("folder", ["bench", "scripts/investigations"])
def test_every_script_is_indexed_in_its_folders_readme(folder):
    index = (ROOT / folder / "README.md").read_text()
    listed = set(re.findall(r"^\| `([\w.]+)` \|", index, re.M))
    scripts = {p.name for p in (ROOT / folder).iterdir() if p.suffix in (".py", ".sh")}
    assert listed == scripts


def test_every_relative_link_in_the_docs_resolves():
    broken = []
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "bench" / "README.md"]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith(("http://", "https://")) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def _layout_rows() -> list[tuple[str, str]]:
    """(first cell, owns) of each row of docs/layout.md's layout table."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 2:
            rows.append((cells[0], cells[1]))
    return rows


def test_the_layout_page_names_every_module():
    """Every module of the project's packages is on docs/layout.md: by its path, by name in a row of
    its folder, or under a row that owns its whole folder (`training/sandbox/`)."""
    rows = _layout_rows()
    packages = ["curriculab", "analysis", "taxonomy", "planner", "training", "dashboard"]
    missing = []
    for package in packages:
        base = ROOT / package if package != "curriculab" else ROOT / "curriculab"
        files = base.glob("*.py") if package == "curriculab" else base.rglob("*.py")
        modules = [f for f in files if "__pycache__" not in f.parts and f.name != "__init__.py"]
        if package == "curriculab":  # its own folders (the others are the packages above, linked in)
            modules += [
                f for d in ("commands", "trajectory") for f in (base / d).rglob("*.py") if f.name != "__init__.py"
            ]
        for module in modules:
            path = module.relative_to(ROOT).as_posix()
            short = (
                path.removeprefix("curriculab/") if path.startswith("curriculab/") and package == "curriculab" else path
            )
            folder = short.rsplit("/", 1)[0] + "/" if "/" in short else ""
            owners = {f"`{name.rsplit('/', k)[0]}/`" for name in (path, short) for k in range(1, name.count("/") + 1)}
            covered = any(
                f"`{short}`" in first
                or f"`{path}`" in first
                or (folder and folder in first and f"`{module.name}`" in first)
                or any(owner in first for owner in owners)
                for first, _ in rows
            )
            if not covered:
                missing.append(path)
    assert missing == [], f"modules docs/layout.md does not name: {missing}"


def test_no_file_cites_a_document_the_repository_does_not_hold():
    """The design notes shared with the founders stay outside the repository: nothing in it cites them."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    citing = [
        name
        for name in tracked
        if name.endswith((".py", ".md", ".toml", ".yaml", ".sh")) or name == ".importlinter"
        if "DESIGN" + ".md" in (ROOT / name).read_text(encoding="utf-8", errors="replace")
    ]
    assert citing == []
