"""Agentic training: the tool-calling chat format, the environment's process codes, plans made
over a task suite from them, and the two-round loop (agentic GRPO with TRL on the tiny model)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from curriculab.taxonomy.coders.environment import Observed, Replay, code_episode
from curriculab.training.terminal.chat import RESPONSE_TEMPLATE, TOOL_CHAT_TEMPLATE, enable_tool_calling

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)"
)


def _status(commands, passed_all=False):
    return {code: finding.status for code, finding in code_episode(commands, passed_all).items()}


def test_environment_codes_follow_from_commands_exit_codes_and_files_changed():
    edit = Observed("sed -i s/a/b/ app.py", 0, "", ("/app/app.py",))
    check = Observed("python3 -m pytest", 0, "1 passed")
    assert _status([edit]) == {
        "skipped_verification": "present",
        "premature_stop": "absent",
        "no_plan_revision": "absent",
        "redundant_rework": "absent",
    }
    assert _status([edit, check])["skipped_verification"] == "absent"
    assert _status([check, edit])["skipped_verification"] == "present"
    # looked around, changed nothing, milestones unmet: stopped early; nothing to verify
    looked = [Observed("ls", 0, "app.py"), Observed("cat app.py", 0, "x = 1")]
    assert _status(looked)["premature_stop"] == "present"
    assert _status(looked)["skipped_verification"] == "not_applicable"
    assert _status(looked, passed_all=None)["premature_stop"] == "not_applicable"
    timed_out = [Observed("sleep 999", 124, "[the agent's time for this step (5 s) is over: nothing ran]", (), True)]
    assert _status(timed_out)["premature_stop"] == "not_applicable"
    # the same failing command again with nothing changed in between; a fix in between is a revision
    failing = Observed("python3 run.py", 1, "Traceback")
    assert _status([failing, failing])["no_plan_revision"] == "present"
    assert _status([failing, edit, failing])["no_plan_revision"] == "absent"
    assert _status([Observed("grep x f", 1, ""), Observed("grep x f", 1, "")])["no_plan_revision"] == "absent"
    # a re-read of unchanged output is rework; after an edit it is not
    assert _status([looked[1], looked[1]])["redundant_rework"] == "present"
    assert _status([looked[1], edit, looked[1]])["redundant_rework"] == "absent"


def test_a_check_is_credited_on_the_harness_replay_where_one_was_recorded_else_on_what_the_runner_reported():
    edit = Observed("sed -i s/a/b/ app.py", 0, "", ("/app/app.py",))

    def skipped(commands, replay=None):
        return code_episode(commands, False, replay)["skipped_verification"].status

    # no replay recorded (an episode stored before issue 67): the record's own status and output decide
    assert skipped([edit, Observed("python3 -m pytest", 0, "3 passed in 0.1s")]) == "absent"
    for status, output in [(1, "No module named pytest"), (5, "no tests ran in 0.01s"), (0, "")]:
        assert skipped([edit, Observed("python3 -m pytest", status, output)]) == "present", output
    assert skipped([edit, Observed("python3 -m unittest", 5, "Ran 0 tests in 0.000s\n\nNO TESTS RAN")]) == "present"
    assert skipped([edit, Observed("make test", 2, "make: *** No rule to make target 'test'.  Stop.")]) == "present"
    assert skipped([edit, Observed("python3 app.py", 0, "ok")]) == "absent"  # the taxonomy's run of the program
    # the harness judged the episode: its replay decides, whatever the record's output claims
    forged = Observed("pytest", 0, "3 passed in 0.1s")
    ran = Replay(("pytest",), "pytest", 0, True)
    assert skipped([edit, forged], ran) == "absent"
    assert skipped([edit, forged], Replay(("pytest",), "pytest", 5, False)) == "present"
    assert skipped([edit, Observed("/tmp/bin/pytest", 0, "1 passed")], Replay()) == "present"  # a shim
    assert skipped([edit], Replay()) == "present"
    # a run of a program or a read: the taxonomy counts it, no harness can confirm it
    for unconfirmed in ("python3 app.py", "cat app.py", "/tmp/test", "bash run_tests.sh"):
        assert skipped([edit, Observed(unconfirmed, 0, "")], Replay()) == "not_applicable", unconfirmed
    assert skipped([edit, Observed("cat app.py", 0, ""), forged], ran) == "absent"


def test_the_tool_format_renders_calls_parses_them_back_and_keeps_prefixes(tmp_path):
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema
    from trl.chat_template_utils import is_chat_template_prefix_preserving, supports_tool_calling

    from curriculab.training.models import tiny_agent_model_dir
    from curriculab.training.terminal.environment import TerminalEnvironment

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_agent_model_dir(tmp_path)))
    assert tokenizer.chat_template == TOOL_CHAT_TEMPLATE and tokenizer.response_template == RESPONSE_TEMPLATE
    assert tokenizer.eos_token == "<|im_end|>"
    assert supports_tool_calling(tokenizer) and is_chat_template_prefix_preserving(tokenizer)
    tools = [get_json_schema(TerminalEnvironment.bash)]
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Fix it."}], tools=tools, tokenize=False, add_generation_prompt=True
    )
    assert '"name": "bash"' in prompt and prompt.endswith("<|im_start|>assistant\n")
    said = 'Look first.<tool_call>{"name": "bash", "arguments": {"command": "ls -la"}}</tool_call><|im_end|>'
    assert tokenizer.parse_response(said, prefix=prompt) == {
        "role": "assistant",
        "content": "Look first.",
        "tool_calls": [{"type": "function", "function": {"name": "bash", "arguments": {"command": "ls -la"}}}],
    }
    assert tokenizer.parse_response("Done.<|im_end|>", prefix=prompt) == {"role": "assistant", "content": "Done."}
    # a model whose own template drops tool calls gets this one
    plain = AutoTokenizer.from_pretrained(str(tiny_agent_model_dir(tmp_path)))
    plain.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    assert not supports_tool_calling(plain) and supports_tool_calling(enable_tool_calling(plain))


@needs_bwrap
def test_demonstrations_are_real_episodes_half_of_them_checking(tmp_path):
    from curriculab.training.terminal import load_task
    from curriculab.training.terminal.suite import BUILTIN_SUITE
    from curriculab.training.terminal.warmup import demonstrations, verification_share

    tasks = [load_task(BUILTIN_SUITE / name) for name in ("fix-median", "greet-script", "count-error-lines")]
    demos = demonstrations(tasks)
    assert [d.task_id for d in demos] == ["count-error-lines", "fix-median", "greet-script"]
    assert all(d.reward == 1.0 for d in demos)
    assert [d.checked for d in demos] == [True, False, True] and verification_share(demos) == pytest.approx(2 / 3)
    first = demos[0].messages
    assert [m["role"] for m in first] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert first[1]["tool_calls"][0]["function"]["arguments"] == {"command": "ls"}
    assert first[2]["content"].startswith("[exit code 0]\n")


@needs_bwrap
def test_a_multi_step_tasks_demonstration_does_every_step_it_was_told_and_passes_them_all():
    from curriculab.training.terminal import load_task
    from curriculab.training.terminal.suite import BUILTIN_SUITE
    from curriculab.training.terminal.warmup import demonstrations, solution_command

    task = load_task(BUILTIN_SUITE / "package-word-tool")
    (demo,) = demonstrations([task])
    assert demo.messages[0]["content"] == task.agent_instruction and "Step 3 of 3" in task.agent_instruction
    called = [m["tool_calls"][0]["function"]["arguments"]["command"] for m in demo.messages if m.get("tool_calls")]
    steps = [solution_command(task, i) for i in range(3)]
    assert called[:4] == ["ls", *steps] and len(set(steps)) == 3
    assert demo.checked and len(called) == 5  # the first demonstration checks, after the last step
    assert demo.reward == 1.0 and all(c.step == 0 for c in demo.commands)  # all in one turn, judged at the end


@needs_bwrap
def test_the_warm_up_shows_progress_on_stderr_so_a_json_command_prints_only_json(tmp_path, capfd):
    # `curriculab demo --json` warms the agent up the first time: nothing of SFT's may reach stdout
    from curriculab.training.models import tiny_agent_model_dir
    from curriculab.training.terminal import load_task
    from curriculab.training.terminal.suite import BUILTIN_SUITE
    from curriculab.training.terminal.warmup import demonstrations, speaks_tool_format, warm_up

    demos = demonstrations([load_task(BUILTIN_SUITE / "greet-script")])
    capfd.readouterr()
    out = warm_up(str(tiny_agent_model_dir(tmp_path)), demos, tmp_path / "warmed", epochs=5)
    printed = capfd.readouterr()
    assert printed.out == "" and "SFT warm-up: 100%" in printed.err  # its progress goes to stderr
    assert speaks_tool_format(out) and (out / "model.safetensors").is_file()


MEDIAN_TEST = """import unittest
from stats import median


