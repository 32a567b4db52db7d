"""Labels in and out, agreement per code, reliability marking, and the learned classifier — via the CLI."""

import csv
import io
import json
import random

import pytest
from click.testing import CliRunner

from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.ingest import ingest
from curriculab.analysis.simulate import simulate_corpus
from curriculab.analysis.store import Store
from curriculab.cli import cli
from curriculab.taxonomy.taxonomy import load_taxonomy

pytestmark = pytest.mark.slow  # a classifier trained on a simulated corpus


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    corpus = simulate_corpus(root / "corpus", n_tasks=60, attempts=3, seed=4)
    db = root / "db.duckdb"
    with Store(db) as store:
        ingest(store, [corpus.root], workers=1)
        run_rule_coders(store)
    return root, corpus, db


def run(db, *args, input=None):
    return CliRunner().invoke(cli, ["--db", str(db), *args], input=input, catch_exceptions=False)


def noisy_copy(src, dst, flip, seed):
    rows = list(csv.DictReader(open(src)))
    rng = random.Random(seed)
    for row in rows:
        if rng.random() < flip:
            row["present"] = "0" if row["present"] == "1" else "1"
    with open(dst, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["trajectory_id", "code", "present"])
        writer.writeheader()
        writer.writerows(rows)
    return dst


def test_import_refuses_bad_rows_and_keeps_good_ones(tmp_path, sim):
    _, corpus, db = sim
    good = next(csv.DictReader(open(corpus.root / "ground_truth.csv")))
    path = tmp_path / "mixed.csv"
    path.write_text(
        "trajectory_id,code,present\n"
        f"{good['trajectory_id']},skipped_verification,yes\n"
        f"{good['trajectory_id']},sloppiness,1\n"
        "no-such-trajectory,tool_misuse,0\n"
        f"{good['trajectory_id']},tool_misuse,maybe\n"
        f"{good['trajectory_id']},reward_hacking,\n"
        f"{good['trajectory_id']},no_plan_revision,unsure\n"
    )
    result = run(db, "labels", "import", str(path), "--annotator", "bob")
    assert result.exit_code == 1
    assert result.stdout == "Imported 2 labels by bob; 1 blank; 3 refused.\n"
    assert result.stderr.splitlines() == [
        f"  refused: {path}: record line 3: field code: 'sloppiness' is not a v6 code. Use one of: "
        + ", ".join(load_taxonomy("v6").code_names),
        f"  refused: {path}: record line 4: field trajectory_id: trajectory 'no-such-trajectory' is not in the store. "
        "Ingest it first, or fix the id",
        f"  refused: {path}: record line 5: field present: present is 'maybe'. Write 1 or 0 (or true/false, yes/no), or unsure",
    ]
    with Store(db, read_only=True) as store:  # unsure is kept as NULL, and left out of agreement's pairs
        kept = store.query("select code, present from labels where annotator = 'bob' order by code").rows
    assert kept == [("no_plan_revision", None), ("skipped_verification", True)]
    header_only = tmp_path / "bad_header.csv"
    header_only.write_text("id,label\nx,1\n")
    result = run(db, "labels", "import", str(header_only), "--annotator", "bob")
    assert result.exit_code == 1 and "missing column(s) ['code', 'present', 'trajectory_id']" in result.stderr
    with Store(db) as store:  # re-import replaces bob's labels rather than adding more
        assert store.query("select count(*) from labels where annotator = 'bob'").rows == [(2,)]
    run(db, "labels", "import", str(path), "--annotator", "bob")
    with Store(db) as store:
        assert store.query("select count(*) from labels where annotator = 'bob'").rows == [(2,)]


def test_export_is_stratified_by_model_and_code(sim):
    _, _, db = sim
    result = run(db, "labels", "export", "--per-cell", "6")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows and all(r["present"] == "" and r["definition"] for r in rows)
    cells = {(r["model"], r["code"]) for r in rows}
    assert {m for m, _ in cells} == {"atlas-7b-coder", "borealis-32b", "cirrus-large"}
    assert {c for _, c in cells} == {
        "skipped_verification",
        "no_plan_revision",
        "redundant_rework",
        "tool_misuse",
        "reward_hacking",
        "harness_failure",
        "premature_stop",
    }
    per_cell = {}
    for r in rows:
        per_cell[(r["model"], r["code"])] = per_cell.get((r["model"], r["code"]), 0) + 1
    assert max(per_cell.values()) <= 6
    with Store(db, read_only=True) as store:  # half of each cell is drawn from what the coder flagged
        flagged = {
            t for (t,) in store.query("select trajectory_id from failure_codes where code = 'reward_hacking'").rows
        }
    assert any(r["trajectory_id"] in flagged for r in rows if r["code"] == "reward_hacking")


