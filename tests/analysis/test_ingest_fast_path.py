"""ATIF's fast path (orjson and hand checks, no pydantic) against the model path: the same rows and
the same issues, quarantines included, on every real-shaped fixture, every damage of the bad-input
matrix (`bench/ingest_matrix.py`) and values pydantic would coerce; and the good fixtures really
take the fast path."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from curriculab.analysis.ingest import atif
from curriculab.analysis.ingest.pipeline import discover, read_unit

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
ATIF_FORMATS = ("atif", "harbor", "harbor-agents", "harbor-result-only")


def _matrix():
    spec = importlib.util.spec_from_file_location("ingest_matrix", ROOT / "bench" / "ingest_matrix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MATRIX = _matrix()
DAMAGES = {name: damage for name, damage in MATRIX.value_cases().items() if name.split()[0] in ("atif", "harbor")}


def _read_both(root: Path, monkeypatch) -> tuple[list, list]:
    units = sorted(discover([root])[0], key=lambda u: str(u.path))
    assert units, f"no units under {root}"
    results = {}
    for fast in (True, False):
        monkeypatch.setattr(atif, "FAST_PATH", fast)
        results[fast] = [_comparable(read_unit(unit)) for unit in units]
    return results[True], results[False]


def _comparable(result) -> dict:
    batch = result.batch
    return _typed({"tasks": batch.tasks, "runs": batch.runs, "trajectories": batch.trajectories, "steps": batch.steps,
                   "test_results": batch.test_results, "legacy": batch.legacy_hashes, "issues": result.issues,
                   "tasks_only": result.tasks_only})


def _typed(value):
    """Values with their types (2 is not 2.0 here); times as ISO text (pydantic's UTC and the
    standard library's are one zone)."""
    if isinstance(value, datetime):
        return ("datetime", value.isoformat())
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(item) for item in value])
    if dataclasses.is_dataclass(value):
        return _typed(dataclasses.asdict(value))
    return (type(value).__name__, value)


def test_fixtures_read_the_same_by_both_paths(monkeypatch):
    for name in ATIF_FORMATS:
        fast, model = _read_both(FIXTURES / name, monkeypatch)
        assert fast == model, name
        assert sum(len(r["trajectories"]) for r in fast) > 0


def test_good_fixtures_take_the_fast_path():
    documents = [p for name in ATIF_FORMATS for p in (FIXTURES / name).rglob("*.json")
                 if b'"schema_version"' in p.read_bytes() and b'"steps"' in p.read_bytes()]
    assert len(documents) >= 10
    plain = [p for p in documents if atif._plain_document(p.read_bytes()) is not None]
    assert plain == documents, sorted(set(documents) - set(plain))


@pytest.mark.parametrize("case", sorted(DAMAGES))
def test_each_damage_is_quarantined_alike(case, tmp_path, monkeypatch):
    good = MATRIX.good_copy(tmp_path)
    damaged = DAMAGES[case](good)
    fast, model = _read_both(damaged.parent if damaged.is_file() else damaged, monkeypatch)
    assert fast == model
    assert any(r["issues"] for r in fast), "the damage left no issue"


def _session(change) -> bytes:
    doc = json.loads((FIXTURES / "atif" / "session-42.json").read_text())
    change(doc)
    return json.dumps(doc).encode()


def _first_call(doc) -> dict:
    return next(s for s in doc["steps"] if s.get("tool_calls"))


