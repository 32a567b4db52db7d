"""The `curriculab` command: output flags, stdin, exact error text, --db everywhere, demo."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ingested_store(tmp_path_factory, formats) -> Path:
    """Every format's samples ingested by the command, once per module; tests get a copy."""
    from click.testing import CliRunner

    from curriculab.cli import cli

    db = tmp_path_factory.mktemp("ingested") / "store.duckdb"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", *map(str, formats)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def ingested(cli_run, db_path, ingested_store):
    shutil.copy(ingested_store, db_path)
    return cli_run


def test_query_json_is_an_array_of_objects_keyed_by_column(ingested):
    result = ingested(
        "query",
        "select model, count(*) as n from trajectories where source_format = 'harbor' group by 1 order by 1",
        "--json",
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [
        {"model": "claude-sonnet-4-5-20250929", "n": 2},
        {"model": "gpt-5-codex", "n": 1},
        {"model": "gpt-5-mini", "n": 2},
    ]


def test_query_answers_the_readme_question(ingested):
    result = ingested("query", "select model, count(*) from trajectories group by 1", "--json")
    rows = json.loads(result.stdout)
    assert sum(r["count_star()"] for r in rows) == 21 and {r["model"] for r in rows} >= {"gpt-5-mini", "tiny-llama"}


def test_query_csv_and_table_and_stdin(ingested):
    result = ingested("query", "select task_id, tags from tasks where task_id = 'hello-world'", "--csv")
    assert list(csv.reader(io.StringIO(result.stdout))) == [
        ["task_id", "tags"],
        ["hello-world", '["file-operations", "beginner"]'],
    ]
    result = ingested("query", "-", input="select count(*) as n from runs")
    assert result.exit_code == 0 and "9" in result.stdout and "┃ n" in result.stdout


def test_a_piped_table_is_sized_to_its_content_and_rounds_figures_for_people(ingested, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    wide = "x" * 150
    sql = (
        f"select '{wide}' as long_text, 2/3 as ratio, 123456.789 as big, 1e-7 as tiny, 'a' as c1, 'b' as c2, 'c' as c3"
    )
    table = ingested("query", sql).stdout
    assert wide in table  # one line, not folded at 80 columns
    row = next(line for line in table.splitlines() if wide in line)
    assert [cell.strip() for cell in row.strip("│ ").split("│")][1:4] == ["0.6667", "123456.8", "1e-07"]
    assert json.loads(ingested("query", sql, "--json").stdout)[0]["ratio"] == 2 / 3  # machines get every digit


def test_bad_sql_is_one_error_line_with_a_fix(ingested):
    result = ingested("query", "select nope from trajectories")
    assert result.exit_code == 1
    assert result.stderr.startswith('Error: query failed: Binder Error: Referenced column "nope" not found')
    assert result.stderr.rstrip().endswith("Check the SQL; `curriculab db schema` lists tables and columns")
    assert "Traceback" not in result.stderr


def test_query_on_a_missing_store(cli_run, db_path):
    result = cli_run("query", "select 1")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: no store at {db_path}. Run `curriculab ingest PATH` to create one, or pass --db / set CURRICULAB_DB\n"
    )


@pytest.mark.slow
def test_db_option_env_var_and_subcommand_flag(tmp_path, fixtures):
    env = {**os.environ, "CURRICULAB_DB": str(tmp_path / "env.duckdb")}

    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "curriculab.cli", *a], cwd=ROOT, env=env, capture_output=True, text=True
        )

    assert run("ingest", str(fixtures / "jsonl")).returncode == 0
    assert json.loads(run("query", "select count(*) as n from trajectories", "--json").stdout) == [{"n": 3}]
    other = tmp_path / "flag.duckdb"
    assert run("ingest", "--db", str(other), str(fixtures / "atif")).returncode == 0
    assert json.loads(run("query", "--db", str(other), "select count(*) as n from trajectories", "--json").stdout) == [
        {"n": 1}
    ]


@pytest.mark.slow
def test_debug_shows_the_traceback_and_default_hides_it(tmp_path):
    base = [sys.executable, "-m", "curriculab.cli", "--db", str(tmp_path / "x.duckdb")]
    quiet = subprocess.run(base + ["query", "select 1"], cwd=ROOT, capture_output=True, text=True)
    loud = subprocess.run(
        base[:2] + ["cli", "--debug"] + base[3:] + ["query", "select 1"], cwd=ROOT, capture_output=True, text=True
    )
    assert quiet.returncode == 1 and "Traceback" not in quiet.stderr and quiet.stderr.startswith("Error: no store at")
    assert loud.returncode == 1 and "Traceback (most recent call last)" in loud.stderr and "StoreMissing" in loud.stderr


