"""Trials stored, refused and per system on the leaderboard-shaped fixtures (issue #19).

    python scripts/investigations/every_trial_lands.py

Ingests `tests/fixtures/tb-leaderboard/` (cursor-cli runs with per-trial results only, goose's
top-level results files) and `tests/fixtures/harbor-result-only/` (a Harbor job whose second
trial kept only its `result.json`, reward 1.0). Run it with an older revision's code to see what
was dropped then.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures"


def main() -> None:
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.store import Store

    work = Path(tempfile.mkdtemp(prefix="every-trial-"))
    try:
        with Store(work / "store.duckdb") as store:
            report = ingest(store, [FIXTURES / "tb-leaderboard", FIXTURES / "harbor-result-only"])
            print(f"trials expected 15; stored {report.inserted}; refused {report.quarantined}")
            for issue in report.errors:
                print(f"  refused: {issue.reason[:160]}")
            print(f"{'agent':<12} {'model':<28} {'trials':>6} {'passed':>6} {'errors':>6}")
            for agent, model, trials, passed, errors in store.query(
                "select coalesce(r.agent, '(unknown)'), t.model, count(*), count(*) filter (where outcome = 'passed'), "
                "count(*) filter (where outcome = 'error') from trajectories t left join runs r using (run_id) "
                "group by all order by all"
            )[1]:
                print(f"{agent:<12} {model:<28} {trials:>6} {passed:>6} {errors:>6}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
