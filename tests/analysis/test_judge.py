"""The LLM judge against a real HTTP server on localhost speaking the OpenAI chat protocol."""

import json
import re
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from curriculab.analysis.coding import run_judge
from curriculab.analysis.ingest import ingest
from curriculab.analysis.store import Store
from curriculab.taxonomy.coders.judge import JudgeConfig, judged_codes, rubric
from curriculab.taxonomy.taxonomy import load_taxonomy

pytestmark = pytest.mark.slow  # a scripted model whose timeouts take seconds

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

V1 = load_taxonomy("v1")
NEWEST_TAXONOMY = load_taxonomy()


def answer(present: dict[str, list[int]], extra: list[dict] | None = None) -> str:
    codes = [
        {
            "code": c,
            "present": c in present,
            "evidence_steps": present.get(c, []),
            "rationale": f"saw {c}",
            "confidence": 0.9,
        }
        for c in judged_codes(V1)
    ]
    return json.dumps({"codes": codes + (extra or [])})


# What the scripted model says, per trajectory.
SCRIPT = {
    "fix-csv-parser__Zr8tW4n": (
        "ok",
        answer(
            {"no_plan_revision": [2, 3], "skipped_verification": [4, 5]},
            [{"code": "laziness", "present": True, "evidence_steps": [2]}],
        ),
    ),
    "fix-csv-parser__Hk3mQ2p": ("500 once", answer({})),
    "fix-csv-parser__Cx2dE9f": (
        "ok",
        json.dumps(
            {
                "codes": [
                    {"code": "redundant_rework", "present": True, "evidence_steps": [99], "rationale": "made up"},
                    {"code": "tool_misuse", "present": True, "evidence_steps": [], "rationale": "no evidence"},
                    {"code": "skipped_verification", "present": False},
                ]
            }
        ),
    ),
    "atif-standalone-42": ("ok", "```json\n" + answer({"skipped_verification": [2]}) + "\n```"),
    "add-retry-flag__Pq7xV2k": ("slow", answer({})),
}


class ScriptedModel(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        trajectory_id = re.search(r"^Trajectory (\S+):", body["messages"][1]["content"]).group(1)
        mode, content = SCRIPT.get(trajectory_id, ("ok", answer({})))
        if mode == "500 once" and trajectory_id not in self.server.failed_once:
            self.server.failed_once.add(trajectory_id)
            self.send_error(500, "overloaded")
            return
        if mode == "slow":
            time.sleep(3.0)
        reply = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
            }
        )
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply.encode())
        except BrokenPipeError:  # the client gave up waiting: that is the timeout under test
            pass


@contextmanager
def _serving():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    httpd.requests, httpd.failed_once = [], set()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server():
    with _serving() as served:
        yield served


@pytest.fixture(scope="module")
def coded(tmp_path_factory):
    # one judged store for the tests that read it (the scripted model's timeouts take seconds)
    with _serving() as (httpd, url), Store(tmp_path_factory.mktemp("judge") / "store.duckdb") as store:
        ingest(store, [FIXTURES / "harbor", FIXTURES / "atif"], workers=1)
        config = JudgeConfig(base_url=url, model="judge-mini", timeout_s=1.5, max_retries=2, backoff_s=0.05)
        report = run_judge(store, url, "judge-mini", config=config)
        yield store, httpd, report


def test_valid_findings_are_stored_with_evidence(coded):
    store, _, report = coded
    rows = store.query(
        "select trajectory_id, code, evidence_steps, confidence from failure_codes where coder = 'judge:judge-mini' "
        "order by 1, 2"
    ).rows
    assert rows == [
        ("atif-standalone-42", "skipped_verification", [2], 0.9),
        ("fix-csv-parser__Zr8tW4n", "no_plan_revision", [2, 3], 0.9),
        ("fix-csv-parser__Zr8tW4n", "skipped_verification", [4, 5], 0.9),
    ]
    # six trajectories: two present, three judged absent, one never answered (timed out)
    assert report.counts["skipped_verification"] == {"present": 2, "absent": 3, "not_applicable": 1}


def test_unknown_codes_and_steps_and_unsupported_claims_are_rejected(coded):
    _, _, report = coded
    assert "fix-csv-parser__Zr8tW4n: codes[8]: unknown code 'laziness'" in report.rejected
    assert (
        "fix-csv-parser__Cx2dE9f: codes[0]: redundant_rework: cites step(s) [99] the trajectory does not have"
        in report.rejected
    )
    assert "fix-csv-parser__Cx2dE9f: codes[1]: tool_misuse: present without evidence_steps" in report.rejected


def test_server_errors_are_retried_and_timeouts_give_up_cleanly(coded):
    store, httpd, report = coded
    attempts = [re.search(r"^Trajectory (\S+):", r["messages"][1]["content"]).group(1) for r in httpd.requests]
    assert attempts.count("fix-csv-parser__Hk3mQ2p") == 2  # a 500, then the answer
    assert attempts.count("add-retry-flag__Pq7xV2k") == 3  # timed out on every attempt
    assert report.failed == ["add-retry-flag__Pq7xV2k: no answer (timed out) after 3 attempt(s)"]
    statuses = store.query(
        "select distinct status from coding_status where coder = 'judge:judge-mini' "
        "and trajectory_id = 'add-retry-flag__Pq7xV2k'"
    ).rows
    assert statuses == [("not_applicable",)]


def test_every_request_carries_the_same_cacheable_rubric(coded):
    _, httpd, _ = coded
    systems = {r["messages"][0]["content"] for r in httpd.requests}
    assert systems == {rubric(NEWEST_TAXONOMY)}
    assert all(
        r["model"] == "judge-mini" and r["response_format"] == {"type": "json_object"} and r["temperature"] == 0
        for r in httpd.requests
    )
    assert "harness_failure" not in rubric(NEWEST_TAXONOMY) and "## skipped_verification" in rubric(NEWEST_TAXONOMY)
    # what the tests decide exactly is not asked of a judge
    assert not any(f"## {code}:" in rubric(NEWEST_TAXONOMY) for code in ("all_tests_fail", "near_miss", "no_code"))


def test_the_cli_runs_the_judge(cli_run, fixtures, server):
    _, url = server
    assert cli_run("ingest", str(fixtures / "atif")).exit_code == 0
    result = cli_run("code", "--coder", "judge", "--judge-url", url, "--judge-model", "judge-mini", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["coder"] == "judge:judge-mini" and out["counts"]["skipped_verification"]["present"] == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"base_url": "localhost:8000", "model": "m"}, "is not an http(s) URL. Pass e.g. http://localhost:8000/v1"),
        ({"base_url": "http://h/v1", "model": ""}, "model is empty"),
        ({"base_url": "http://h/v1", "model": "m", "timeout_s": 0}, "Use a positive number of seconds"),
        ({"base_url": "http://h/v1", "model": "m", "concurrency": 0}, "Use 1 or more"),
    ],
)
def test_config_errors_name_the_fix(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        JudgeConfig(**kwargs)
