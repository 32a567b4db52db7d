"""The labelled real set (issue #66, item 4): public trajectories of real agents in several formats,
labelled blind (by labellers who read only the taxonomy's text and the raw files, before any coder
output), split into a development part (rules change only against it) and a frozen test part (no
source repository on both sides), and the rules coder's agreement with the labels per format and per
code: TP/FP/FN/TN, precision and recall with Wilson 95% intervals, coverage.

    python bench/real_set.py rebuild MIRRORS OUT                # the files, from local mirrors of their repositories
    python bench/real_set.py show OUT PLACE [--cut N]           # one trajectory's raw files, as labellers read them
    python bench/real_set.py kappa                              # the two labellers' agreement on the doubly labelled sample
    python bench/real_set.py measure OUT --part dev [--baseline REV]
    python bench/real_set.py measure OUT --part test --baseline REV   # logged in bench/RESULTS.md, every time

`MIRRORS` holds one git directory per repository, `<owner>+<name>/repo` (what the `fetch` tool leaves
under /work/.mirror); `bench/real_set/manifest.csv` names each file by repository, commit and path,
and where it goes under `OUT`; `trajectories.csv` lists the labelled trajectories (a file or a trial
folder under `OUT`, its `place`) with their format and part. The data is not committed; the labels
are: `labels-dev.csv`, `labels-test.csv` (the first reads), `labels-second.csv` (a second labeller's
reads of the doubly labelled sample), `labels-third.csv` (third reads where the two disagreed, and
cases the taxonomy's text now settles: they replace the first read in scoring); the SHA-256 of the
test labels and of the third reads is in `labels-test.sha256`, checked before every scoring.
Whoever changes the rules reads only the development part's labels.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

HERE = ROOT / "bench" / "real_set"
CODES = (
    "skipped_verification",
    "no_plan_revision",
    "redundant_rework",
    "tool_misuse",
    "reward_hacking",
    "harness_failure",
    "premature_stop",
)
"""The codes the rules coder emits: every one is labelled on every trajectory."""


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


# --- show: the labellers' rendering (knows nothing of any coder) ---

NOISE = {
    "uuid", "parentUuid", "parent_uuid", "requestId", "request_id", "timestamp", "signature", "usage",
    "cache_creation", "cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens",
    "output_tokens", "service_tier", "userType", "version", "gitBranch", "leafUuid", "id", "tool_call_id",
    "call_id", "toolUseID", "sourceToolAssistantUUID", "isMeta", "isCompactSummary", "thinkingMetadata",
    "encrypted_content", "token_ids", "logprobs", "prompt_token_ids", "completion_token_ids", "ts",
    "llm_metrics", "metrics", "model_stats", "cost", "created", "system_fingerprint", "object",
    "toolUseResult",  # Claude Code's structured copy of a tool result its message already shows
}  # fmt: skip
"""Bookkeeping keys left out of a rendering (ids, times, token counts, signatures)."""
NOISE_PATHS = ("extra.response",)  # mini-swe-agent keeps the raw API response beside each message


def _cut(text: str, limit: int) -> str:
    """`text` whole up to `limit` characters; else its head and tail with the cut marked by size
    (the issue's labels were once written from a rendering that cut silently)."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]}\n[… {len(text) - head - tail:,} characters cut here; read the raw file for them …]\n{text[-tail:]}"


def _walk(value: object, prefix: str, out: list[str], limit: int) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in NOISE or item in (None, "", [], {}) or f"{prefix}.{key}".endswith(NOISE_PATHS):
                continue
            _walk(item, f"{prefix}.{key}" if prefix else str(key), out, limit)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{prefix}[{index}]", out, limit)
    elif isinstance(value, str):
        if value.strip().startswith(("{", "[")) and len(value) < 200_000:
            try:  # tool arguments often arrive as a JSON string
                _walk(json.loads(value), prefix + "(json)", out, limit)
                return
            except ValueError:
                pass
        text = _cut(value, limit)
        out.append(
            f"{prefix}: {text}"
            if "\n" not in text
            else f"{prefix}: |\n" + "\n".join("    " + line for line in text.splitlines())
        )
    else:
        out.append(f"{prefix}: {value}")


def render_file(path: Path, limit: int) -> str:
    """One raw file, record by record, numbered as in the file (JSONL lines; a JSON file's long
    record lists by index)."""
    raw = path.read_bytes().decode("utf-8", "replace")
    out = [f"##### FILE {path} ({len(raw):,} characters)"]
    if path.suffix == ".jsonl":
        for number, line in enumerate(raw.splitlines(), 1):
            if line.strip():
                out.append(f"\n=== line {number}")
                try:
                    _walk(json.loads(line), "", out, limit)
                except ValueError:
                    out.append(_cut(line, limit))
        return "\n".join(out)
    if path.suffix in (".json", ".traj"):
        try:
            data = json.loads(raw)
        except ValueError:
            return "\n".join([*out, _cut(raw, limit * 4)])
        records = data.items() if isinstance(data, dict) else [("", data)]
        for key, item in records:
            if key in NOISE:
                continue
            if isinstance(item, list) and len(item) > 3 and all(isinstance(x, dict) for x in item):
                for index, record in enumerate(item):
                    out.append(f"\n=== {key}[{index}]")
                    _walk(record, "", out, limit)
            else:
                _walk({key: item} if key else item, "", out, limit)
        return "\n".join(out)
    return "\n".join([*out, _cut(raw, limit * 4)])


def show(out: Path, place: str, limit: int) -> None:
    target = out / place
    files = sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]
    if (target / "agent" / "trajectory.json").is_file():  # a Harbor trial: its ATIF trajectory holds the session
        files = [p for p in files if "sessions" not in p.relative_to(target).parts]
    for path in files:
        if path.suffix == ".cast":
            print(f"##### FILE {path}: asciinema recording, not rendered ({path.stat().st_size:,} bytes)")
        else:
            print(render_file(path, limit) + "\n")


