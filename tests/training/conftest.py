"""Fixtures the training tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from curriculab.analysis.store import Store
from curriculab.planner import plan as planning
from curriculab.training.problems import builtin_problems


@pytest.fixture
def planned(demo_store_copy, tmp_path) -> tuple[Path, Path]:
    """The demo store and a forward-schedule plan for its weakest model, exported."""
    problems = builtin_problems()
    with Store(demo_store_copy, read_only=True) as store:
        made = planning.build_plan(store, "atlas-7b-coder", problems, "builtin")
    assert made.schedule == "forward" and made.start_tier is None
    return demo_store_copy, planning.export(made, tmp_path / "plan.yaml", problems)