def test_db_schema_and_migrate(cli_run):
    from curriculab.analysis.store import LATEST_VERSION

    result = cli_run("db", "migrate")
    assert (
        result.exit_code == 0
        and f"schema version {LATEST_VERSION} ({LATEST_VERSION} migrations applied)" in result.stdout
    )
    tables = {t["table"] for t in json.loads(cli_run("db", "schema", "--json").stdout)}
    assert {
        "tasks",
        "runs",
        "trajectories",
        "steps",
        "test_results",
        "failure_codes",
        "labels",
        "plans",
        "ingest_errors",
        "schema_migrations",
        "coding_status",
        "code_reliability",
    } <= tables


def test_version_and_help_examples(cli_run):
    from importlib.metadata import version

    assert cli_run("--version", db=False).stdout.strip() == f"curriculab, version {version('curriculab')}"
    for command in (["ingest"], ["query"], ["db", "schema"], ["db", "migrate"], ["simulate"], ["demo"]):
        text = cli_run(*command, "--help", db=False).stdout
        assert "Example:" in text and "curriculab " in text.split("Example:")[1], command


def test_unknown_format_option_is_refused(cli_run, formats):
    result = cli_run("ingest", "--format", "csv", str(formats[0]))
    assert result.exit_code == 2 and "Invalid value for '--format'" in result.stderr


@pytest.mark.slow
def test_demo_runs_the_loop_on_embedded_data(tmp_path, monkeypatch):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "curriculab.cli",
            "demo",
            "--out",
            str(tmp_path / "demo"),
            "--tasks",
            "18",
            "--attempts",
            "2",
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # the agent's warm-up, the first time
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["trajectories"] == 18 * 2 * 3 and result["quarantined"] == 0
    assert {row["model"] for row in result["by_model"]} == {"atlas-7b-coder", "borealis-32b", "cirrus-large"}
    assert Path(result["db"]).exists()
    # it ends with a short agentic round: episodes stored, coded by the environment, one held out
    agent = result["agent"]
    assert agent["episodes"] == 8 and agent["held_out"]["episodes"] == 1
    assert {row["code"] for row in agent["environment_codes"]} <= {
        "skipped_verification",
        "premature_stop",
        "no_plan_revision",
        "redundant_rework",
    } and agent["environment_codes"]
    # the demo's own store through every page and `plan diff`: its newest plan is the agentic round's
    _demo_store_pages(Path(result["db"]), monkeypatch)


