"""The one shell reading (tree-sitter-bash) every coder uses: commands in the order they run with
their control, redirections as writes, what each command edits and whether it checks."""

from curriculab.taxonomy.coders.environment import verified_after_last_edit
from curriculab.trajectory.actions import normalise_shell
from curriculab.trajectory.shell import edits, is_check, read_commands, read_units


def _reading(text: str) -> list[tuple[tuple[str, ...], str, tuple[str, ...]]]:
    return [(c.words, c.control, c.within) for c in read_commands(text)]


def test_control_constructs_give_their_commands_in_order_with_how_each_is_reached():
    text = (
        "cd /app && if pytest -q; then echo ok; else make fix; fi; n=$((1+2)); "
        "case $mode in fast) ls;; *) ls -la;; esac\n[[ -f out.txt ]] || touch out.txt"
    )
    assert _reading(text) == [
        (("cd", "/app"), "", ()),
        (("pytest", "-q"), "&&", ("if-condition",)),
        (("echo", "ok"), ";", ("if-body",)),
        (("make", "fix"), ";", ("if-body",)),
        (("n=$((1+2))",), ";", ()),
        (("ls",), ";", ("case",)),
        (("ls", "-la"), ";", ("case",)),
        (("[[", "-f", "out.txt", "]]"), ";", ()),
        (("touch", "out.txt"), "||", ()),
    ]
    assert read_commands("true || pytest")[1].conditional and not read_commands("pytest")[0].conditional


def test_pipes_subshells_loops_and_substitutions():
    assert _reading("(cd app && make) | tee build.log") == [
        (("cd", "app"), "", ("subshell",)),
        (("make",), "&&", ("subshell",)),
        (("tee", "build.log"), "|", ()),
    ]
    assert _reading("for f in *.py; do python3 $f; done") == [(("python3", "$f"), ";", ("loop",))]
    # the substitution runs first, and is no step of its own: `cat` of a file the shell names
    assert _reading('cat "$(ls out | head -1)"')[0] == (("ls", "out"), "", ("substitution",))
    assert [(c.action, c.path) for c in normalise_shell('cat "$(ls out | head -1)"')] == [("read", None)]


def test_redirections_are_writes_and_reads_never_operands():
    grep, head = read_commands("grep -rn TODO src 2>/dev/null | head -5 > hits.txt")
    assert grep.words == ("grep", "-rn", "TODO", "src") and grep.writes == ()
    assert head.writes == ("hits.txt",)
    (sort,) = read_commands("sort < names.txt >> sorted.txt 2>&1")
    assert sort.reads == ("names.txt",) and sort.writes == ("sorted.txt",)
    # a redirection after a list belongs to its last command, as bash binds it
    assert [c.writes for c in read_commands("[[ -f x ]] && cat x > y")] == [(), ("y",)]


def test_what_each_command_edits():
    cases = {
        "sed -i 's/a/b/' src/app.py": ["src/app.py"],
        "echo x | tee -a notes.txt": ["notes.txt"],
        "cp a.py b.py": ["b.py"],
        "mv old.py new.py": ["new.py"],
        "patch -p1 < fix.diff": ["?"],
        "git apply fix.diff": ["?"],
        "python3 -c \"open('out.csv', 'w').write('a,b')\"": ["out.csv"],
        "python3 -c \"from pathlib import Path; Path('cfg.json').write_text('{}')\"": ["cfg.json"],
        'sqlite3 app.db "UPDATE users SET name = 1"': ["app.db"],
        'sqlite3 app.db "SELECT * FROM users"': [],
        "python3 -c \"print(open('data.txt').read())\"": [],
        "cat > app.py <<'EOF'\nprint(1)\nEOF": ["app.py"],
        "rm -f $tmp": ["$tmp"],
    }
    for text, expected in cases.items():
        assert [p for c in read_commands(text) for p in edits(c)] == expected, text


def test_a_here_doc_keeps_its_body_and_what_its_line_goes_on_to_run_is_its_own_command():
    units = read_units("cat > a.py << 'EOF' && python3 a.py\nx = 1; y = 2\nEOF\necho done")
    assert [u.text for u in units] == ["cat > a.py << 'EOF'\nx = 1; y = 2\nEOF", "python3 a.py", "echo done"]
    assert [c.control for u in units for c in u.commands] == ["", "&&", ";"]
    # the body is no command: `x = 1` inside it runs nothing
    assert [c.words[0] for c in read_commands("cat <<EOF > f\nrm -rf /\nEOF")] == ["cat"]


def test_checks_are_test_runners_or_running_what_was_changed():
    changed = {"app.py", "bin/greet.sh"}
    checks = ["pytest -q", "python3 -m pytest", "npm test", "python3 app.py", "./bin/greet.sh", "bash run_tests.sh"]
    checks += ['python3 -c "import app"', "timeout 30 pytest -q", "sudo -E python3 -m unittest"]
    for text in checks:
        assert is_check(read_commands(text)[0].argv, changed), text
    for text in ["pytest --help", "python3 other.py", "ls", "cat app.py", "make build"]:
        assert not is_check(read_commands(text)[0].argv, changed), text


def test_the_environment_rubric_reads_checks_inside_control_constructs():
    class Command:
        def __init__(self, command, changed=()):
            self.command, self.changed, self.exit_code, self.executed = command, changed, 0, None

    edited = Command("sed -i 's/a/b/' app.py", ("app.py",))
    assert verified_after_last_edit([edited, Command("if pytest -q; then echo ok; fi")])
    assert verified_after_last_edit([edited, Command("cd /app && (pytest -q 2>&1 | tail -3)")])
    assert not verified_after_last_edit([edited, Command("ls && cat notes.md")])


