"""The canonical model documents every field and refuses records it cannot read."""

import pytest
from pydantic import ValidationError

from curriculab.trajectory import model


@pytest.mark.parametrize(
    "cls", [model.Task, model.Run, model.Step, model.TestResult, model.Trajectory, model.FailureCode]
)
def test_every_field_has_a_docstring(cls):
    undocumented = [name for name, f in cls.model_fields.items() if not (f.description or "").strip()]
    assert undocumented == []


def test_unknown_keys_and_bad_values_are_rejected_with_the_field_named():
    with pytest.raises(ValidationError) as err:
        model.Trajectory(trajectory_id="t", run_id="r", task_id="k", outcome="won")
    assert err.value.errors()[0]["loc"] == ("outcome",)
    with pytest.raises(ValidationError) as err:
        model.Trajectory(trajectory_id="t", run_id="r", task_id="k", rewrd=1.0)
    assert err.value.errors()[0]["loc"] == ("rewrd",)


def test_format_version_is_checked():
    assert model.Trajectory(trajectory_id="t", run_id="r", task_id="k").format_version == model.FORMAT_VERSION
    assert model.Trajectory(trajectory_id="t", run_id="r", task_id="k", format_version="1.3").format_version == "1.3"
    with pytest.raises(ValidationError, match="format_version '2.0' is not supported"):
        model.Trajectory(trajectory_id="t", run_id="r", task_id="k", format_version="2.0")


def test_the_jsonl_doc_lists_every_field():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "jsonl.md").read_text()
    for cls in (model.Trajectory, model.Step, model.TestResult, model.Task, model.Run):
        missing = [name for name in cls.model_fields if f"| `{name}` |" not in doc]
        assert missing == [], (cls.__name__, missing)


def test_a_validation_error_comes_down_to_its_first_problem():
    from pydantic import ValidationError

    from curriculab.trajectory.model import Trajectory
    from curriculab.trajectory.validation import first_problem

    with pytest.raises(ValidationError) as err:
        Trajectory.model_validate(
            {
                "trajectory_id": "t",
                "run_id": "r",
                "task_id": "x",
                "outcome": "passed",
                "steps": [{"step_idx": 0, "source": "agent"}, {"step_idx": "one", "source": "agent"}],
            }
        )
    first = first_problem(err.value)
    assert (first.where, first.kind, first.value) == ("steps[1].step_idx", "int_parsing", "one")
    assert first.message.startswith("Input should be a valid integer") and first.more == 0
