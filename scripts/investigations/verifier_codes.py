"""The verifier's completion codes against hand labels of real SmolLM2-135M-Instruct completions.

    python scripts/investigations/verifier_codes.py [--fixture tests/fixtures/rollouts/smollm2_labelled.jsonl]

Prints, per split of the labelled set (development, held-out-1, held-out-2, targeted) and over
all of it, one row per code: positives (by the labels), true and false positives, false
negatives, precision and recall. The fixture's README says how each split was labelled.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from curriculab.taxonomy.agreement import binary_agreement  # noqa: E402
from curriculab.taxonomy.coders.verifier import COMPLETION_CODES, TestEvidence, code_completion  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "rollouts" / "smollm2_labelled.jsonl"


def scores(records: list[dict]) -> dict[str, dict]:
    coded = [
        code_completion(
            r["completion"],
            [TestEvidence(t["test_id"], t["tier"], t["passed"], t["status"], t["detail"]) for t in r["tests"]],
            r["finish_reason"],
            r["entry_point"],
        )
        for r in records
    ]
    out = {}
    for code in COMPLETION_CODES:
        a = binary_agreement([c[code].present for c in coded], [r["labels"][code] for r in records])
        out[code] = {
            "positives": a.tp + a.fn,
            "tp": a.tp,
            "fp": a.fp,
            "fn": a.fn,
            "precision": None if a.precision is None else round(a.precision, 3),
            "recall": None if a.recall is None else round(a.recall, 3),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    args = parser.parse_args()
    records = [json.loads(line) for line in args.fixture.read_text().splitlines() if line.strip()]
    splits = sorted({r["split"] for r in records})
    result = {
        "completions": len(records),
        "by_split": {s: sum(r["split"] == s for r in records) for s in splits},
        "all": scores(records),
        **{s: scores([r for r in records if r["split"] == s]) for s in splits},
    }
    for part in ("all", *splits):
        print(f"\n{part} ({len(records) if part == 'all' else result['by_split'][part]} completions)")
        print(f"{'code':28s} {'pos':>4s} {'tp':>4s} {'fp':>4s} {'fn':>4s} {'precision':>9s} {'recall':>7s}")
        for code, row in result[part].items():
            print(
                f"{code:28s} {row['positives']:4d} {row['tp']:4d} {row['fp']:4d} {row['fn']:4d} "
                f"{row['precision'] if row['precision'] is not None else '-':>9} "
                f"{row['recall'] if row['recall'] is not None else '-':>7}"
            )
    print(json.dumps({"completions": result["completions"], "by_split": result["by_split"], "all": result["all"]}))


if __name__ == "__main__":
    main()
