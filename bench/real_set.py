"""The labelled real set (issue #57, item 7): public trajectories of real agents, labelled by hand
before the coder's output was read, and the rules coder's precision and recall on them.

    python bench/real_set.py rebuild MIRRORS OUT          # the files, from local mirrors of their repositories
    python bench/real_set.py show OUT                     # each trajectory's steps, to label (no codes shown)
    python bench/real_set.py measure OUT [--baseline REV] # per-code TP/FP/FN/TN, precision and recall (Wilson 95%)

`MIRRORS` holds one git directory per repository, `<owner>+<name>/repo` (what the `fetch` tool leaves
under /work/.mirror); `bench/real_set/manifest.csv` names each file or folder by repository, commit
and path, and where it goes under `OUT`. The data is not committed; the labels are
(`bench/real_set/labels.csv`: trajectory_id, code, present 1/0, why). `measure` ingests `OUT` into a
fresh store with this checkout's `curriculab` (and with `--baseline`'s, from a git worktree, the
same way), codes it with the rules and compares per code: an abstention (`not_applicable`) on a
labelled trajectory counts apart, and those on labelled presents are listed.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

HERE = ROOT / "bench" / "real_set"
CODES = ("skipped_verification", "no_plan_revision", "redundant_rework", "premature_stop")


def _git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], check=True, capture_output=True).stdout


def rebuild(mirrors: Path, out: Path) -> None:
    rows = list(csv.DictReader(open(HERE / "manifest.csv")))
    files = 0
    for row in rows:
        mirror = mirrors / row["repository"].replace("/", "+") / "repo"
        if not mirror.exists():
            raise SystemExit(f"{mirror}: no mirror of {row['repository']}. Fetch it, then run this again")
        kind = _git(mirror, "cat-file", "-t", f"{row['commit']}:{row['path']}").decode().strip()
        names = (
            _git(mirror, "ls-tree", "-r", "--name-only", row["commit"], "--", row["path"]).decode().splitlines()
            if kind == "tree"
            else [row["path"]]
        )
        for name in names:
            target = out / row["place"] / name[len(row["path"]) :].lstrip("/") if kind == "tree" else out / row["place"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git(mirror, "show", f"{row['commit']}:{name}"))
            files += 1
    print(f"{len(rows)} manifest entries, {files} files under {out}")


def _curriculab(args: list[str], site: str | None) -> str:
    """`curriculab ARGS`' output: this checkout's, or (`site`) the baseline's, as `bench/ab.py` runs it."""
    from ab import BASELINE_IMPORTS

    boot = (
        [
            "-c",
            BASELINE_IMPORTS
            + "; import runpy; sys.argv[0] = 'curriculab'; runpy.run_module('curriculab.cli', run_name='__main__')",
        ]
        if site
        else ["-m", "curriculab.cli"]
    )
    env = {**os.environ, **({"PYTHONPATH": site} if site else {})}
    # `-c` puts the working directory first on sys.path: the baseline runs from its site's folder, not
    # from this checkout (whose root holds curriculab/)
    done = subprocess.run([sys.executable, *boot, *args], env=env, capture_output=True, text=True, cwd=site or ROOT)
    if done.returncode not in (0, 1):
        raise SystemExit(f"curriculab {' '.join(args[:2])} failed: {done.stderr[-800:]}")
    return done.stdout


def _store(out: Path, db: Path, site: str | None) -> None:
    db.unlink(missing_ok=True)
    _curriculab(["ingest", "--db", str(db), str(out)], site)
    _curriculab(["code", "--coder", "rules", "--db", str(db)], site)


def show(out: Path) -> None:
    import duckdb

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "show.duckdb"
        _curriculab(["ingest", "--db", str(db), str(out)], None)
        con = duckdb.connect(str(db), read_only=True)
        for trajectory_id, outcome in con.execute(
            "select trajectory_id, outcome from trajectories order by 1"
        ).fetchall():
            print(f"\n=== {trajectory_id}  outcome={outcome}")
            steps = con.execute(
                "select step_idx, action, command, exit_code, error_observed, output from steps "
                "where trajectory_id = ? and source = 'agent' order by step_idx",
                [trajectory_id],
            ).fetchall()
            for index, action, command, code, error, output in steps:
                text = (command or "").replace("\n", "⏎")[:110]
                shown = (output or "").strip().replace("\n", " | ")
                shown = shown if len(shown) < 160 else shown[:80] + " … " + shown[-70:]
                print(
                    f"  {index:>3} {action or '-':8} {text}  [{code if code is not None else ''}{'!' if error else ''}] {shown}"
                )


