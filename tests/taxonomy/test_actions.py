"""The action vocabulary every coder relies on: one question answered the same for all agents."""

import pytest

from curriculab.trajectory.actions import (
    classify_command,
    looks_truncated,
    normalise_shell,
    normalise_swe_agent_action,
    normalise_tool_call,
    split_commands,
    swe_agent_failed,
    swe_agent_open_file,
)
from curriculab.trajectory.shell import read_commands, read_units


def actions(calls):
    return [(c.action, c.path) for c in calls]


def test_keystrokes_with_several_commands_are_split_and_heredoc_kept_whole():
    keys = "cd /app && ls\ncat > a.py << 'EOF'\nx = 1; y = 2\nif x:\n\tpass\nEOF\npython -m pytest -q; echo done\n"
    commands = split_commands(keys)
    assert commands == [
        "cd /app",
        "ls",
        "cat > a.py << 'EOF'\nx = 1; y = 2\nif x:\n\tpass\nEOF",
        "python -m pytest -q",
        "echo done",
    ]
    assert actions(normalise_shell(keys)) == [
        ("run", None),
        ("run", None),
        ("edit", "a.py"),
        ("run", None),
        ("run", None),
    ]


@pytest.mark.parametrize(
    "command, expected",
    [
        ("cat src/app.py", ("read", "src/app.py")),
        ("head -n 20 README.md", ("read", "README.md")),
        ("sed -n '1,80p' lib/x.go", ("read", "lib/x.go")),
        ("grep -n 'def main' ./src/main.py", ("read", "src/main.py")),
        ("grep -rn TODO src", ("run", None)),
        ("sed -i 's/a/b/' src/app.py", ("edit", "src/app.py")),
        ("echo hi >> notes.txt", ("edit", "notes.txt")),
        ("printf 'x' > out/result.json", ("edit", "out/result.json")),
        ("python gen.py | tee report.txt", ("edit", "report.txt")),
        ("mv draft.py final.py", ("edit", "final.py")),
        ("cp a.cfg b.cfg", ("edit", "b.cfg")),
        ("rm -f build/tmp.o", ("edit", "build/tmp.o")),
        ("git apply fix.patch", ("edit", None)),
        ("patch -p1 < fix.diff", ("edit", None)),
        ("git checkout -- tests/test_x.py", ("edit", "tests/test_x.py")),
        ("perl -pi -e 's/x/y/' conf.ini", ("edit", "conf.ini")),
        ("python -m pytest tests 2>&1 | tail -5", ("run", None)),
        ("make test > /dev/null 2>&1", ("run", None)),
        ("cat out.log | grep ERROR", ("run", None)),
        ("timeout 30 cat big.log", ("read", "big.log")),
        ("C-c", ("run", None)),
    ],
)
def test_shell_commands_are_classified(command, expected):
    call = classify_command(command)
    assert (call.action, call.path) == expected


def test_quotes_and_operators_inside_strings_do_not_split():
    assert split_commands("echo 'a; b && c' && echo \"x || y\"") == ["echo 'a; b && c'", 'echo "x || y"']
    assert split_commands("make 2>&1 & wait") == ["make 2>&1", "wait"]


@pytest.mark.parametrize(
    "tool, args, expected",
    [
        ("bash_command", {"keystrokes": "cat a.py\npytest -q\n", "duration": 1}, [("read", "a.py"), ("run", None)]),
        ("bash_command", {"keystrokes": "", "duration": 10}, [(None, None)]),
        ("mark_task_complete", {}, [("complete", None)]),
        ("Bash", {"command": "npm test && cat out.txt"}, [("run", None), ("read", "out.txt")]),
        ("Read", {"file_path": "/app/x.py"}, [("read", "/app/x.py")]),
        ("Write", {"file_path": "/app/y.py", "content": "..."}, [("edit", "/app/y.py")]),
        ("Edit", {"file_path": "/app/z.py", "old_string": "a", "new_string": "b"}, [("edit", "/app/z.py")]),
        ("MultiEdit", {"file_path": "/app/z.py", "edits": []}, [("edit", "/app/z.py")]),
        ("exec_command", {"cmd": "sed -n '1,5p' a.c"}, [("read", "a.c")]),
        ("shell", {"command": ["bash", "-lc", "cat a.txt > b.txt"]}, [("edit", "b.txt")]),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: src/a.py\n*** Add File: src/b.py\n*** End Patch"},
            [("edit", "src/a.py"), ("edit", "src/b.py")],
        ),
        ("str_replace_editor", {"command": "view", "path": "/r/m.py"}, [("read", "/r/m.py")]),
        ("str_replace_editor", {"command": "create", "path": "/r/n.py"}, [("edit", "/r/n.py")]),
        ("TodoWrite", {"todos": []}, [("message", None)]),
        ("some_new_tool", {"x": 1}, [("other", None)]),  # effect unknown: neither a change nor a check
    ],
)
def test_tool_calls_of_every_agent_are_normalised(tool, args, expected):
    assert actions(normalise_tool_call(tool, args)) == expected


