"""The report against an independent recount of a Terminal-Bench 1.0 leaderboard snapshot (issue #68,
"Done when"): the raw `results.json` files counted with the standard library alone, no curriculab.

    python bench/leaderboard_recount.py DIR DB [--screens screens.json]

DIR is `results/terminal-bench-core@0.1.1` of `laude-institute/terminal-bench-leaderboard` (its
`*results.json` files suffice); DB a store it was ingested into (`curriculab ingest DIR`, coded by
`curriculab code --coder verifier`). Per submission folder: each run's trials from its run-level
file (one with a `results` list: `results.json`, goose's `<timestamp>_results.json`), else from
its per-trial files; passes are `is_resolved: true`; a failure ran out of time when its
`failure_mode` is `agent_timeout`; a run copied twice (mini-swe-agent keeps one nested in another) counts
once, by its `id`; the leaderboard's accuracy is passes / trials per run, averaged
over runs. Then `curriculab report --json` on DB is read and compared: per system its trials and
leaderboard accuracy (matched as a multiset: folders name systems their own way), the total of
failures that ran out of time, and the per-system pass@k's task counts; with `--screens` (what
`scripts/investigations/first_screens.py DB OUT` read off the first screens in Chromium) the
Overview's metrics too. Prints each check and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path


def recount(root: Path) -> dict[str, dict]:
    """Per submission folder: runs (accuracy each), trials, passes, timed-out failures."""
    out = {}
    for submission in sorted(p for p in root.iterdir() if p.is_dir()):
        runs: dict[str, list[dict]] = defaultdict(list)
        per_trial: dict[str, list[dict]] = defaultdict(list)
        for path in sorted(submission.rglob("*results.json")):
            doc = json.loads(path.read_text())
            if isinstance(doc.get("results"), list):  # a run, by its id: one submission keeps a copy nested in another
                runs[doc.get("id") or str(path)] = doc["results"]
            elif "trial_name" in doc:
                run = path.relative_to(submission).parts[0]
                per_trial[run].append(doc)
        if not runs:  # runs that kept only per-trial files
            runs = dict(per_trial)
        trials = [t for run in runs.values() for t in run]
        out[submission.name] = {
            "trials": len(trials),
            "passes": sum(t.get("is_resolved") is True for t in trials),
            "timed_out_failures": sum(
                t.get("is_resolved") is not True and t.get("failure_mode") == "agent_timeout" for t in trials
            ),
            "accuracy": sum(sum(t.get("is_resolved") is True for t in r) / len(r) for r in runs.values()) / len(runs),
            "tasks": len({t["task_id"] for t in trials}),
            "runs": len(runs),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("db", type=Path)
    parser.add_argument("--screens", type=Path, default=None)
    args = parser.parse_args()
    counted = recount(args.source)
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "curriculab.cli", "--db", str(args.db), "report", "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    checks = []

    def check(what: str, ours: object, recounted: object) -> None:
        checks.append(ours == recounted)
        print(f"{'ok ' if ours == recounted else 'DIFF'} {what}: report {ours} · recount {recounted}")

    def key(trials: int, accuracy: float) -> tuple[int, float]:
        return trials, round(accuracy, 6)

    check(
        "systems (trials, leaderboard accuracy)",
        sorted(Counter(key(s["trials"], s["leaderboard_accuracy"]) for s in report["systems"]).items()),
        sorted(Counter(key(c["trials"], c["accuracy"]) for c in counted.values()).items()),
    )
    check("trials", sum(s["trials"] for s in report["systems"]), sum(c["trials"] for c in counted.values()))
    check("passes", sum(s["passes"] for s in report["systems"]), sum(c["passes"] for c in counted.values()))
    timed = sum(e["timed_out"] for e in report["endings"])
    check("failures that ran out of time", timed, sum(c["timed_out_failures"] for c in counted.values()))
    said = next(f for f in report["findings"] if f.startswith("Time: "))
    check("the findings' time total", said.split(" of the ")[0], f"Time: {timed}")
    check(
        "pass@k over the same tasks for every system (tasks@k)",
        sorted({e[k] for e in report["system_pass_at_k"] for k in e if k.startswith("tasks@")}),
        [max(c["tasks"] for c in counted.values())],
    )
    if args.screens is not None:
        shown = dict(m.split(": ", 1) for m in json.loads(args.screens.read_text())["overview"]["metrics"])
        trials, passes = sum(c["trials"] for c in counted.values()), sum(c["passes"] for c in counted.values())
        check("Overview: Attempts", shown["Attempts"], str(trials))
        check("Overview: Systems", shown["Systems"], str(len(counted)))
        check("Overview: Solved (every trial)", shown["Solved (every trial)"], f"{100 * passes / trials:.1f}%")
        # one-run submissions hold 5 attempts per task: their replicates are the attempt indices
        replicates = sum(c["runs"] if c["runs"] > 1 else round(c["trials"] / c["tasks"]) for c in counted.values())
        check("Overview: Replicate runs", shown["Replicate runs"], str(replicates))
    print(json.dumps({"submissions": len(counted), "checks": len(checks), "differ": checks.count(False)}))
    sys.exit(0 if all(checks) else 1)


if __name__ == "__main__":
    main()