def _wilson(hits: int, n: int) -> str:
    from curriculab.analysis.stats import wilson_interval

    if n == 0:
        return "—"
    low, high = wilson_interval(hits, n)
    return f"{hits / n:.2f} [{low:.2f}, {high:.2f}]"


def figures(db: Path) -> list[dict]:
    import duckdb

    labels = list(csv.DictReader(open(HERE / "labels.csv")))
    con = duckdb.connect(str(db), read_only=True)
    status = {
        (t, c): s
        for t, c, s in con.execute(
            "select trajectory_id, code, status from coding_status where coder = 'rules'"
        ).fetchall()
    }
    stored = {t for (t,) in con.execute("select trajectory_id from trajectories").fetchall()}
    rows = []
    for code in CODES:
        mine = [label for label in labels if label["code"] == code]
        tp = fp = fn = tn = abstained = 0
        missed, lost = [], 0
        for label in mine:
            if label["trajectory_id"] not in stored:
                lost += 1
                continue
            said = status.get((label["trajectory_id"], code))
            present = label["present"] == "1"
            if said not in ("present", "absent"):
                abstained += 1
                if present:
                    missed.append(label["trajectory_id"])
                continue
            coded = said == "present"
            tp += present and coded
            fp += coded and not present
            fn += present and not coded
            tn += not present and not coded
        rows.append(
            {
                "code": code,
                "labelled": len(mine),
                "not_ingested": lost,
                "judged": tp + fp + fn + tn,
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "tn": tn,
                "precision": _wilson(tp, tp + fp),
                "recall": _wilson(tp, tp + fn),
                "abstained": abstained,
                "abstained_on_present": missed,
            }
        )
    return rows


def _print(side: str, rows: list[dict]) -> None:
    print(f"\n{side}")
    print(
        "  code                   labelled lost judged  TP FP FN TN  precision [95%]     recall [95%]        abstained (on presents)"
    )
    for r in rows:
        print(
            f"  {r['code']:<22}{r['labelled']:>8}{r['not_ingested']:>5}{r['judged']:>7}{r['tp']:>4}{r['fp']:>3}{r['fn']:>3}"
            f"{r['tn']:>3}  {r['precision']:<19} {r['recall']:<19} {r['abstained']} ({len(r['abstained_on_present'])})"
        )


def measure(out: Path, baseline: str | None, workdir: Path) -> None:
    from ab import baseline_site

    labels = list(csv.DictReader(open(HERE / "labels.csv")))
    agents = {row["agent"] for row in csv.DictReader(open(HERE / "manifest.csv"))}
    print(
        f"{len({label['trajectory_id'] for label in labels})} labelled trajectories, {len(agents)} agents, {len(labels)} labels"
    )
    workdir.mkdir(parents=True, exist_ok=True)
    results = {}
    if baseline:
        with baseline_site(baseline, workdir) as site:
            _store(out, workdir / "baseline.duckdb", site)
            results[f"baseline {baseline}"] = figures(workdir / "baseline.duckdb")
    _store(out, workdir / "current.duckdb", None)
    results["this checkout"] = figures(workdir / "current.duckdb")
    for side, rows in results.items():
        _print(side, rows)
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("rebuild")
    one.add_argument("mirrors", type=Path)
    one.add_argument("out", type=Path)
    two = sub.add_parser("show")
    two.add_argument("out", type=Path)
    three = sub.add_parser("measure")
    three.add_argument("out", type=Path)
    three.add_argument("--baseline", help="A git revision to measure the same way (e.g. 1a0d7ed).")
    three.add_argument("--workdir", type=Path, default=Path("/tmp/real-set"))
    args = parser.parse_args()
    if args.command == "rebuild":
        rebuild(args.mirrors, args.out)
    elif args.command == "show":
        show(args.out)
    else:
        measure(args.out, args.baseline, args.workdir)


if __name__ == "__main__":
    main()