def test_swe_agent_actions_use_the_open_file():
    assert actions(normalise_swe_agent_action("open src/m.py 20", None)) == [("read", "src/m.py")]
    assert actions(normalise_swe_agent_action("scroll_down", "src/m.py")) == [("read", "src/m.py")]
    assert actions(normalise_swe_agent_action("edit 3:4\nx = 1\nend_of_edit", "src/m.py")) == [("edit", "src/m.py")]
    assert actions(normalise_swe_agent_action("create repro.py", None)) == [("edit", "repro.py")]
    assert actions(normalise_swe_agent_action("find_file m.py", None)) == [("read", None)]  # a search
    assert actions(normalise_swe_agent_action("search_dir Field src", None)) == [("read", "src")]
    assert actions(normalise_swe_agent_action("submit", "src/m.py")) == [("complete", None)]
    assert normalise_swe_agent_action("submit 'flag{x}'\n", None)[0].command == "submit 'flag{x}'"
    assert swe_agent_open_file("create repro.py\n", "src/m.py") == "repro.py"
    assert swe_agent_open_file("edit 1:1\nx\nend_of_edit", "repro.py") == "repro.py"
    # its tools' refusals fail any step kind; a viewed file's own error text does not
    assert swe_agent_failed("edit 1:1\nx(\nend_of_edit", "Your proposed edit has introduced new syntax error(s).")
    assert swe_agent_failed("open m.py", "[File: m.py (2 lines total)]\n1:raise ValueError('no')") is None
    assert (
        swe_agent_failed("python x.py", "Warning: _curses.error: setupterm: could not find terminfo database\nok")
        is False
    )
    assert actions(normalise_swe_agent_action("python repro.py && cat out.txt", None)) == [
        ("run", None),
        ("read", "out.txt"),
    ]


def test_truncation_markers_are_recognised_and_ordinary_text_is_not():
    assert looks_truncated("line\n[... output limited to 10000 bytes; 512 interior bytes omitted ...]")
    assert looks_truncated("<response clipped><NOTE>To save on context only part of this file has been shown")
    assert looks_truncated("...\n[... 4821 more bytes ...]")
    assert not looks_truncated("4 passed in 0.05s")
    assert not looks_truncated(None)


def test_any_text_reads_without_error_and_plain_words_read_as_written():
    """Keystrokes are often half a command (an open quote, a dangling `&&`): the reading never
    raises, and a line of plain words is one command of exactly those words."""
    import random

    alphabet = list("ab-./=~_$&;()*?{}[]`!") + [
        " ",
        "  ",
        "\t",
        "\n",
        "é",
        "'",
        '"',
        "\\",
        "#",
        "|",
        "<",
        ">",
        "2>",
        "&&",
        "<<",
    ]
    rng = random.Random(11)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        for unit in read_units(text):
            assert unit.commands, repr(text)
    for _ in range(500):
        words = ["".join(rng.choice("abcxyz-./_") for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 5))]
        assert [c.words for c in read_commands(" ".join(words))] == [tuple(words)]


def test_cached_shell_normalisation_equals_a_fresh_one_and_cannot_be_changed_by_a_caller():
    from curriculab.trajectory.actions import _CACHED_SHELL_CHARS

    text = "cd /app && cat src/m.py > out.txt; pytest -q"
    first = normalise_shell(text)
    first.append("junk")  # a caller's list is its own
    again = normalise_shell(text)
    assert actions(again) == [("run", None), ("edit", "out.txt"), ("run", None)]
    assert again == [classify_command(c) for c in split_commands(text)]
    long_text = (
        "cat > big.py << 'EOF'\n" + "x = 1\n" * _CACHED_SHELL_CHARS + "EOF"
    )  # past the cache: computed each time
    assert actions(normalise_shell(long_text)) == [("edit", "big.py")]


def _agreement(prefiltered, pattern, pieces, seed, lengths) -> int:
    """20,000 random texts joined from `pieces`: `prefiltered` must answer as `pattern` does on every
    one. Returns how many the pattern matched."""
    import random

    rng = random.Random(seed)
    matched = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(*lengths)))
        expected = pattern.search(text) is not None
        matched += expected
        assert prefiltered(text) == expected, repr(text)
    return matched


def test_the_truncation_prefilter_never_hides_a_marker_the_pattern_finds():
    from curriculab.trajectory.actions import _TRUNCATION_MARKERS

    pieces = [
        "output ",
        "was ",
        "truncated",
        "TRUNCATED",
        "limited to ",
        "12",
        "<response clipped>",
        "line ",
        "lines ",
        "[... ",
        "[...",
        "more ",
        "bytes",
        "characters",
        "ObſervationS should not exceed",
        "Observations should not exceed",
        "x",
        " ",
        "\n",
        "K",
    ]
    hits = _agreement(looks_truncated, _TRUNCATION_MARKERS, pieces, seed=5, lengths=(1, 8))
    assert hits > 1000  # the generator does produce markers, the long-s spelling among them
    assert looks_truncated("ObſervationS should not exceed 100 lines")


