"""The plain ATIF reading (orjson's values, each checked as it is read) and the model path (pydantic)
give the same rows and quarantine the same inputs with the same words: over the bad-input matrix of
`tests/ingest_matrix.py`, over values just off the schema's types, over every ATIF and Harbor
fixture and a simulated corpus. And the plain reading is the one that runs on clean documents."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import curriculab.analysis.ingest.atif as atif
from curriculab.analysis.ingest.pipeline import discover, read_unit

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SESSION = FIXTURES / "atif" / "session-42.json"


def _matrix():
    spec = importlib.util.spec_from_file_location("ingest_matrix", ROOT / "tests" / "ingest_matrix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MATRIX = _matrix()
MATRIX_CASES = {name: damage for name, damage in MATRIX.value_cases().items() if name.split()[0] in ("atif", "harbor")}


def _units(*paths: Path) -> list:
    units, _ = discover(paths)
    return [u for u in units if u.kind in ("atif", "harbor", "json")]


def _outcome(unit) -> tuple:
    """Everything reading a unit gives: each table's rows (through Arrow, as the store gets them) and
    each issue, word for word."""
    result = read_unit(unit)
    tables = {name: table.to_pylist() for name, table in result.batch.to_arrow().items()}
    return tables, [(i.path, i.record, i.field, i.severity, i.reason) for i in result.issues]


def _both(monkeypatch, units: list) -> tuple[list, list, int]:
    """(plain outcomes, model outcomes, documents the plain reading left to the model)."""
    model_reads = []
    validate = atif.parse_atif
    monkeypatch.setattr(atif, "parse_atif", lambda *a, **k: model_reads.append(a[0]) or validate(*a, **k))
    plain = [_outcome(u) for u in units]
    left = len(model_reads)
    monkeypatch.setattr(atif, "PLAIN_READING", False)
    model = [_outcome(u) for u in units]
    return plain, model, left


@pytest.mark.parametrize("case", sorted(MATRIX_CASES) + ["atif truncated", "atif not UTF-8", "atif BOM", "atif empty"])
def test_the_bad_input_matrix_is_quarantined_alike(monkeypatch, tmp_path, case):
    damage = MATRIX_CASES.get(case) or MATRIX.value_cases()[case]
    good = MATRIX.good_copy(tmp_path)
    damage(good)
    units = _units(good / "atif", good / "harbor")
    plain, model, _ = _both(monkeypatch, units)
    assert plain == model
    assert any(issues for _, issues in plain)  # the damage was noticed


def _write(tmp_path: Path, change) -> Path:
    doc = json.loads(SESSION.read_text())
    change(doc)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def _step(doc: dict, **fields) -> None:
    doc["steps"][1].update(fields)


def _metrics(doc: dict, **fields) -> None:
    doc["steps"][1].setdefault("metrics", {}).update(fields)


def _result(doc: dict, **fields) -> None:
    step = next(s for s in doc["steps"] if s.get("observation"))
    step["observation"]["results"][0].update(fields)


def _subagent(trajectory_id: str | None) -> dict:
    sub = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "worker"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "inspect"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [{"tool_call_id": "w1", "function_name": "bash", "arguments": {"command": "ls"}}],
                "observation": {"results": [{"source_call_id": "w1", "content": "a.py"}]},
                "metrics": {"prompt_tokens": 5, "completion_tokens": 2},
            },
        ],
    }
    return sub if trajectory_id is None else {**sub, "trajectory_id": trajectory_id}


def _call(doc: dict, **fields) -> None:
    step = next(s for s in doc["steps"] if s.get("tool_calls"))
    step["tool_calls"][0].update(fields)


# Values the plain reading takes as they stand, and values it leaves to the model (which coerces or
# refuses them): either way both readings must agree.
TAKEN = {
    "timestamp Z": lambda d: _step(d, timestamp="2025-01-15T10:30:00Z"),
    "timestamp offset": lambda d: _step(d, timestamp="2025-01-15T10:30:00+05:30"),
    "timestamp millis": lambda d: _step(d, timestamp="2025-01-15T10:30:00.123Z"),
    "timestamp micros, naive": lambda d: _step(d, timestamp="2025-01-15T10:30:00.123456"),
    "content parts": lambda d: _step(d, message=[{"type": "text", "text": "a"}, "b", {"type": "image"}]),
    "arguments as a string": lambda d: _call(d, arguments="ls -la"),
    "arguments null": lambda d: _call(d, arguments=None),
    "extra fields everywhere": lambda d: (d.update(zz=1), _step(d, zz=[1]), _call(d, zz={"a": 1})),
    "tool_calls null": lambda d: _step(d, tool_calls=None),
    "metrics null": lambda d: _step(d, metrics=None),
    "counts at the limit": lambda d: _metrics(d, prompt_tokens=2**63 - 1, cost_usd=0.0),
    "no steps": lambda d: d.update(steps=[]),
    "session_id missing": lambda d: d.pop("session_id"),
    "v1.7 trajectory_id, no session_id": lambda d: (
        d.pop("session_id"),
        d.update(schema_version="ATIF-v1.7", trajectory_id="doc-1"),
    ),
    "v1.8 audio part": lambda d: _step(
        d,
        message=[
            {"type": "text", "text": "a"},
            {"type": "audio", "source": {"media_type": "audio/wav", "path": "a.wav", "duration_sec": 1.5}},
        ],
    ),
    "copied context": lambda d: _step(d, is_copied_context=True),
    "v1.7 step fields": lambda d: _step(d, llm_call_count=2, reasoning_effort="high"),
    "embedded subagent, named": lambda d: (
        d.update(subagent_trajectories=[_subagent("sub-1")]),
        _result(d, subagent_trajectory_ref=[{"trajectory_id": "sub-1"}]),
    ),
    "embedded subagent, one ref as an object": lambda d: (
        d.update(subagent_trajectories=[_subagent("sub-1")]),
        _result(d, subagent_trajectory_ref={"trajectory_id": "sub-1"}),
    ),
    "embedded subagents, none named": lambda d: d.update(subagent_trajectories=[_subagent("sub-1"), _subagent(None)]),
    "subagent ref to a file": lambda d: _result(d, subagent_trajectory_ref=[{"trajectory_path": "sub.json"}]),
}
LEFT_TO_THE_MODEL = {
    "timestamp with a space": lambda d: _step(d, timestamp="2025-01-15 10:30:00"),
    "timestamp a date": lambda d: _step(d, timestamp="2025-01-15"),
    "timestamp unix seconds": lambda d: _step(d, timestamp=1736937000),
    "timestamp nanoseconds": lambda d: _step(d, timestamp="2025-01-15T10:30:00.123456789Z"),
    "timestamp lower-case t": lambda d: _step(d, timestamp="2025-01-15t10:30:00z"),
    "timestamp Feb 30": lambda d: _step(d, timestamp="2025-02-30T10:30:00Z"),
    "count as a string": lambda d: _metrics(d, prompt_tokens="12"),
    "count as a float": lambda d: _metrics(d, completion_tokens=12.0),
    "count as true": lambda d: _metrics(d, prompt_tokens=True),
    "count over int64": lambda d: _metrics(d, prompt_tokens=2**63),
    "cost as an int": lambda d: _metrics(d, cost_usd=1),
    "cost negative": lambda d: _metrics(d, cost_usd=-0.5),
    "step_id as a string": lambda d: _step(d, step_id="2"),
    "step_id over int32": lambda d: _step(d, step_id=2**31),
    "step_id repeated": lambda d: _step(d, step_id=d["steps"][0]["step_id"]),
    "source unknown": lambda d: _step(d, source="tool"),
    "source a list": lambda d: _step(d, source=["agent"]),
    "message a number": lambda d: _step(d, message=5),
    "reasoning a list": lambda d: _step(d, reasoning_content=["x"]),
    "observation results null": lambda d: _step(d, observation={"results": None}),
    "result content a number": lambda d: _step(d, observation={"results": [{"source_call_id": "x", "content": 1}]}),
    "tool_calls an object": lambda d: _step(d, tool_calls={"function_name": "x"}),
    "function_name missing": lambda d: _call(d, function_name=None),
    "arguments a list": lambda d: _call(d, arguments=["ls"]),
    "tool_call_id a number": lambda d: _call(d, tool_call_id=7),
    "agent version a number": lambda d: d["agent"].update(version=2),
    "final cost a string": lambda d: d.setdefault("final_metrics", {}).update(total_cost_usd="0.1"),
    "notes a list": lambda d: d.update(notes=["n"]),
    "extra a list": lambda d: d.update(extra=[1]),
    "steps an object": lambda d: d.update(steps={}),
    "step a list": lambda d: d["steps"].append([]),
    "schema ATIF-v1.9": lambda d: d.update(schema_version="ATIF-v1.9"),
    "schema not ATIF": lambda d: d.update(schema_version="OTHER-1"),
    "copied context a string": lambda d: _step(d, is_copied_context="true"),
    "trajectory_id a number": lambda d: d.update(trajectory_id=7),
    "subagents an object": lambda d: d.update(subagent_trajectories={"trajectory_id": "s"}),
    "subagent without steps": lambda d: d.update(
        subagent_trajectories=[{"schema_version": "ATIF-v1.7", "agent": {"name": "a"}}]
    ),
    "subagent ref a string": lambda d: _result(d, subagent_trajectory_ref="sub-1"),
    "subagent ref id a number": lambda d: _result(d, subagent_trajectory_ref=[{"trajectory_id": 1}]),
}


@pytest.mark.parametrize("case", sorted(TAKEN))
def test_values_of_the_schema_types_are_read_plainly_and_alike(monkeypatch, tmp_path, case):
    units = _units(_write(tmp_path, TAKEN[case]))
    plain, model, left = _both(monkeypatch, units)
    assert plain == model and left == 0


@pytest.mark.parametrize("case", sorted(LEFT_TO_THE_MODEL))
def test_values_off_the_schema_types_go_to_the_model(monkeypatch, tmp_path, case):
    units = _units(_write(tmp_path, LEFT_TO_THE_MODEL[case]))
    plain, model, left = _both(monkeypatch, units)
    assert plain == model and left == 1


def test_duplicate_keys_and_raw_bytes_read_alike(monkeypatch, tmp_path):
    text = SESSION.read_text()
    path = tmp_path / "dup.json"
    # the last of two same-named keys counts, in orjson as in pydantic's parser
    path.write_text(text.replace('"session_id"', '"session_id": "first", "session_id"', 1))
    plain, model, _ = _both(monkeypatch, _units(path))
    assert plain == model and plain[0][0]["trajectories"][0]["trajectory_id"] != "first"


def test_every_fixture_and_a_simulated_corpus_read_alike_and_plainly(monkeypatch, tmp_path):
    from curriculab.analysis.simulate import simulate_corpus

    simulate_corpus(tmp_path / "sim", n_tasks=6, attempts=2, seed=3)
    units = _units(
        FIXTURES / "atif",
        FIXTURES / "atif-v1.7",
        FIXTURES / "harbor",
        FIXTURES / "harbor-agents",
        FIXTURES / "harbor-result-only",
        FIXTURES / "tricky",
        tmp_path / "sim",
    )
    plain, model, left = _both(monkeypatch, units)
    assert plain == model
    steps = sum(len(tables["steps"]) for tables, _ in plain)
    assert len(units) > 30 and steps > 500
    # every clean document took the plain reading: the model only read those the plain one refused
    refused = sum(1 for tables, issues in plain if any(i[3] == "error" for i in issues) or not tables["steps"])
    assert left <= refused


def test_the_walk_leaves_the_parsed_document_as_parsed():
    """The parsed document is hashed after the walk: the walk must not change it."""
    data = SESSION.read_bytes()
    read = atif.read_atif(SESSION, data)
    assert read.parsed == json.loads(data) and read.doc is read.parsed