# --- labels, agreement between labellers ---


def _labels(name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(open(HERE / name)))


def test_labels_digest() -> str:
    return hashlib.sha256((HERE / "labels-test.csv").read_bytes()).hexdigest()


def _check_test_labels() -> None:
    for line in (HERE / "labels-test.sha256").read_text().splitlines():
        wanted, name = line.split()
        if hashlib.sha256((HERE / name).read_bytes()).hexdigest() != wanted:
            raise SystemExit(
                f"bench/real_set/{name} differs from the hash committed with it: the frozen test part was "
                f"changed. Restore it (git checkout bench/real_set/{name})"
            )


def settled_labels(part: str) -> list[dict[str, str]]:
    """A part's labels as scored: the first reads, with the third reads (and the cases the taxonomy's
    text now settles) of `labels-third.csv` in place of the first read they settle."""
    third = {(r["trajectory_id"], r["code"]): r for r in _labels("labels-third.csv")}
    return [third.get((r["trajectory_id"], r["code"]), r) for r in _labels(f"labels-{part}.csv")]


def _cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = first * second + (1 - first) * (1 - second)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def kappa() -> list[dict]:
    """Per code, Cohen's κ between the first and the second labeller on the doubly labelled sample
    (`unsure` on either side left out), with the counts: the first reads as written, before any
    third read settled them."""
    first = {
        (r["trajectory_id"], r["code"]): r["present"] for r in _labels("labels-dev.csv") + _labels("labels-test.csv")
    }
    rows = []
    for code in CODES:
        pairs, unsure = [], 0
        for second in _labels("labels-second.csv"):
            if second["code"] != code:
                continue
            one = first.get((second["trajectory_id"], code))
            if one is None:
                continue
            if "unsure" in (one, second["present"]):
                unsure += 1
                continue
            pairs.append((one == "present", second["present"] == "present"))
        k = _cohen_kappa(pairs)
        rows.append(
            {
                "code": code,
                "n": len(pairs),
                "agree": sum(a == b for a, b in pairs),
                "present_first": sum(a for a, _ in pairs),
                "present_second": sum(b for _, b in pairs),
                "unsure": unsure,
                "kappa": None if k is None else round(k, 3),
            }
        )
    return rows


# --- measuring the rules against the labels ---


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
    # `-c` puts the working directory first on sys.path: the baseline runs from its site's folder
    done = subprocess.run([sys.executable, *boot, *args], env=env, capture_output=True, text=True, cwd=site or ROOT)
    if done.returncode not in (0, 1):
        raise SystemExit(f"curriculab {' '.join(args[:2])} failed: {done.stderr[-800:]}")
    return done.stdout


def _store(out: Path, db: Path, site: str | None) -> None:
    db.unlink(missing_ok=True)
    _curriculab(["ingest", "--db", str(db), str(out)], site)
    _curriculab(["code", "--coder", "rules", "--db", str(db)], site)


def _coded_places(db: Path, out: Path) -> dict[tuple[str, str], str]:
    """Per (place, code), what the rules said of the trajectories read from that place: present if
    any says present (a file may hold several runs; a labeller marks the code if any run shows it),
    absent if every one is judged absent, else not_applicable (an abstention)."""
    import duckdb

    places = [row["place"] for row in csv.DictReader(open(HERE / "trajectories.csv"))]
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "select t.source_path, c.code, c.status from trajectories t join coding_status c using (trajectory_id) "
        "where c.coder = 'rules'"
    ).fetchall()
    said: dict[tuple[str, str], list[str]] = defaultdict(list)
    for source, code, status in rows:
        relative = os.path.relpath(source, out)
        place = next((p for p in places if relative == p or relative.startswith(p.rstrip("/") + "/")), None)
        if place is not None:
            said[(place, code)].append(status)
    return {
        key: "present"
        if "present" in statuses
        else "absent"
        if all(s == "absent" for s in statuses)
        else "not_applicable"
        for key, statuses in said.items()
    }


def _wilson(hits: int, n: int) -> tuple[float, float, float] | None:
    from curriculab.analysis.stats import wilson_interval

    if n == 0:
        return None
    low, high = wilson_interval(hits, n)
    return hits / n, low, high


