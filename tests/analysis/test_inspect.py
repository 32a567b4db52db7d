"""Inspect AI logs are read with inspect_ai's own reader; without the extra they are quarantined
with a message naming it."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from curriculab.analysis.ingest import ingest

pytestmark = pytest.mark.slow  # a real Inspect log written by inspect_ai

ROOT = Path(__file__).resolve().parents[2]

# A real eval: inspect's mockllm model calls a local tool, then answers; scored by `includes`.
EVAL_SCRIPT = textwrap.dedent('''
    import sys
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def bash():
        async def execute(cmd: str) -> str:
            """Run a shell command.

            Args:
                cmd: The command.
            """
            return "solution.py\\n" if cmd.startswith("ls") else "4\\n"
        return execute

    def usage(output):  # explicit usage keeps mockllm from fetching a tokenizer
        output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
        return output

    outputs = [usage(ModelOutput.for_tool_call("mockllm/model", "bash", {"cmd": "ls && cat solution.py"})),
               usage(ModelOutput.from_content("mockllm/model", "The answer is 4")),
               usage(ModelOutput.from_content("mockllm/model", "The answer is 5"))]
    task = Task(dataset=[Sample(id="add", input="What is 2+2?", target="4"),
                         Sample(id="mul", input="What is 2*3?", target="6")],
                solver=[use_tools(bash()), generate()], scorer=includes())
    log = eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=sys.argv[1], display="none", max_samples=1)[0]
    print(log.location)
''')


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory):
    pytest.importorskip("inspect_ai", reason="needs the inspect extra (installed by the README test command)")
    log_dir = tmp_path_factory.mktemp("inspect")
    done = subprocess.run(
        [sys.executable, "-c", EVAL_SCRIPT, str(log_dir)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip().splitlines()[-1])


def test_a_real_inspect_log_is_ingested(store, eval_log):
    report = ingest(store, [eval_log], workers=1)
    assert report.errors == [] and dict(report.by_format) == {"inspect": 2}
    rows = store.query(
        "select task_id, outcome, reward, attempt, model, model_raw, input_tokens from trajectories order by task_id"
    ).rows
    # the provider route is not part of the model's name (`openai/gpt-4o` and `gpt-4o` are one model)
    assert rows == [
        ("task/add", "passed", 1.0, 0, "model", "mockllm/model", 200),
        ("task/mul", "failed", 0.0, 0, "model", "mockllm/model", 100),
    ]
    steps = store.query(
        "select source, tool_name, action, path, command, output from steps "
        "where trajectory_id like '%/add/1' order by step_idx"
    ).rows
    assert steps == [
        ("user", None, None, None, None, None),
        ("agent", "bash", "run", None, "ls", None),
        ("agent", "bash", "read", "solution.py", "cat solution.py", "solution.py\n"),  # the tool result joins its call
        ("agent", None, "message", None, None, None),
    ]


def test_without_the_extra_the_log_is_quarantined_naming_it(tmp_path, eval_log, fixtures):
    # Block the import in a fresh interpreter, as on a machine without the extra.
    script = textwrap.dedent(f"""
        import sys
        sys.modules["inspect_ai"] = None
        from curriculab.analysis.store import Store
        from curriculab.analysis.ingest import ingest
        with Store({str(tmp_path / "s.duckdb")!r}) as store:
            report = ingest(store, [{str(eval_log)!r}, {str(fixtures / "jsonl")!r}], workers=1)
            print(report.inserted)
            print(report.errors[0].reason)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    inserted, reason = done.stdout.strip().splitlines()
    assert inserted == "3"  # the JSONL in the same call still landed
    assert reason == (
        f"{eval_log}: reading Inspect AI logs needs the inspect-ai package, which is not installed. "
        "Install the extra: pip install 'curriculab[inspect]'"
    )


@pytest.mark.parametrize(
    "status, why",
    [
        ("success", "the log holds a header only (no samples; written with --no-log-samples, or read header-only)"),
        ("cancelled", "the eval ended with status 'cancelled' before any sample was logged"),
    ],
)
def test_a_log_without_samples_says_why_nothing_landed(store, eval_log, tmp_path, status, why):
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(eval_log))
    log.samples, log.status = None, status
    target = tmp_path / f"{status}.json"
    write_eval_log(log, str(target))
    report = ingest(store, [target], workers=1)
    assert report.inserted == 0 and report.errors == []
    assert [w.reason for w in report.warnings] == [
        f"{target}: no samples to ingest: {why}. Re-run the eval with samples logged, or ignore this file"
    ]


# inspect_ai's own test log `tests/log/test_eval_log/log_tool_call_error.json` (inspect 0.3.58): a
# sample whose messages are eleven tool results, each with an `error` (parsing, timeout, permission,
# file_not_found, ..., output_limit), and no assistant message carrying the calls. Same shape here.
TOOL_ERROR_TYPES = [
    "parsing",
    "timeout",
    "parsing",
    "unicode_decode",
    "permission",
    "file_not_found",
    "is_a_directory",
    "limit",
    "approval",
    "unknown",
    "output_limit",
]


def test_failing_tool_calls_keep_their_tool_and_error(store, tmp_path):
    import json

    log = {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "run-tool-errors",
            "created": "2025-02-07T00:00:00+00:00",
            "task": "tool-errors",
            "task_id": "t1",
            "task_version": 0,
            "task_file": "task.py",
            "task_attribs": {},
            "task_args": {},
            "dataset": {"name": "d", "location": ".", "samples": 1, "sample_ids": [1], "shuffled": False},
            "sandbox": {"type": "docker", "config": "compose.yaml"},
            "model": "mockllm/model",
            "model_generate_config": {},
            "model_args": {},
            "config": {},
            "revision": {"type": "git", "origin": "o", "commit": "c"},
            "packages": {"inspect_ai": "0.3.58"},
        },
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}]},
        "results": {"total_samples": 1, "completed_samples": 1, "scores": []},
        "stats": {
            "started_at": "2025-02-07T00:00:00+00:00",
            "completed_at": "2025-02-07T00:00:00+00:00",
            "model_usage": {},
        },
        "samples": [
            {
                "id": 1,
                "epoch": 1,
                "input": "Do it.",
                "target": "x",
                "files": [],
                "setup": "",
                "messages": [
                    {
                        "content": "partial output" if kind == "output_limit" else "",
                        "role": "tool",
                        "tool_call_id": f"bash_{k + 1}",
                        "function": "bash",
                        "error": {"type": kind, "message": f"the call failed: {kind}"},
                    }
                    for k, kind in enumerate(TOOL_ERROR_TYPES)
                ],
            }
        ],
    }
    path = tmp_path / "log_tool_call_error.json"
    path.write_text(json.dumps(log))
    report = ingest(store, [path], "inspect")
    assert report.quarantined == 0, [i.reason for i in report.errors]
    rows = store.query(
        "select tool_name, action, error_observed, output, json_extract_string(raw, '$.error.type') "
        "from steps order by step_idx"
    ).rows
    assert len(rows) == 11
    assert {(r[0], r[1], r[2]) for r in rows} == {("bash", "run", True)}
    assert [r[4] for r in rows] == TOOL_ERROR_TYPES
    assert rows[-1][3] == "partial output\nthe call failed: output_limit"