class Median(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)
"""


@needs_bwrap
def test_environment_coder_codes_stored_episodes_and_rules_agreement_is_measured(tmp_path, store):
    from curriculab.analysis.coding import coder_agreement, run_environment_coder, run_rule_coders
    from curriculab.analysis.ingest import ingest
    from curriculab.taxonomy.coders.environment import CODES
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.trial import write_trial

    plays = {
        "looked": ["ls", "cat stats.py", "cat stats.py"],
        "edited": ["sed -i 's/2/3/' stats.py"],
        # a test of its own, run by the system's runner: the harness's replay reports it ran
        "checked": [
            "sed -i 's/2/3/' stats.py",
            f"printf {shlex.quote(MEDIAN_TEST)} > test_median.py",
            "python3 -m unittest test_median",
        ],
        "silent": [],
    }
    with TerminalEnvironment() as environment:
        for name, commands in plays.items():
            environment.reset(task_id="fix-median")
            for command in commands:
                environment.bash(command)
            write_trial(tmp_path / "job", name, environment.task, environment.result, model="m")
    ingest(store, [tmp_path / "job"])
    report = run_environment_coder(store)
    assert report.trajectories == 4  # the one that ran nothing too: its agent's trials are all observed
    rows = store.query(
        "select trajectory_id, code, status from coding_status where coder = 'environment' order by 1, 2"
    ).rows
    status = {(t, c): s for t, c, s in rows}
    assert status[("looked", "premature_stop")] == "present" and status[("looked", "redundant_rework")] == "present"
    assert status[("silent", "premature_stop")] == "present"
    assert status[("edited", "skipped_verification")] == "present"
    assert status[("checked", "skipped_verification")] == "absent"
    replay = store.query(
        "select json_extract(raw, '$.observed.check_run') from steps where trajectory_id = 'checked' "
        "and json_exists(raw, '$.observed.check_run')"
    ).rows
    assert [json.loads(r)["tests_ran"] for (r,) in replay] == [True]
    method = store.query("select distinct method from code_reliability where coder = 'environment'").rows
    assert method == [("environment",)]
    run_rule_coders(store)
    agreement = {a.code: a for a in coder_agreement(store, "rules", "environment", CODES)}
    assert agreement["skipped_verification"].n == 2 and agreement["skipped_verification"].agreement == 1.0
    assert agreement["premature_stop"].n >= 3


@needs_bwrap
def test_a_task_plan_acts_on_exact_environment_codes_and_switches_on_the_verification_term(tmp_path, store):
    from curriculab.analysis.coding import run_environment_coder
    from curriculab.analysis.ingest import ingest
    from curriculab.planner.tasks import build_task_plan
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.suite import task_directories
    from curriculab.training.terminal.trial import write_trial

    paths = task_directories("builtin")
    ingest(store, [str(p) for p in paths.values()], "tasks")
    before = build_task_plan(store, "agent-x", "builtin", sorted(paths), held_out=["greet-script"])
    assert before.reward_functions == ["milestone_reward"]
    assert len({e.copies for e in before.task_mix}) == 1 and "greet-script" not in {
        e.problem_id for e in before.task_mix
    }
    with TerminalEnvironment() as environment:  # eight edits, none checked, none passing
        for index in range(8):
            environment.reset(task_id="fix-median")
            environment.bash(f"echo '# {index}' >> stats.py")
            write_trial(tmp_path / "job", f"edit-{index}", environment.task, environment.result, model="agent-x")
    ingest(store, [tmp_path / "job"])
    run_environment_coder(store)
    after = build_task_plan(store, "agent-x", "builtin", sorted(paths), held_out=["greet-script"])
    assert after.reward_functions == ["milestone_reward", "verification_reward"]
    assert 0 < after.reward_weights[1] <= 0.5
    cited = [r for r in after.reasons if r.startswith("skipped_verification (environment)")]
    assert cited and "exact (environment)" in cited[0] and "100.0% of 8 judged failures" in cited[0]
    copies = {e.problem_id: e.copies for e in after.task_mix}
    # an atomic task built to provoke it is practised more than a decoy task; the task failed 8 of 8
    # times carries little signal (p(1 − p) of its smoothed pass rate) and is practised less
    assert copies["count-error-lines"] > copies["decoy-old-config"] > copies["fix-median"]


@pytest.mark.slow
@needs_bwrap
def test_two_round_agentic_loop_lands_coded_episodes_and_round_two_acts_on_round_one(
    tmp_path, cli_run, db_path, monkeypatch
):
    out = tmp_path / "loop"
    assert cli_run("tasks", "import", "builtin").exit_code == 0
    done = cli_run(
        "loop",
        "--model",
        "tiny-agent",
        "--tasks",
        "builtin",
        "--held-out",
        "greet-script",
        "--rounds",
        "2",
        "--steps-per-round",
        "2",
        "--out",
        str(out),
    )
    assert done.exit_code == 0, done.output
    rounds = json.loads((out / "loop.json").read_text())
    assert [r["round"] for r in rounds] == [1, 2] and all(r["episodes"] == 8 for r in rounds)
    rows = json.loads(
        cli_run(
            "query",
            "select t.trajectory_id, t.milestones_total, (select count(*) from steps s where s.trajectory_id = "
            "t.trajectory_id) as steps, (select count(*) from test_results r where r.trajectory_id = t.trajectory_id "
            "and r.milestone_idx is not null) as milestone_results, (select list(distinct coder order by coder) from "
            "coding_status c where c.trajectory_id = t.trajectory_id) as coders from trajectories t "
            "where t.model = 'tiny-agent' order by 1",
            "--json",
        ).stdout
    )
    assert len(rows) == 16
    for row in rows:
        assert (
            row["steps"] >= 2 and row["milestones_total"] >= 2 and row["milestone_results"] == row["milestones_total"]
        )
        assert {"environment", "rules", "verifier"} <= set(row["coders"])
    first, second = rounds
    cites = [r for r in second["code_reasons"] if "(environment)" in r and "judged failures" in r]
    assert cites, second["code_reasons"]
    assert first["task_mix"] != second["task_mix"] or first["reward_functions"] != second["reward_functions"]
    assert second["held_out"]["episodes"] == 1 and "greet-script" not in second["task_mix"]
    evaluated = json.loads(
        cli_run("query", "select count(*) as n from trajectories where model = 'tiny-agent@eval'", "--json").stdout
    )
    assert evaluated == [{"n": 2}]
    plan_yaml = (out / "round2" / "plan.yaml").read_text()
    assert "tasks: builtin" in plan_yaml and "milestone_reward" in plan_yaml
    _the_store_and_the_dashboard_show_the_agentic_runs(db_path, monkeypatch, rounds)


def _the_store_and_the_dashboard_show_the_agentic_runs(db_path, monkeypatch, rounds):
    from streamlit.testing.v1 import AppTest

    from curriculab.analysis import queries
    from curriculab.analysis.store import Store
    from curriculab.dashboard import common

    run_ids = [r["run_id"] for r in rounds]
    with Store(db_path, read_only=True) as store:
        runs = queries.training_runs.records(store)
        assert [(r["run_id"], r["agent"], r["rollouts"], r["steps"]) for r in runs] == [
            (run, "curriculab-terminal", 8, 2) for run in run_ids
        ]
        curves = queries.training_curves(store, run_id=run_ids[0])
        environment_s = curves[curves["name"] == "time/environment_s"]["value"]
        assert len(environment_s) == 2 and (environment_s > 0).all()  # each step's episodes, timed
        assert {"reward", "time/generation_s", "time/train_s"} <= set(curves["name"])
        codes = queries.rollout_codes.records(store)
        assert {r["coder"] for r in codes} >= {"environment"} and {r["run_id"] for r in codes} <= set(run_ids)
        # training episodes stay out of evaluation views; the held-out episodes are evaluation
        evaluation = queries.trajectory_list(store, scope=queries.Scope())
        training = queries.trajectory_list(store, scope=queries.Scope(kind="training"))
        assert set(evaluation["system"]) == {"curriculab-terminal · tiny-agent@eval"} and len(evaluation) == 2
        assert set(training["run_id"]) == set(run_ids) and len(training) == 16
    monkeypatch.setenv("CURRICULAB_DB", str(db_path))
    common._cached.clear()
    common._LAST_GOOD.clear()
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60).run()
    at = at.switch_page("dashboard/views/training.py").run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    charts = " ".join(c.proto.spec for c in at.get("plotly_chart"))
    assert '"name":"environment"' in charts and "Rollout failure codes per run" in charts
    episodes = next(d.value for d in at.dataframe if "trajectory_id" in d.value.columns)
    assert len(episodes) == 8 and set(episodes["run_id"]) == {run_ids[-1]}  # the last run's episodes
    assert at.selectbox(key="training_episode").value == episodes["trajectory_id"].iloc[0]
    assert any("Open in the trajectory viewer" in m.value for m in at.markdown)
    assert any(s.value.endswith(f"attempt `{episodes['trajectory_id'].iloc[0]}`") for s in at.subheader)


def test_bad_task_plan_arguments_say_what_to_give(cli_run):
    assert cli_run("tasks", "import", "builtin").exit_code == 0
    nowhere = cli_run("plan", "--model", "m", "--tasks", "/no/such/suite")
    assert nowhere.exit_code != 0
    assert "Error: suite '/no/such/suite' holds no task directories (folders with task.toml): give builtin" in (
        nowhere.output
    )
    alone = cli_run("plan", "--model", "m", "--held-out", "greet-script")
    assert alone.exit_code != 0 and "--held-out keeps tasks out of a task plan: give --tasks SUITE too" in alone.output
    unknown = cli_run("plan", "--model", "m", "--tasks", "builtin", "--held-out", "nope")
    assert unknown.exit_code != 0 and "--held-out: nope not in the suite builtin" in unknown.output
    looping = cli_run("loop", "--model", "m", "--held-out", "greet-script")
    assert looping.exit_code != 0 and "--held-out names tasks of a suite: give --tasks SUITE too" in looping.output
    stored = json.loads(cli_run("query", "select count(*) as n from plans", "--json").stdout)
    assert stored == [{"n": 0}]  # nothing half-made was kept


def test_a_task_plan_naming_tasks_outside_its_suite_or_code_rewards_is_refused_before_any_model_loads(
    tmp_path, cli_run
):
    import pyarrow as pa
    import pyarrow.parquet as pq
    import yaml

    assert cli_run("tasks", "import", "builtin").exit_code == 0
    plan = tmp_path / "plan.yaml"
    assert cli_run("plan", "--model", "m", "--tasks", "builtin", "-o", str(plan)).exit_code == 0
    pq.write_table(pa.table({"task_id": ["fix-median", "no-such-task"]}), plan.with_suffix(".parquet"))
    done = cli_run("train", "--config", str(plan), "--max-steps", "1", "--output-dir", str(tmp_path / "run"))
    assert done.exit_code != 0 and "dataset: tasks ['no-such-task'] are not in the suite 'builtin'" in done.output
    pq.write_table(pa.table({"task_id": ["fix-median"]}), plan.with_suffix(".parquet"))
    doc = yaml.safe_load(plan.read_text())
    doc["reward"] = {"functions": ["tarot_reward"], "weights": [1.0]}
    plan.write_text(yaml.safe_dump(doc))
    done = cli_run("train", "--config", str(plan), "--max-steps", "1", "--output-dir", str(tmp_path / "run"))
    assert done.exit_code != 0
    assert "reward.functions: ['tarot_reward'] are not terminal rewards; use milestone_reward" in done.output
    assert not (tmp_path / "run").exists()


def test_without_bubblewrap_training_episodes_are_refused_unless_unsandboxed_is_asked_for_as_root(
    tmp_path, cli_run, monkeypatch
):
    from curriculab.training import sandbox
    from curriculab.training.agentic import episode_backend
    from curriculab.training.models import TrainError

    monkeypatch.setattr(sandbox, "detect_backend", lambda: "rlimits")  # as on a GPU box
    assert cli_run("tasks", "import", "builtin").exit_code == 0
    plan = tmp_path / "plan.yaml"
    assert cli_run("plan", "--model", "m", "--tasks", "builtin", "-o", str(plan)).exit_code == 0
    done = cli_run("train", "--config", str(plan), "--max-steps", "1", "--output-dir", str(tmp_path / "run"))
    assert done.exit_code != 0
    assert (
        "terminal episodes need bubblewrap, which does not work here (scripts/setup.sh installs it); "
        "pass --allow-unsandboxed to run them under namespaces and chroot (root; the same seccomp filter, weaker mounts)"
    ) in done.output
    assert not (tmp_path / "run").exists()  # refused before the model or the run folder
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert episode_backend(allow_unsandboxed=True) == "namespaces"
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(TrainError, match="episodes \\(namespaces and chroot\\) need root"):
        episode_backend(allow_unsandboxed=True)
    monkeypatch.setattr(sandbox, "detect_backend", lambda: "bwrap")
    assert episode_backend(allow_unsandboxed=False) == "bwrap"


def test_a_rollouts_turns_pair_each_bash_call_the_environment_ran_with_its_command(tmp_path):
    from transformers import AutoTokenizer

    from curriculab.training.models import tiny_agent_model_dir
    from curriculab.training.terminal.episode_log import turns_of

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_agent_model_dir(tmp_path)))

    def call(arguments):
        return {"type": "function", "function": {"name": "bash", "arguments": arguments}}

    messages = [
        {"role": "assistant", "content": "", "tool_calls": [call({"command": "ls"}), call({"cmd": "pwd"})]},
        {"role": "tool", "name": "bash", "content": "[exit code 0]\nstats.py"},
        {"role": "assistant", "content": "Done."},
    ]
    turns = turns_of(messages, tokenizer)
    # TRL runs bash(**arguments): the call with `cmd` failed before reaching the episode
    assert [(t.message, t.commands) for t in turns] == [(None, [0]), ("Done.", [])]
    assert all(t.completion_tokens and t.completion_tokens > 0 for t in turns)


def test_a_multi_step_task_tells_the_agent_every_step_and_one_episode_can_pass_them_all(tmp_path):
    from curriculab.training.terminal.environment import TerminalEnvironment
    from curriculab.training.terminal.suite import BUILTIN_SUITE
    from curriculab.training.terminal.task import load_task
    from curriculab.training.terminal.trial import write_trial

    task = load_task(BUILTIN_SUITE / "fix-backup-script")
    assert len(task.steps) >= 2
    with TerminalEnvironment() as environment:
        told = environment.reset(task_id=task.task_id)
        assert told == task.agent_instruction
        for number, step in enumerate(task.steps, start=1):  # each step's whole instruction, in order
            assert f"Step {number} of {len(task.steps)} ({step.name}):\n{step.instruction.strip()}" in told
        for step in task.steps:  # an agent doing every step it was told, in the one episode TRL gives it
            script = (step.solution_dir / "solve.sh").read_text()
            assert environment.bash(f"bash <<'SOLVE'\n{script}\nSOLVE").startswith("[exit code 0]")
        result = environment.result
        assert len(result.steps) == len(task.steps)
        assert result.milestones and all(v >= 1 for v in result.milestones.values()), result.milestones
        trial = write_trial(tmp_path / "job", "t-0", environment.task, result, model="m", told_at_once=True)
    steps = json.loads((trial / "agent" / "trajectory.json").read_text())["steps"]
    assert steps[0]["message"] == told and [s["source"] for s in steps].count("user") == 1


def test_resuming_an_agentic_run_drops_the_episodes_and_metrics_written_after_its_checkpoint(tmp_path):
    from curriculab.training.callback import drop_metrics_after
    from curriculab.training.run import checkpoint_to_resume
    from curriculab.training.terminal.episode_log import EpisodeLog, trim_after

    run_id = "grpo-fe9c8ea0b141-s0-106e32"  # hyphens and digits of its own before the step
    log = EpisodeLog(tmp_path / "rollouts", run_id, "tiny-agent", tokenizer=None)
    for step, batch, index in [(1, 0, 0), (2, 0, 3), (2, 1, 0), (3, 0, 0), (12, 0, 1)]:
        (log.job / f"{run_id}-{step:05d}-{batch}-{index:02d}").mkdir(parents=True)
    (tmp_path / "checkpoint-2").mkdir()
    (tmp_path / "checkpoint-2" / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoint-3").mkdir()  # cut short by a kill: no trainer_state.json
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "metrics": {}}) + "\n" for s in (1, 2, 3)))

    checkpoint = checkpoint_to_resume(tmp_path, True)  # what train_agent does on --resume
    assert checkpoint == tmp_path / "checkpoint-2"
    trim_after(log, 2)
    drop_metrics_after(tmp_path / "metrics.jsonl", 2)
    assert sorted(p.name for p in log.job.iterdir()) == [
        f"{run_id}-00001-0-00",
        f"{run_id}-00002-0-03",
        f"{run_id}-00002-1-00",
    ]
    assert [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()] == [1, 2]
    assert not (tmp_path / "checkpoint-3").exists()


def test_a_task_plan_keeps_tasks_flagged_by_task_health_out_of_its_mix_until_checked(tmp_path, store):
    from curriculab.analysis.ingest import ingest
    from curriculab.planner.tasks import build_task_plan
    from curriculab.training.terminal.suite import task_directories
    from tests.conftest import leaderboard_with_a_broken_and_a_trivial_task

    paths = task_directories("builtin")
    ingest(store, [str(p) for p in paths.values()], "tasks")
    # three systems never solve fix-median and always solve count-error-lines, in 12 attempts each
    runs = leaderboard_with_a_broken_and_a_trivial_task(tmp_path, ("fix-median", "count-error-lines", "greet-script"))
    ingest(store, [runs], workers=1)
    plan = build_task_plan(store, "agent-x", "builtin", sorted(paths), held_out=["greet-script"])
    mixed = {e.problem_id for e in plan.task_mix}
    assert not mixed & {"fix-median", "count-error-lines"} and len(mixed) == len(paths) - 3
    said = next(r for r in plan.reasons if r.startswith("task health: 2 tasks kept out of the mix until checked"))
    assert "fix-median: never solved: possibly broken in 12 attempts by 3 systems" in said
    store.check_tasks(["fix-median"])
    again = build_task_plan(store, "agent-x", "builtin", sorted(paths), held_out=["greet-script"])
    assert "fix-median" in {e.problem_id for e in again.task_mix}