def test_what_an_episode_saw_a_call_change_is_an_edit_of_its_last_writer():
    from curriculab.trajectory.actions import with_observed_changes

    calls = normalise_shell("cd /app\nsed -i 's|^SOURCE=.*|SOURCE=/app/data|' backup.conf\n./backup.sh")
    changed = ["/app/backup.conf", "/app/backups/latest/users.csv", "/app/__pycache__/x.pyc"]
    # the backups are the script's doing: the run that wrote them is a change, as the environment counts it
    assert [(c.action, c.path) for c in with_observed_changes(calls, changed)] == [
        ("run", None),
        ("edit", "backup.conf"),
        ("edit", "/app/backups/latest/users.csv"),
    ]
    # a changed program run is a check even where it writes (its output is what it checks)
    calls = normalise_shell("python3 app.py")
    assert with_observed_changes(calls, ["/app/out.txt"], {"/app/app.py", "/app/out.txt"}) == calls
    # what an edit of the call names was that edit's: nothing to attribute
    calls = normalise_shell("echo 1 > out.txt && ls")
    assert with_observed_changes(calls, ["/app/out.txt"]) == calls


def test_what_a_line_may_write_none_named_files_or_anything():
    from curriculab.trajectory.shell import line_writes

    # looking around, checks and listings write nothing (caches a check leaves are not changes)
    for line in (
        "ls -la; git status",
        "cat a.py | grep x",
        "jar tf lib.jar",
        "python -m pytest -q",
        "sed -n 1,9p f",
        "find . -name '*.py'",
        "ruff check src",
        "cd /app",
        "export X=1",
    ):
        assert line_writes(line) == (), line
    # what a command names or is known to produce
    assert line_writes("javac Main.java") == ("*.class",)
    assert line_writes("javac -d out Main.java") == ("out/*",)
    assert line_writes("gcc -o prog main.c && ls") == ("prog",)
    assert line_writes("sed -i 's/a/b/' f.py; echo done > log.txt") == ("f.py", "log.txt")
    # a program, a build, an install, a fixer may write anything
    for line in (
        "python gen.py",
        "make",
        "pip install x",
        "ruff format .",
        "find . -delete",
        "ls; ./run.sh",
        "git apply fix.patch",
        "source venv/bin/activate",
    ):
        assert line_writes(line) is None, line


def test_a_retry_is_keyed_by_what_a_line_runs_whatever_looks_around_it():
    from curriculab.trajectory.shell import environment_change, retry_key

    assert (
        retry_key("ls; jar tf lib.jar | head -3; javac Main.java") == retry_key("javac Main.java") == "javac Main.java"
    )
    assert retry_key("timeout 60 python -m pytest -q | tail -5") == retry_key("python -m pytest -q")
    assert retry_key("javac -cp lib Main.java") != retry_key("javac Main.java")  # other arguments: another attempt
    assert retry_key("echo a > x.txt") != retry_key("echo a > y.txt")
    assert retry_key("ls src") == "ls src"  # a line that only looks around is keyed by all of it
    # the shell's own state: the same `cd` again changes nothing more
    assert environment_change("cd /testbed && python x.py") == "cd /testbed"
    assert environment_change("export PYTHONPATH=src; pytest") == "PYTHONPATH=src"
    assert environment_change("python x.py") is None


def test_only_a_system_test_runner_that_reported_tests_counts_as_tests_run():
    from curriculab.trajectory.shell import reported_tests, test_runner

    runners = {
        "pytest -q": "pytest",
        "/usr/bin/python3 -m pytest tests": "pytest",
        "python3 -m unittest discover -s tests": "unittest",
        "python3 -m doctest -v stats.py": "doctest",
        "make test": "make",
        "npm test": "npm",
        "cargo test": "cargo",
        "go test ./...": "go",
        "tox": "tox",
        # no system runner: the agent's own programs, whatever their name or link
        "bash run_tests.sh": None,
        "python3 stats.py": None,
        "/tmp/test": None,
        ".venv/bin/pytest": None,
        "pytest --help": None,
        "make build": None,
    }
    assert {line: test_runner(line.split()) for line in runners} == runners
    assert reported_tests("pytest", 0, "3 passed in 0.01s")
    assert reported_tests("pytest", 1, "1 failed, 2 passed in 0.02s")  # tests ran and failed: a check
    assert not reported_tests("pytest", 5, "no tests ran in 0.01s")
    assert not reported_tests("pytest", 1, "/usr/bin/python3: No module named pytest")
    assert reported_tests("unittest", 1, "F\n---\nRan 1 test in 0.001s\n\nFAILED (failures=1)")
    assert not reported_tests("unittest", 0, "\n---\nRan 0 tests in 0.000s\n\nOK")
    # a module unittest could not import is counted as a test: `python3 -m unittest nosuchmodule` ran none
    failed_import = (
        "ERROR: {0} (unittest.loader._FailedTest.{0})\n---\nImportError: Failed to import test module: {0}\n"
    )
    assert not reported_tests("unittest", 1, failed_import.format("nosuch") + "---\nRan 1 test in 0.000s\n\nFAILED")
    both = failed_import.format("a") + failed_import.format("b") + "---\nRan 3 tests in 0.001s\n\nFAILED (errors=2)"
    assert reported_tests("unittest", 1, both)  # one test ran beside two modules that would not import
    assert not reported_tests("make", 2, "make: *** No rule to make target 'test'.  Stop.")
    assert not reported_tests("make", 2, "make: *** No targets specified and no makefile found.  Stop.")
    assert reported_tests("make", 2, "make: *** [Makefile:2: test] Error 1")
    assert not reported_tests("npm", 1, 'npm ERR! Missing script: "test"')
    assert not reported_tests("pytest", None, "") and not reported_tests("pytest", 127, "")
    assert not reported_tests("pytest", -9, "1 passed")  # killed