def _cell(counts: dict[str, int]) -> dict:
    tp, fp, fn, tn, abstained = (counts[k] for k in ("tp", "fp", "fn", "tn", "abstained"))
    labelled = tp + fp + fn + tn + abstained
    return {
        **counts,
        "precision": _wilson(tp, tp + fp),
        "recall": _wilson(tp, tp + fn + counts["missed"]),  # an abstention on a labelled present is a miss
        "coverage": (tp + fp + fn + tn) / labelled if labelled else None,
    }


def figures(db: Path, out: Path, part: str) -> dict:
    """Per format and code, per format, per code and pooled: TP/FP/FN/TN, abstentions (and those on
    labelled presents, counted as misses), precision and recall with Wilson 95% intervals, coverage."""
    format_of = {row["place"]: row["format"] for row in csv.DictReader(open(HERE / "trajectories.csv"))}
    said = _coded_places(db, out)
    empty = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "abstained": 0, "missed": 0, "not_ingested": 0}
    cells: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict(empty))
    for label in settled_labels(part):
        if label["present"] == "unsure" or label["code"] not in CODES:
            continue
        present = label["present"] == "present"
        status = said.get((label["trajectory_id"], label["code"]))
        fmt = format_of.get(label["trajectory_id"], "?")
        for key in ((fmt, label["code"]), (fmt, "*"), ("*", label["code"]), ("*", "*")):
            cell = cells[key]
            if status is None:
                cell["not_ingested"] += 1
            elif status == "not_applicable":
                cell["abstained"] += 1
                cell["missed"] += present
            else:
                coded = status == "present"
                cell["tp" if coded and present else "fp" if coded else "fn" if present else "tn"] += 1
    return {f"{fmt}|{code}": _cell(counts) for (fmt, code), counts in sorted(cells.items())}


def _fmt(interval: tuple[float, float, float] | None) -> str:
    return "—" if interval is None else f"{interval[0]:.2f} [{interval[1]:.2f}, {interval[2]:.2f}]"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def table(side: str, rows: dict) -> str:
    lines = [
        f"\n{side}",
        "| format | code | TP | FP | FN | TN | abstained (on presents) | not ingested | precision [95%] | recall [95%] | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, r in rows.items():
        fmt, code = key.split("|")
        lines.append(
            f"| {'all' if fmt == '*' else fmt} | {'all' if code == '*' else code} | {r['tp']} | {r['fp']} | {r['fn']} | "
            f"{r['tn']} | {r['abstained']} ({r['missed']}) | {r['not_ingested']} | {_fmt(r['precision'])} | "
            f"{_fmt(r['recall'])} | {_share(r['coverage'])} |"
        )
    return "\n".join(lines)


def measure(out: Path, part: str, baseline: str | None, workdir: Path) -> dict:
    from ab import baseline_site

    if part == "test":
        _check_test_labels()
    workdir.mkdir(parents=True, exist_ok=True)
    results = {}
    if baseline:
        with baseline_site(baseline, workdir / "baseline") as site:
            _store(out, workdir / "baseline.duckdb", site)
            results[f"baseline {baseline}"] = figures(workdir / "baseline.duckdb", out, part)
    _store(out, workdir / "current.duckdb", None)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    results[f"this checkout ({head.stdout.strip()}{' + uncommitted changes' if dirty.stdout.strip() else ''})"] = (
        figures(workdir / "current.duckdb", out, part)
    )
    text = "\n".join(table(side, rows) for side, rows in results.items())
    print(text)
    if part == "test":  # every look at the frozen part is logged: a figure from a second look is no longer held out
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        with open(ROOT / "bench" / "RESULTS.md", "a") as log:
            log.write(
                f"\n### Real set, test part scored {stamp}\n\n`python bench/real_set.py measure OUT --part test"
                f"{' --baseline ' + baseline if baseline else ''}` (test labels sha256 {test_labels_digest()[:16]}…)\n{text}\n"
            )
        print("\nlogged in bench/RESULTS.md")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("rebuild")
    one.add_argument("mirrors", type=Path)
    one.add_argument("out", type=Path)
    two = sub.add_parser("show")
    two.add_argument("out", type=Path)
    two.add_argument("place")
    two.add_argument("--cut", type=int, default=2500, help="Longest string printed whole (longer: cut and marked).")
    sub.add_parser("kappa")
    three = sub.add_parser("measure")
    three.add_argument("out", type=Path)
    three.add_argument("--part", choices=("dev", "test"), required=True)
    three.add_argument("--baseline", help="A git revision to measure the same way, in the same invocation.")
    three.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "real-set")
    args = parser.parse_args()
    if args.command == "rebuild":
        rebuild(args.mirrors, args.out)
    elif args.command == "show":
        show(args.out, args.place, args.cut)
    elif args.command == "kappa":
        rows = kappa()
        print("| code | n | agree | present (first) | present (second) | unsure | κ |\n|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['code']} | {r['n']} | {r['agree']} | {r['present_first']} | {r['present_second']} | {r['unsure']} | {r['kappa']} |"
            )
    else:
        measure(args.out, args.part, args.baseline, args.workdir)


if __name__ == "__main__":
    main()