# Values the fast path must hand to pydantic: it coerces some (a numeric string, a whole float, a
# spaced timestamp) and refuses others; either way the answer must be the model path's.
COERCIONS = {
    "step_id '2'": lambda d: d["steps"][1].update(step_id="2"),
    "step_id 1.0": lambda d: d["steps"][0].update(step_id=1.0),
    "step_id true": lambda d: d["steps"][0].update(step_id=True),
    "prompt_tokens 3.0": lambda d: d["steps"][1].update(metrics={"prompt_tokens": 3.0}),
    "cost_usd 2 (an int)": lambda d: d["steps"][1].update(metrics={"cost_usd": 2}),
    "total_cost_usd '0.5'": lambda d: d.update(final_metrics={"total_cost_usd": "0.5"}),
    "total_cost_usd 1 (an int)": lambda d: d.update(final_metrics={"total_cost_usd": 1}),
    "timestamp with a space": lambda d: d["steps"][0].update(timestamp="2025-11-05 10:00:00"),
    "timestamp as unix seconds": lambda d: d["steps"][0].update(timestamp=1762336800),
    "timestamp with nanoseconds": lambda d: d["steps"][0].update(timestamp="2025-11-05T10:00:00.123456789Z"),
    "timestamp +05:30": lambda d: d["steps"][0].update(timestamp="2025-11-05T10:00:00.5+05:30"),
    "timestamp in basic format": lambda d: d["steps"][0].update(timestamp="20251105T100000Z"),
    "timestamp a date alone": lambda d: d["steps"][0].update(timestamp="2025-11-05"),
    "timestamp to the hour": lambda d: d["steps"][0].update(timestamp="2025-11-05T10"),
    "timestamp a week date": lambda d: d["steps"][0].update(timestamp="2025-W45-3T10:00:00"),
    "timestamp month 13": lambda d: d["steps"][0].update(timestamp="2025-13-05T10:00:00Z"),
    "source 'Agent'": lambda d: d["steps"][0].update(source="Agent"),
    "message a dict": lambda d: d["steps"][0].update(message={"text": "hi"}),
    "message parts": lambda d: d["steps"][0].update(message=[{"type": "text", "text": "a"}, "b"]),
    "arguments a list": lambda d: _first_call(d)["tool_calls"][0].update(arguments=["ls"]),
    "arguments a string": lambda d: _first_call(d)["tool_calls"][0].update(arguments="ls -la"),
    "function_name missing": lambda d: _first_call(d)["tool_calls"][0].pop("function_name"),
    "observation results null": lambda d: _first_call(d).update(observation={"results": None}),
    "observation without results": lambda d: _first_call(d).update(observation={}),
    "a result's content a number": lambda d: _first_call(d).update(observation={"results": [{"content": 7}]}),
    "agent version null": lambda d: d["agent"].update(version=None),
    "agent name a number": lambda d: d["agent"].update(name=5),
    "session_id a number": lambda d: d.update(session_id=42),
    "extra a list": lambda d: d.update(extra=[1]),
    "steps empty": lambda d: d.update(steps=[]),
    "step_id repeated": lambda d: d["steps"][1].update(step_id=d["steps"][0]["step_id"]),
    "cost 1e400 (infinite once parsed)": lambda d: d["steps"][1].update(metrics={"cost_usd": "INF"}),
}


@pytest.mark.parametrize("case", sorted(COERCIONS))
def test_coercions_match_the_model_path(case, tmp_path, monkeypatch):
    data = _session(COERCIONS[case]).replace(b'"INF"', b"1e400")
    (tmp_path / "t.json").write_bytes(data)
    fast, model = _read_both(tmp_path, monkeypatch)
    assert fast == model


@pytest.mark.parametrize("stamp", [
    "2025-11-05T10:00:00", "2025-11-05T10:00:00Z", "2025-11-05T10:00:00.1Z", "2025-11-05T10:00:00.123456+00:00",
    "2025-11-05T23:59:59.999999-07:00", "2024-02-29T00:00:00+14:00", "0001-01-01T00:00:00", "9999-12-31T23:59:59Z",
    "2025-11-05T10:00:00.000001-00:00", "2025-06-30T12:00:00.12+01:00",
])
def test_timestamps_the_fast_path_takes_parse_as_pydantic_does(stamp):
    assert atif._TIMESTAMP.fullmatch(stamp)
    fast = datetime.fromisoformat(stamp)
    model = TypeAdapter(datetime).validate_json(json.dumps(stamp))
    assert fast == model and fast.utcoffset() == model.utcoffset() and fast.isoformat() == model.isoformat()
