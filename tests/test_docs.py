"""The README fits on a few screens and points to the reference; every script in bench/ and
scripts/investigations/ is indexed in its folder's README; every doc link resolves."""

from __future__ import annotations

import re
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
