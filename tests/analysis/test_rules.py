"""Rule coders: evidence, abstention, idempotence, planted-truth F1 and the hand-written tricky set."""

import csv

import pytest

from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.ingest import ingest
from curriculab.analysis.labels import agreement, import_labels
from curriculab.analysis.simulate import simulate_corpus
from curriculab.analysis.store import Store, row_count
from curriculab.taxonomy.coders.rules import RULES


@pytest.fixture(scope="module")
def sim_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("rules")
    corpus = simulate_corpus(root / "corpus", n_tasks=90, attempts=3, seed=21)
    with Store(root / "db.duckdb") as store:
        ingest(store, [corpus.root], workers=1)
        run_rule_coders(store)
        import_labels(store, corpus.root / "ground_truth.csv", "simulator")
        yield store


@pytest.mark.slow  # a simulated corpus with planted truth
def test_rule_coders_reach_f1_09_on_planted_truth(sim_store):
    results = {r.code: r for r in agreement(sim_store, "rules", "simulator") if r.family == ""}  # pooled
    assert set(results) == {rule.code for rule in RULES} - {"premature_stop"}  # a v2 code; the simulator codes v1
    for code, r in results.items():
        assert r.f1 is not None and r.f1 >= 0.9, (code, r)
        assert r.n >= 700  # abstentions aside, nearly every trajectory was judged


@pytest.mark.slow  # a simulated corpus with planted truth
def test_every_finding_has_evidence_steps_that_exist(sim_store):
    rows = sim_store.query("""
        select f.code, f.trajectory_id, e.step from failure_codes f, unnest(f.evidence_steps) as e(step)
        where f.coder = 'rules' and not exists (select 1 from steps s where s.trajectory_id = f.trajectory_id and s.step_idx = e.step)""").rows
    assert rows == []
    no_evidence = sim_store.query(
        "select count(*) from failure_codes where coder = 'rules' and code <> 'harness_failure' "
        "and len(evidence_steps) = 0"
    ).scalar()
    assert no_evidence == 0
    assert sim_store.query("select count(*) from failure_codes where rationale is null or rationale = ''").rows == [
        (0,)
    ]


@pytest.mark.slow  # a simulated corpus with planted truth
def test_recoding_replaces_rather_than_duplicates(sim_store):
    before = row_count(sim_store, "failure_codes"), row_count(sim_store, "coding_status")
    run_rule_coders(sim_store, where="model = 'atlas-7b-coder'")
    assert (row_count(sim_store, "failure_codes"), row_count(sim_store, "coding_status")) == before


@pytest.fixture(scope="module")
def tricky(tmp_path_factory, request):
    from tests.conftest import FIXTURES

    with Store(tmp_path_factory.mktemp("tricky") / "db.duckdb") as store:
        report = ingest(store, [FIXTURES / "tricky" / "cases.jsonl"], workers=1)
        assert report.errors == []
        run_rule_coders(store)  # the newest taxonomy: every rule, premature_stop included
        expected = list(csv.DictReader(open(FIXTURES / "tricky" / "expected.csv")))
        yield store, expected


def test_tricky_set_has_five_positives_and_five_near_misses_per_code(tricky):
    _, expected = tricky
    for rule in RULES:
        mine = [e for e in expected if e["code"] == rule.code]
        assert sum(e["present"] == "1" for e in mine) >= 5 and sum(e["present"] == "0" for e in mine) >= 5, rule.code


def test_rule_coders_are_right_on_every_tricky_case(tricky):
    store, expected = tricky
    wrong = []
    for case in expected:
        status = store.query(
            "select status from coding_status where coder = 'rules' and trajectory_id = ? and code = ?",
            [case["trajectory_id"], case["code"]],
        ).scalar()
        if (status == "present") != (case["present"] == "1"):
            wrong.append((case["trajectory_id"], case["code"], status, case["why"]))
    assert wrong == []


def test_coders_abstain_where_the_format_lacks_the_evidence(store, fixtures):
    ingest(store, [fixtures / "tb"], workers=1)
    run_rule_coders(store)
    statuses = dict(
        store.query("""select code, list(distinct status) from coding_status
                                   where trajectory_id like '%hello-world.1-of-2%' group by 1""").rows
    )
    # Terminal-Bench keeps commands, not outputs: output-based coders say nothing
    assert statuses["no_plan_revision"] == ["not_applicable"]
    assert statuses["tool_misuse"] == ["not_applicable"]
    # command-based ones still judge
    assert statuses["skipped_verification"] == ["absent"]  # `cat hello.txt` inspected the output
    assert store.query("select code from failure_codes where trajectory_id like '%hello-world.2-of-2%'").rows == [
        ("skipped_verification",)
    ]
    assert store.query("select count(*) from failure_codes where code = 'no_plan_revision'").rows == [(0,)]


@pytest.mark.slow  # a simulated corpus with planted truth
def test_labels_given_under_v1_are_read_at_v4_through_the_mapping_chain(sim_store, tmp_path_factory):
    v4 = {r.code: (r.n, r.kappa) for r in agreement(sim_store, "rules", "simulator", record=False) if r.family == ""}
    truth = sim_store.query("select trajectory_id, code, present from labels where annotator = 'simulator'").rows
    path = tmp_path_factory.mktemp("v1labels") / "v1.csv"
    path.write_text("trajectory_id,code,present\n" + "".join(f"{t},{c},{int(p)}\n" for t, c, p in truth))
    assert import_labels(sim_store, path, "simulator-v1", taxonomy_version="v1").errors == []
    through = {
        r.code: (r.n, r.kappa) for r in agreement(sim_store, "rules", "simulator-v1", record=False) if r.family == ""
    }
    # v1 -> ... -> v6 code for code, but v4 redefined harness_failure and v6 reward_hacking: a v1 label
    # of either judged another meaning
    assert through == {
        code: figures for code, figures in v4.items() if code not in ("harness_failure", "reward_hacking")
    }
    assert "harness_failure" in v4 and "reward_hacking" in v4
    sim_store.query("delete from labels where annotator = 'simulator-v1'")


def test_a_rule_that_abstains_names_what_it_lacked_and_a_pass_is_no_premature_stop(tricky):
    store, _ = tricky
    reasons = store.query(
        "select code, reason from coding_status where coder = 'rules' and status = 'not_applicable' "
        "and reason is not null group by all"
    ).rows
    codes = {rule.code: rule for rule in RULES}
    lacked = {(code, reason) for code, reason in reasons if reason.startswith("lacks what the rule reads: ")}
    assert lacked and all(reason == f"lacks what the rule reads: {codes[code].missing}" for code, reason in lacked)
    # every other reason is one a rule gave for that trajectory alone (taxonomy v6: tests/analysis/test_rules_v6.py)
    assert set(reasons) - lacked == set()
    assert "no command, edit or submission whose result" in codes["no_plan_revision"].missing
    status = store.query(
        "select status from coding_status where coder = 'rules' and code = 'premature_stop' "
        "and trajectory_id = 'ps-neg-passed-after-looking'"
    ).scalar()
    assert status == "absent"