def test_folding_maps_every_character_re_ignorecase_takes_for_an_ascii_letter_to_that_letter():
    """Over every code point: the prefilters' folding never loses a character re.I would match."""
    import re
    import sys

    from curriculab.trajectory.actions import folded_case

    letter = re.compile("(?i)[a-z]")
    odd = [chr(c) for c in range(sys.maxunicode + 1) if letter.fullmatch(chr(c)) and not chr(c).isascii()]
    assert {"\u017f", "\u212a", "\u0130", "\u0131"} <= set(odd)  # ſ, the Kelvin sign, İ, ı
    for ch in odd:
        assert re.fullmatch(f"(?i){folded_case(ch)}", ch), repr(ch)


def test_the_error_prefilter_agrees_with_the_error_pattern_everywhere():
    from curriculab.trajectory.actions import _ERROR, _shows_error

    pieces = [
        "Error",
        "ERROR",
        "error: ",
        "Exception)",
        "KeyError:",
        "fail",
        "FAILED",
        "\nfailed ",
        "3 failed",
        "0 failed",
        "--- FAIL",
        "fail\t",
        "Traceback (most recent call last)",
        "command not found",
        "No such file or directory",
        "cannot find",
        "could not load",
        "undefined: ",
        "fatal: ",
        "panic: ",
        "Segmentation fault",
        "Permission denied",
        "expected 3 but got 4",
        "Exception in thread",
        "ok",
        "passed",
        " ",
        "\n",
        "x",
        "ı",
        "İ",
        "ſ",
        "\u212a",
        "faıled",
        "FAİL",
        "tracebacK",
        "Permiſſion denied",
        "eRRor TS2304",
        "error[E0308]: ",
    ]
    found = _agreement(_shows_error, _ERROR, pieces, seed=3, lengths=(0, 6))
    assert 2000 < found < 19_000  # both answers are exercised
    assert _shows_error("FAİLED: test_x") and _shows_error("1 faıled")
    assert looks_truncated("output lımited to 100 lines")  # dotless i: re.I matches it, casefold alone did not


def test_required_literals_are_in_every_match_and_the_prefiltered_search_agrees():
    import re

    from curriculab.trajectory.actions import _Searcher, agent_tables, required_literal

    assert required_literal(re.compile(r"(?m)^\[exit_code\] (-?\d+)\s*$")) == "[exit_code] "
    assert required_literal(re.compile(r"abc|defg")) is None  # either alternative may match alone
    assert required_literal(re.compile(r"(?i)exit code (\d+)")) is None  # case-folded matches
    assert required_literal(re.compile(r"(exit code) (\d+)")) == " "  # a group's text is not taken apart
    assert required_literal(re.compile(r"a*bc?d")) == "b"  # repeats and optionals are not required
    patterns = [
        p
        for table in agent_tables().values()
        for key in ("exit_code", "error_if", "exit_zero_if")
        for p in ([table[key]] if isinstance(table.get(key), str) else table.get(key) or [])
    ]
    assert len(patterns) >= 6
    pieces = [
        "[exit_code] ",
        "[exit_code]",
        "exit_code",
        "[error] tool reported failure",
        "[stdout]",
        "[stderr]",
        "[",
        "]",
        "Process exited with code ",
        "Exit code: ",
        "Exit Code: ",
        '"exit_code":',
        " ",
        "\n",
        "0",
        "-3",
        "12",
        "[The command completed with exit code ",
        "[Command finished with exit code ",
        "[exit code ",  # curriculab's own terminal episodes
        ".]",
        "x",
    ]
    # each agent's own words only beside its own pattern: a shared pool would dilute the others' matches
    own = {
        "returncode": ["<returncode>", "</returncode>"],
        "Wrong flag": ["Wrong flag!", "EXECUTION TIMED OUT", "Usage: "],
    }
    for pattern in patterns:
        searcher = _Searcher(pattern)
        found = _agreement(
            lambda text, searcher=searcher: searcher.search(text) is not None,
            searcher.pattern,
            pieces + [w for key, words in own.items() if key in pattern for w in words],
            seed=11,
            lengths=(0, 7),
        )
        assert found > 5, pattern  # the generator does produce matches of every pattern


def test_redirections_are_not_operands_and_shell_variables_are_not_paths():
    # as the real Codex trials wrote them: `rg … 2>/dev/null` reads src, not /dev/null; `cat $sample`
    # reads a file the shell names at run time, which no reading can name
    assert classify_command("rg -n TODO src 2>/dev/null")[:2] == ("read", "src")
    assert classify_command("sed -n 1,40p app.py 2>/dev/null")[:2] == ("read", "app.py")
    assert classify_command("ls -la >/dev/null 2>&1")[:2] == ("run", None)
    assert classify_command("cat $sample")[:2] == ("read", None)
    assert classify_command('cat "$(ls out | head -1)"')[:2] == ("read", None)
    assert classify_command("python gen.py > $OUT")[:2] == ("edit", None)  # a write, of a file unnamed here
    assert classify_command("cat < data.csv")[:2] == ("read", "data.csv")
    assert classify_command("echo 2 > n.txt")[:2] == ("edit", "n.txt")  # `2` is what is echoed here
    assert classify_command("make 2> build.log")[:2] == ("edit", "build.log")