def _demo_store_pages(db: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from curriculab.cli import cli
    from tests.dashboard.test_app import _fresh, _page
    from tests.dashboard.test_pages import PAGES

    plans = json.loads(
        CliRunner().invoke(cli, ["--db", str(db), "query", "select plan_id, strategy from plans", "--json"]).output
    )
    kinds = {row["strategy"]: row["plan_id"] for row in plans}
    assert {"milestones", "tarot"} <= set(kinds)  # a task plan and problem plans
    diffed = CliRunner().invoke(cli, ["--db", str(db), "plan", "diff", kinds["milestones"], kinds["tarot"], "--json"])
    assert diffed.exit_code == 0 and {"what": "kind", kinds["milestones"]: "tasks", kinds["tarot"]: "problems"} in (
        json.loads(diffed.output)
    )
    monkeypatch.setenv("CURRICULAB_DB", str(db))
    at = _fresh()
    for name in PAGES:
        _page(at, name)
        assert not at.exception, (name, [e.value for e in at.exception])


MISSING_STORE = "Run `curriculab ingest PATH` to create one, or pass --db / set CURRICULAB_DB\n"


@pytest.mark.parametrize(
    "command",
    [["report"], ["difficulty"], ["code"], ["labels", "export"], ["agreement", "--coder", "rules", "--annotator", "a"]],
)
def test_commands_that_read_refuse_a_mistyped_store_and_create_nothing(cli_run, db_path, command):
    result = cli_run(*command)
    assert result.exit_code == 1 and result.stderr == f"Error: no store at {db_path}. {MISSING_STORE}"
    assert not db_path.exists()


def test_code_where_is_a_filter_on_trajectories_never_a_statement(ingested, db_path):
    typo = ingested("code", "--where", "modle = 1")
    assert typo.exit_code == 1
    assert typo.stderr.startswith(
        "Error: --where 'modle = 1' is not a filter on trajectories: Binder Error: Referenced "
        'column "modle" not found'
    )
    assert typo.stderr.rstrip().endswith("Use trajectories's columns (`curriculab db schema` lists them)")
    for hostile in [
        "1=1); drop table steps; select (1",
        "true) union all select 1; delete from trajectories where (true",
    ]:
        refused = ingested("code", "--where", hostile)
        assert refused.exit_code == 1 and refused.stderr.startswith(f"Error: --where {hostile!r} is not a")
    counts = json.loads(
        ingested(
            "query", "select (select count(*) from steps) as s, (select count(*) from trajectories) as t", "--json"
        ).stdout
    )
    assert counts[0]["s"] > 0 and counts[0]["t"] == 21
    fine = ingested("code", "--where", "outcome = 'failed' and source_format = 'tb'", "--json")
    assert fine.exit_code == 0 and json.loads(fine.stdout)["trajectories"] == 4


def test_debug_is_accepted_after_the_command_name(tmp_path):
    base = [sys.executable, "-m", "curriculab.cli", "--db", str(tmp_path / "x.duckdb")]
    loud = subprocess.run(base + ["query", "--debug", "select 1"], cwd=ROOT, capture_output=True, text=True)
    assert loud.returncode == 1 and "Traceback (most recent call last)" in loud.stderr


@pytest.mark.slow
def test_piping_into_head_exits_quietly(ingested, db_path):
    shell = f"{sys.executable} -m curriculab.cli --db {db_path} query 'select * from steps, range(20)' --csv | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.startswith("trajectory_id,") and done.stderr == "" and done.returncode == 0


def test_reward_with_a_missing_completions_file(cli_run, tmp_path):
    result = cli_run("reward", "--problems", "builtin", "--completions", str(tmp_path / "missing.jsonl"), db=False)
    assert result.exit_code == 2 and "does not exist" in result.stderr and "Traceback" not in result.stderr


def test_ingesting_only_bad_input_into_a_full_store_records_it_once(ingested, tmp_path):
    for _ in range(2):
        result = ingested("ingest", "/typo-curriculab", str(tmp_path / "empty"))
        assert result.exit_code == 1 and "unexpected" not in result.output
    (tmp_path / "empty").mkdir()
    assert ingested("ingest", str(tmp_path / "empty")).exit_code == 1
    rows = json.loads(
        ingested("query", "select path, count(*) as n from ingest_errors group by 1 order by 1", "--json").stdout
    )
    # one row per distinct problem: missing twice (once), then empty (a different problem)
    assert rows == [{"path": str(tmp_path / "empty"), "n": 2}, {"path": "/typo-curriculab", "n": 1}]


@pytest.mark.slow
def test_an_unreachable_judge_says_so_and_fails(cli_run, fixtures):
    assert cli_run("ingest", str(fixtures / "atif")).exit_code == 0
    judge = ("code", "--coder", "judge", "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m")
    result = cli_run(*judge, "--judge-retries", "0")  # the default's three retries wait 7 s
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "1 of 1 trajectories got no usable answer from the judge; they are left not_applicable. "
        "First: atif-standalone-42: no answer ("
    )
    assert "after 1 attempt(s)" in result.stderr
    assert result.stderr.rstrip().endswith(
        "Error: the judge answered none of the 1 trajectories. Check --judge-url and "
        "--judge-model (is the server up and serving that model?)"
    )
    refused = cli_run(*judge, "--judge-retries", "-1")
    assert refused.exit_code == 2
    assert "Invalid value for '--judge-retries': -1 is not in the range x>=0." in refused.stderr
    no_scheme = cli_run("code", "--coder", "judge", "--judge-url", "localhost:8000/v1", "--judge-model", "m")
    assert no_scheme.exit_code == 1
    assert no_scheme.stderr.strip() == (
        "Error: --judge-url: base_url 'localhost:8000/v1' is not an http(s) URL. Pass e.g. http://localhost:8000/v1"
    )


