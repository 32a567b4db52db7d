"""The step builder's steps are whole pydantic models, though built without `model_construct`."""

from pathlib import Path

from curriculab.analysis.ingest.common import StepBuilder
from curriculab.trajectory.actions import NormalisedCall
from curriculab.trajectory.model import Step


def _built() -> list[Step]:
    builder = StepBuilder(path=Path("t.json"), record="r", source_format="atif")
    builder.message("user", "fix the bug")
    builder.calls([NormalisedCall("run", None, "ls"), NormalisedCall("read", "a.py", "cat a.py")], tool_name="bash",
                  raw={"arguments": {"command": "ls; cat a.py"}}, output="a.py\nx = 1", message="looking", exit_code=0,
                  call_id="1/c")
    return builder.steps


def test_built_steps_equal_model_construct_and_behave_as_models():
    steps = _built()
    assert [s.action for s in steps] == [None, "run", "read"]
    for step in steps:
        values = {name: getattr(step, name) for name in Step.model_fields}
        constructed = Step.model_construct(**values)
        assert step == constructed
        assert step.model_fields_set == constructed.model_fields_set == set(Step.model_fields)
        assert step.model_dump() == constructed.model_dump()
        assert repr(step) == repr(constructed)
        assert Step.model_validate(step.model_dump()) == step  # the values are ones the schema accepts
        assert step.model_copy(update={"output": "changed"}).output == "changed"
    assert steps[2].output == "a.py\nx = 1" and steps[2].exit_code == 0 and steps[1].output is None
    assert steps[1].raw == {"arguments": {"command": "ls; cat a.py"}, "part": 0}