def test_agreement_per_code_and_reliability_marking(tmp_path, sim):
    _, corpus, db = sim
    assert run(db, "labels", "import", str(corpus.root / "ground_truth.csv"), "--annotator", "sim").exit_code == 0
    noisy = noisy_copy(corpus.root / "ground_truth.csv", tmp_path / "noisy.csv", flip=0.3, seed=1)
    assert run(db, "labels", "import", str(noisy), "--annotator", "careless").exit_code == 0
    every = json.loads(run(db, "agreement", "--coder", "rules", "--annotator", "sim", "--json").stdout)
    exact = [r for r in every if r["family"] == "all formats"]  # then again per format family
    assert {r["family"] for r in every} > {"all formats"}
    assert {r["code"] for r in exact} == {
        "skipped_verification",
        "no_plan_revision",
        "redundant_rework",
        "tool_misuse",
        "reward_hacking",
        "harness_failure",
    }
    assert all(r["reliable"] and r["kappa"] >= 0.9 and r["f1"] >= 0.9 for r in exact)
    assert set(exact[0]) == {
        "family",
        "code",
        "n",
        "tp",
        "fp",
        "fn",
        "tn",
        "abstained_on_present",
        "coverage",
        "prevalence",
        "kappa",
        "precision",
        "precision_low",
        "precision_high",
        "recall",
        "recall_low",
        "recall_high",
        "f1",
        "alpha",
        "annotators",
        "in_sample",
        "reliable",
    }
    for r in exact:  # the counts behind every figure, and where each stands
        assert r["tp"] + r["fp"] + r["fn"] + r["tn"] == r["n"]
        if r["tp"] + r["fp"]:
            assert r["precision"] == pytest.approx(r["tp"] / (r["tp"] + r["fp"]))
            assert r["precision_low"] <= r["precision"] <= r["precision_high"]
        if r["tp"] + r["fn"]:
            assert r["recall_low"] <= r["recall"] <= r["recall_high"]
    sloppy = json.loads(run(db, "agreement", "--coder", "rules", "--annotator", "careless", "--json").stdout)
    assert not any(r["reliable"] for r in sloppy)
    with Store(db, read_only=True) as store:
        marked = store.query(
            "select annotator, bool_and(reliable), count(*) from code_reliability where coder = 'rules' "
            "and family = '' group by 1 order by 1"
        ).rows
    assert marked == [("careless", False, 6), ("sim", True, 6)]


def test_krippendorff_alpha_appears_with_three_annotators(tmp_path, sim):
    _, corpus, db = sim
    for name, seed in (("a1", 11), ("a2", 12), ("a3", 13)):
        noisy = noisy_copy(corpus.root / "ground_truth.csv", tmp_path / f"{name}.csv", flip=0.05, seed=seed)
        run(db, "labels", "import", str(noisy), "--annotator", name)
    rows = json.loads(run(db, "agreement", "--coder", "rules", "--annotator", "a1", "--json").stdout)
    assert {r["code"] for r in rows} >= {"skipped_verification", "tool_misuse", "reward_hacking"}  # not vacuous
    assert all(r["annotators"] >= 3 and r["alpha"] is not None for r in rows)
    # 5% independent flips on rare codes drag alpha well below the kappa of the exact reference
    assert all(-1 <= r["alpha"] <= 1 for r in rows)


def test_agreement_without_labels_says_what_to_do(sim):
    _, _, db = sim
    result = run(db, "agreement", "--coder", "rules", "--annotator", "nobody")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: no trajectory is both coded by 'rules' and labelled by 'nobody'. Run `curriculab code "
        "--coder ...` and `curriculab labels import ... --annotator nobody` first\n"
    )


def test_classifier_trains_reports_held_out_agreement_and_codes(tmp_path, sim):
    _, corpus, db = sim
    run(db, "labels", "import", str(corpus.root / "ground_truth.csv"), "--annotator", "sim")
    model = tmp_path / "clf.joblib"
    result = run(db, "classifier", "train", "--annotator", "sim", "-o", str(model), "--json")
    assert result.exit_code == 0, result.output
    cv = {r["code"]: r for r in json.loads(result.stdout)}
    assert cv["skipped_verification"]["folds"] == 5 and cv["skipped_verification"]["kappa"] > 0.8
    assert model.exists()
    coded = json.loads(run(db, "code", "--coder", "classifier", "--model", str(model), "--json").stdout)
    assert coded["coder"].startswith("classifier:") and coded["trajectories"] == 540
    agreement = json.loads(run(db, "agreement", "--coder", coded["coder"], "--annotator", "sim", "--json").stdout)
    assert {r["code"]: r["f1"] for r in agreement}["skipped_verification"] > 0.8
    # it learned from these very labels: the figures are in-sample, marked so, and make nothing reliable
    assert agreement and all(r["in_sample"] and not r["reliable"] for r in agreement)
    table = run(db, "agreement", "--coder", coded["coder"], "--annotator", "sim")
    assert "IN-SAMPLE: the classifier learned from these labels" in " ".join(table.stdout.split())
    with Store(db, read_only=True) as store:
        assert store.query(
            "select bool_and(in_sample), bool_or(reliable) from code_reliability where coder = ?", [coded["coder"]]
        ).rows == [(True, False)]
    corrupt = tmp_path / "corrupt.joblib"
    corrupt.write_bytes(model.read_bytes()[:200])
    broken = run(db, "code", "--coder", "classifier", "--model", str(corrupt))
    assert broken.exit_code == 1 and broken.stderr.startswith(f"Error: {corrupt} cannot be read as a classifier (")
    assert broken.stderr.endswith(f"Train it again with `curriculab classifier train --annotator NAME -o {corrupt}`\n")
    missing = run(db, "code", "--coder", "classifier", "--model", str(tmp_path / "none.joblib"))
    assert missing.exit_code == 1
    assert missing.stderr == (
        f"Error: no classifier at {tmp_path / 'none.joblib'}. Train one with `curriculab classifier "
        f"train --annotator NAME -o {tmp_path / 'none.joblib'}`\n"
    )