@pytest.mark.parametrize(
    "sql, refusal",
    [
        ("copy (select 1) to '{out}'", "query is a COPY statement; `curriculab query` only reads (one SELECT)."),
        ("export database '{outdir}'", "query is a EXPORT statement; `curriculab query` only reads (one SELECT)."),
        ("install httpfs", "`curriculab query` only reads (one SELECT)."),
        ("select 1; delete from trajectories", "query holds 2 statements; `curriculab query` runs exactly one."),
        ("delete from trajectories", "query is a DELETE statement"),
        (
            "select * from read_csv('/etc/passwd')",
            "file system operations are disabled by configuration. `curriculab query` reads the store only",
        ),
        ("select * from glob('/root/*')", "file system operations are disabled by configuration."),
    ],
)
def test_query_reads_the_store_and_nothing_else(ingested, db_path, tmp_path, sql, refusal):
    out = tmp_path / "leak.csv"
    result = ingested("query", sql.format(out=out, outdir=tmp_path / "dump", db=db_path))
    assert result.exit_code == 1 and refusal in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() and not (tmp_path / "dump").exists()
    assert json.loads(ingested("query", "select count(*) as n from trajectories", "--json").stdout) == [{"n": 21}]


def test_reward_refuses_bad_completion_lines_one_by_one_and_scores_the_rest(cli_run, tmp_path):
    path = tmp_path / "completions.jsonl"
    good = {"problem_id": "curriculab/roman", "completion_id": "ok", "completion": "def to_roman(n):\n    return ''\n"}
    lines = [
        json.dumps(good).encode(),
        b"[1, 2]",
        b"null",
        b'{"problem_id": "curriculab/roman", "completion_id": "bad\xff"}',
        json.dumps(good).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = cli_run("reward", "--problems", "builtin", "--completions", str(path), "--json", db=False)
    assert result.exit_code == 1 and [r["completion_id"] for r in json.loads(result.stdout)] == ["ok"]
    bad_byte = lines[3].index(b"\xff")
    assert result.stderr.splitlines() == [
        f"  refused: {path}: line 2: expected a JSON object {{problem_id, completion_id, completion}}, got list. Fix the line",
        f"  refused: {path}: line 3: expected a JSON object {{problem_id, completion_id, completion}}, got null. Fix the line",
        f"  refused: {path}: line 4: not valid UTF-8 (byte {bad_byte}). Re-encode the file as UTF-8",
        f"  refused: {path}: line 5: completion_id 'ok' is already on line 1. Give each completion its own id",
    ]


def test_escape_sequences_in_stored_text_never_reach_the_terminal_raw(cli_run, tmp_path):
    record = {"trajectory_id": "evil\x1b]0;pwned\x07\x1b[2J[bold]x", "run_id": "r", "task_id": "k", "outcome": "failed"}
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert cli_run("ingest", str(path)).exit_code == 0
    table = cli_run("query", "select trajectory_id from trajectories")
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J[bold]x" in table.stdout  # shown as text, markup included


def test_code_with_the_verifier_codes_trials_with_per_test_results(cli_run, fixtures):
    assert cli_run("ingest", str(fixtures / "tb"), "--format", "tb").exit_code in (0, 1)
    result = cli_run("code", "--coder", "verifier", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["coder"] == "verifier" and report["taxonomy_version"] == "v6" and report["trajectories"] > 0
    counts = report["counts"]
    assert sum(counts["all_tests_fail"].get(k, 0) for k in ("present", "absent")) > 0  # trials with tests were judged
    assert (
        counts["broken_code_block"]["present"] == 0
        and counts["broken_code_block"]["not_applicable"] == report["trajectories"]
    )


@pytest.mark.slow
def test_the_dashboard_refuses_a_taken_port_before_printing_its_url(tmp_path):
    import socket

    from curriculab.analysis.store import Store

    db = tmp_path / "s.duckdb"
    with Store(db):
        pass
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "curriculab.cli", "--db", str(db), "dashboard", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0 and "http://" not in result.stdout
    assert f"port {port} is taken (another dashboard?). Pass a free one: --port {port + 1}" in result.stderr


@pytest.mark.slow
def test_stopping_the_dashboard_stops_the_server(tmp_path):
    import signal
    import socket
    import time
    import urllib.request

    from curriculab.analysis.store import Store

    db = tmp_path / "s.duckdb"
    with Store(db):
        pass
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "curriculab.cli", "--db", str(db), "dashboard", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    health = f"http://127.0.0.1:{port}/_stcore/health"
    try:
        assert process.stdout.readline().startswith(f"curriculab dashboard on http://localhost:{port}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(health, timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail("the dashboard did not come up in 60 s")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        process.kill()
    with pytest.raises(OSError):  # nothing is left serving: the server was this process, not a child of it
        urllib.request.urlopen(health, timeout=2)


def _commands():
    import click

    from curriculab.cli import cli

    def walk(group, prefix):
        for name in sorted(group.list_commands(None)):  # the group loads its commands on first use
            command = group.get_command(None, name)
            if not isinstance(command, click.Group) or command.invoke_without_command:
                yield f"{prefix} {name}"
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix} {name}")

    return list(walk(cli, "curriculab"))


def test_every_command_is_documented_in_the_readme():
    import re

    readme = (ROOT / "README.md").read_text()
    commands = _commands()
    assert len(commands) >= 24 and "curriculab labels import" in commands
    missing = [c for c in commands if not re.search(re.escape(c) + r"(?![\w-])", readme)]
    assert not missing, f"the README never shows {missing}: add an example of each"


def test_command_modules_are_thin():
    # each command parses arguments and calls the library: files are read (and parsed) there
    import ast

    for source in sorted((ROOT / "curriculab" / "commands").glob("*.py")):
        text = source.read_text()
        assert text.count("\n") <= 300, f"{source.name} is {text.count(chr(10))} lines: split it by stage"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                assert name not in ("open", "loads", "read_text", "read_bytes"), (
                    f"{source.name}:{node.lineno} reads a file itself ({name}): move the reading into the library"
                )
    assert (ROOT / "curriculab" / "cli.py").read_text().count("\n") <= 300


def test_the_command_starts_without_the_heavy_libraries():
    # every command pays the CLI's imports first: models, frames and tensors load only where used
    heavy = ("pydantic", "pandas", "pyarrow", "numpy", "torch", "yaml", "curriculab.taxonomy.taxonomy")
    code = f"import sys, curriculab.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_reward_loads_only_the_problems_it_scores_and_never_the_store(tmp_path):
    # `curriculab reward` is what a user waits on: no DuckDB, no plan models, 2 of HumanEval's 164 built
    from curriculab.training.problems import load_problem_set

    picked = load_problem_set("humaneval", only={"HumanEval/0", "HumanEval/7"})
    assert [p.problem_id for p in picked] == ["HumanEval/0", "HumanEval/7"] and all(p.tests for p in picked)
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        "".join(
            json.dumps({"completion_id": f"c{k}", "problem_id": p.problem_id, "completion": p.reference}) + "\n"
            for k, p in enumerate(picked)
        )
        + '{"completion_id": "x", "problem_id": "HumanEval/999", "completion": "pass"}\n'
    )
    code = (
        "import sys, json\nfrom curriculab.cli import cli\ntry:\n"
        f"    cli.main(['reward', '--problems', 'humaneval', '--completions', {str(completions)!r}, '--json'], "
        "standalone_mode=False)\nfinally:\n"
        "    print(json.dumps(sorted(m for m in ('duckdb', 'curriculab.planner.config', 'pandas') if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    *report, loaded = done.stdout.splitlines()
    scored = json.loads("\n".join(report))
    assert [(r["problem_id"], r["reward"]) for r in scored] == [("HumanEval/0", 1.0), ("HumanEval/7", 1.0)]
    assert "'HumanEval/999' is not in humaneval" in done.stderr  # the unknown id is still named
    assert json.loads(loaded) == []


def test_a_no_op_reingest_reads_nothing_and_loads_no_progress_display(tmp_path, fixtures):
    # what a re-ingest of unchanged inputs costs is the walk and the stat of each file, not imports
    code = (
        "import sys\nfrom curriculab.cli import cli\n"
        "try:\n"
        f"    cli.main(['ingest', {str(fixtures / 'jsonl')!r}, '--db', {str(tmp_path / 's.duckdb')!r}], standalone_mode=False)\n"
        "finally:\n"
        "    print(sorted(m for m in ('rich.progress', 'concurrent.futures.process') if m in sys.modules))"
    )
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "Ingested 3 trajectories" in first.stdout and "rich.progress" in first.stdout.splitlines()[-1]
    assert "Ingested 0 trajectories" in again.stdout and "3 unchanged" in again.stdout
    assert again.stdout.splitlines()[-1] == "[]"


def test_a_command_imports_its_own_module_only():
    # `curriculab reward` is a user's wait: it must not pay for the training or dashboard commands
    code = (
        "import sys; from click.testing import CliRunner; from curriculab.cli import cli; "
        "assert CliRunner().invoke(cli, ['reward', '--help']).exit_code == 0; "
        "print(sorted(m for m in sys.modules if m.startswith('curriculab.commands.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['curriculab.commands.common', 'curriculab.commands.problems']"


def test_plan_fits_difficulty_itself_for_a_model_with_no_tiered_results(cli_run, fixtures):
    """Terminal-Bench models have per-test results but no tiers: their capability comes from an IRT
    fit, which `plan` now makes (saying so) instead of failing until `curriculab difficulty` ran."""
    assert cli_run("ingest", str(fixtures / "tb-leaderboard")).exit_code == 0
    fitted = "select count(*) as n from irt_models"
    assert json.loads(cli_run("query", fitted, "--json").stdout) == [{"n": 0}]
    # its attempts are agent episodes: a problem plan is asked for (a task plan is the default there)
    done = cli_run("plan", "--model", "claude-opus-4-1-20250805", "--problems", "builtin", "--json")
    assert done.exit_code == 0, done.output
    counts = "select count(distinct task_id) as tasks, count(distinct model) as models from trajectories where outcome <> 'error'"
    tasks, models = json.loads(cli_run("query", counts, "--json").stdout)[0].values()
    said = f"Fitted difficulty on {tasks} tasks and {models} models (stored, as `curriculab difficulty` would)."
    assert said in done.stderr
    assert json.loads(done.stdout)["capability"]["source"] == "irt"
    assert json.loads(cli_run("query", fitted, "--json").stdout)[0]["n"] >= 2


def test_tasks_health_flags_and_tasks_checked_puts_a_task_back(cli_run, tmp_path):
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    assert cli_run("ingest", str(leaderboard_with_a_broken_and_a_trivial_task(tmp_path))).exit_code == 0
    flagged = json.loads(cli_run("tasks", "health", "--flagged", "--json").stdout)
    assert {(r["task_id"], r["health"]) for r in flagged} == {
        ("nginx-request-logging", "never solved: possibly broken"),
        ("hello-world", "always solved: possibly trivial"),
    }
    fitted = cli_run("difficulty", "--json")
    assert fitted.exit_code == 0
    assert [r["task_id"] for r in json.loads(fitted.stdout)] == ["fix-permissions"]
    assert "2 task(s) kept out as never or always solved" in fitted.stderr
    refused = cli_run("tasks", "checked", "no-such-task")
    assert refused.exit_code == 1
    assert refused.stderr == (
        "Error: no attempt of 'no-such-task' is in the store. `curriculab tasks health` lists the tasks it knows\n"
    )
    done = cli_run("tasks", "checked", "nginx-request-logging", "--note", "oracle passes")
    assert done.exit_code == 0 and "Marked 1 task(s) checked" in done.stdout
    left = json.loads(cli_run("tasks", "health", "--flagged", "--json").stdout)
    assert [r["task_id"] for r in left] == ["hello-world"]
    refitted = json.loads(cli_run("difficulty", "--json").stdout)
    assert sorted(r["task_id"] for r in refitted) == ["fix-permissions", "nginx-request-logging"]


def test_errors_a_user_can_fix_reach_the_cli_through_one_base_unwrapped(tmp_path):
    """Every library error a user can fix derives from `CurriculabError`, which the command group
    prints as `Error: <cause and fix>`; so no command re-wraps one by hand."""
    import re

    from click.testing import CliRunner

    from curriculab.analysis.store import StoreError
    from curriculab.cli import cli
    from curriculab.planner.config import ConfigError
    from curriculab.planner.evidence import PlanError
    from curriculab.planner.portfolio import SettingsError
    from curriculab.taxonomy.errors import TaxonomyError
    from curriculab.training.models import TrainError
    from curriculab.training.problems import ProblemError
    from curriculab.training.terminal.suite import SuiteError
    from curriculab.training.terminal.task import TaskError
    from curriculab.trajectory.errors import CurriculabError, InputError

    fixable = (StoreError, ConfigError, PlanError, SettingsError, TaxonomyError, TrainError, ProblemError)
    fixable += (SuiteError, TaskError, InputError)
    assert all(issubclass(error, CurriculabError) for error in fixable)
    names = "|".join([error.__name__ for error in fixable] + ["ValueError"])  # nor a broad ValueError
    wrap = re.compile(rf"except \(?[\w., ]*\b({names})\b[\w., ]*\)? as exc:\s*\n\s*raise CliError\(str\(exc\)\)")
    commands = Path(__file__).parents[1] / "curriculab" / "commands"
    wrapped = [f"{p.name}: {m[0]}" for p in commands.glob("*.py") for m in wrap.finditer(p.read_text())]
    assert wrapped == []
    result = CliRunner().invoke(cli, ["plan", "diff", "nope", "nada", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 1 and result.output.startswith("Error: ") and "unexpected" not in result.output