def test_classifier_without_labels_is_refused(sim):
    _, _, db = sim
    result = run(db, "classifier", "train", "--annotator", "ghost")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: no v6 labels by 'ghost'. Import some with `curriculab labels import FILE.csv --annotator ghost`\n"
    )


def test_one_reliability_rule_for_the_planner_and_the_labelling_page():
    from curriculab.analysis.labels import planner_use

    exact = {
        "coder": "verifier",
        "annotator": "verifier",
        "code": "near_miss",
        "n": 0,
        "kappa": None,
        "reliable": True,
        "in_sample": False,
        "method": "verifier",
    }
    yours = {
        "coder": "verifier",
        "annotator": "ann",
        "code": "near_miss",
        "n": 4,
        "kappa": 0.5,
        "reliable": False,
        "in_sample": False,
        "method": "labels",
    }
    # five labels that agree only half the time do not make the page say the planner ignores an exact code
    used, method, why, status, _ = planner_use([exact, yours], yours)
    assert (used, method, status) == (True, "verifier", "used: exact (verifier)")
    assert why == (
        "exact by construction (the verifier's codes follow from the tests): the planner uses it whatever "
        "labels say; your labels agree with it at κ = 0.50 on 4"
    )
    used, method, why, status, _ = planner_use([yours], yours)
    assert (used, method) == (False, "labels") and why.endswith("the planner ignores it")
    assert status == "not used: unreliable (κ 0.50 < 0.60 on 4)"
    other = {**yours, "annotator": "bea", "n": 20, "kappa": 0.9, "reliable": True}
    assert planner_use([yours, other], yours)[:4] == (
        True,
        "labels",
        "reliable (κ = 0.90 on 20 labels): the planner uses it (bea's labels)",
        "used: reliable (κ 0.90 on 20)",
    )
    # a code the taxonomy gives no curriculum effect says so first, whatever its reliability
    exact_timeouts = {**exact, "code": "test_timeout"}
    refused = planner_use([exact_timeouts])
    assert (refused.used, refused.reliable, refused.status) == (False, True, "not used: no curriculum effect")
    assert refused.why.startswith("no curriculum effect: ") and refused.why.endswith(
        "whatever its reliability: exact (verifier))"
    )


def test_agreement_counts_the_labelled_presents_on_which_the_coder_abstained(tmp_path, sim):
    """Agreement leaves a coder's abstentions out; a present label on one is a miss it cannot see,
    so `agreement` counts them beside TP/FP/FN/TN."""
    import shutil

    _, corpus, shared = sim
    db = tmp_path / "db.duckdb"  # a copy: the module's store is left as the other tests know it
    shutil.copy(shared, db)
    assert run(db, "labels", "import", str(corpus.root / "ground_truth.csv"), "--annotator", "sim").exit_code == 0
    with Store(db) as store:
        present = store.query(
            "select l.trajectory_id from labels l join coding_status c using (trajectory_id, code) "
            "where l.annotator = 'sim' and l.code = 'skipped_verification' and l.present and c.coder = 'rules' "
            "and c.status <> 'not_applicable' order by 1 limit 3"
        ).rows
        assert len(present) == 3
        store.query(
            "update coding_status set status = 'not_applicable', reason = 'the trajectory lacks the evidence this rule reads' "
            "where coder = 'rules' and code = 'skipped_verification' and trajectory_id in (?, ?, ?)",
            [t for (t,) in present],
        )
    rows = json.loads(run(db, "agreement", "--coder", "rules", "--annotator", "sim", "--json").stdout)
    skipped = next(r for r in rows if r["code"] == "skipped_verification")
    assert skipped["abstained_on_present"] == 3
    assert all(r["abstained_on_present"] == 0 for r in rows if r["code"] != "skipped_verification")
