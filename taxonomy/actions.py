"""Normalise every agent's tool calls into one action vocabulary.

Agents differ (Terminus-2 types keystrokes, Claude Code has Read/Edit/Write/Bash, Codex runs
`exec_command`, SWE-agent has its own commands), but coders need one question answered the
same way for all of them: did this step read a file, edit a file, run a command or declare
completion? A shell command that writes files (redirections, here-docs, `sed -i`, `tee`, `mv`,
`cp`, `rm`, `git apply`, `patch`) is an edit of what it writes, and keystrokes carrying several
commands are split into one call each.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class NormalisedCall:
    """One normalised action derived from a tool call."""

    action: str | None
    """read, edit, run, complete, message, or None for a call that does nothing (a wait)."""
    path: str | None
    """File read or written, when one can be named."""
    command: str | None
    """The single shell command, or a short rendering of the tool invocation."""


_READERS = {"cat", "head", "tail", "less", "more", "nl", "bat", "view", "wc", "file", "stat", "xxd", "od"}
_SEARCHERS = {"grep", "egrep", "fgrep", "rg", "ag"}
_WRAPPERS = {"sudo", "time", "nohup", "timeout", "env", "command", "exec"}
_NOT_FILES = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
_REDIRECT = re.compile(r"^(?:\d|&)?(>>?|>\|)(.*)$")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_TMUX_KEY = re.compile(r"^(?:C|M)-[A-Za-z\[\]\\]$")


def split_commands(text: str) -> list[str]:
    """Split shell text into single commands on newlines, `;`, `&&`, `||` and `&`.

    Quotes, backslash-newline continuations and here-doc bodies are kept inside the command
    that opened them, so `cat > f <<'EOF' ... EOF` stays one command.
    """
    commands: list[str] = []
    current: list[str] = []
    lines = text.split("\n")
    i = 0
    quote: str | None = None
    while i < len(lines):
        line = lines[i]
        i += 1
        j = 0
        heredocs: list[tuple[str, bool]] = []
        while j < len(line):
            ch = line[j]
            if quote:
                if ch == "\\" and quote == '"' and j + 1 < len(line):
                    current.append(line[j : j + 2])
                    j += 2
                    continue
                if ch == quote:
                    quote = None
                current.append(ch)
                j += 1
                continue
            if ch in "'\"":
                quote = ch
            elif ch == "\\" and j + 1 < len(line):
                current.append(line[j : j + 2])
                j += 2
                continue
            elif ch == "#" and (j == 0 or line[j - 1] in " \t;&|"):
                break  # a comment runs to the end of the line
            elif ch == "<" and line.startswith("<<", j) and not line.startswith("<<<", j):
                match = _HEREDOC.match(line, j)
                if match:
                    heredocs.append((match.group(3), match.group(1) == "-"))
                    current.append(match.group(0))
                    j = match.end()
                    continue
            elif ch == ";" or (ch == "&" and not line.startswith("&>", j) and (j == 0 or line[j - 1] not in "<>")):
                if ch == "&" and line.startswith("&&", j):
                    j += 1
                _flush(current, commands)
                j += 1
                continue
            elif ch == "|" and line.startswith("||", j):
                _flush(current, commands)
                j += 2
                continue
            current.append(ch)
            j += 1
        if quote:  # a quoted string spans the newline
            current.append("\n")
            continue
        if line.endswith("\\") and not heredocs:
            current.append("\n")
            continue
        for delimiter, strip_tabs in heredocs:
            current.append("\n")
            while i < len(lines):
                body = lines[i]
                i += 1
                if (body.lstrip("\t") if strip_tabs else body) == delimiter:
                    current.append(body)
                    break
                current.append(body + "\n")
        _flush(current, commands)
    _flush(current, commands)
    return commands


def _flush(current: list[str], commands: list[str]) -> None:
    command = "".join(current).strip()
    current.clear()
    if command:
        commands.append(command)


def _tokens(first_line: str) -> list[str]:
    try:
        lexer = shlex.shlex(first_line, posix=True, punctuation_chars="|<>")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return first_line.split()


def _clean_path(path: str) -> str:
    return path[2:] if path.startswith("./") and len(path) > 2 else path


def _operands(words: list[str]) -> list[str]:
    return [w for w in words if not w.startswith("-")]


def classify_command(command: str) -> NormalisedCall:
    """Classify one shell command (as produced by `split_commands`) as read, edit or run."""
    first_line = command.split("\n", 1)[0]
    if _TMUX_KEY.match(first_line.strip()):
        return NormalisedCall("run", None, command)
    tokens = _tokens(first_line)
    # Redirection to a file makes any command an edit of that file.
    written: list[str] = []
    k = 0
    while k < len(tokens):
        token = tokens[k]
        if token in (">", ">>") or (token.endswith(">") and token[:-1] in ("1", "2", "&")):
            target = tokens[k + 1] if k + 1 < len(tokens) else ""
            if target in (">",):  # shlex splits '>>' into '>' '>'
                target = tokens[k + 2] if k + 2 < len(tokens) else ""
                k += 1
            if target and not target.startswith("&") and target not in _NOT_FILES:
                written.append(target)
            k += 2
            continue
        k += 1
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token == "|":
            segments.append([])
        elif token not in ("<", ">"):
            segments[-1].append(token)
    for segment in segments:
        words = _strip_wrappers(segment)
        if not words:
            continue
        head, args = words[0], words[1:]
        if head == "tee":
            written.extend(_operands(args))
        elif head in ("sed", "perl") and any(a.startswith("-i") or a == "--in-place" or a.startswith("-pi") for a in args):
            ops = _operands(args)
            if len(ops) > 1:
                written.append(ops[-1])
        elif head in ("mv", "cp", "install", "ln") and len(_operands(args)) >= 2:
            written.append(_operands(args)[-1])
        elif head in ("rm", "touch", "truncate", "unlink") and _operands(args):
            written.extend(_operands(args))
        elif head == "patch" or (head == "git" and args[:1] == ["apply"]):
            return NormalisedCall("edit", None, command)
        elif head == "git" and args[:1] in (["checkout"], ["restore"]) and "--" in args:
            written.extend(args[args.index("--") + 1 :])
    if written:
        return NormalisedCall("edit", _clean_path(written[0]), command)
    words = _strip_wrappers(segments[0])
    if not words:
        return NormalisedCall("run", None, command)
    head, args = words[0], words[1:]
    ops = _operands(args)
    if head in _READERS and ops and len(segments) == 1 and "<<" not in first_line:
        return NormalisedCall("read", _clean_path(ops[-1]), command)
    if head == "sed" and "-n" in args and len(ops) >= 2:
        return NormalisedCall("read", _clean_path(ops[-1]), command)
    if head in _SEARCHERS and len(ops) >= 2 and not any(a.startswith("-r") or a == "-R" for a in args):
        return NormalisedCall("read", _clean_path(ops[-1]), command)
    return NormalisedCall("run", None, command)


def _strip_wrappers(words: list[str]) -> list[str]:
    k = 0
    while k < len(words) and (words[k] in _WRAPPERS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[k])):
        k += 1
        # `timeout 30 cmd`: skip the duration too
        if k < len(words) and words[k - 1] == "timeout" and re.match(r"^\d+[smh]?$", words[k]):
            k += 1
    return words[k:]


def normalise_shell(text: str) -> list[NormalisedCall]:
    """Split shell text into commands and classify each one."""
    return [classify_command(c) for c in split_commands(text)]


def _patch_paths(patch: str) -> list[str]:
    # Codex apply_patch envelopes and unified diffs both name their files on header lines.
    paths = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", patch, re.M)
    paths += re.findall(r"^\+\+\+ (?:b/)?(.+)$", patch, re.M)
    return [p.strip() for p in paths if p.strip() != "/dev/null"]


def normalise_tool_call(name: str | None, arguments: Any) -> list[NormalisedCall]:
    """Normalise one tool call of any supported agent into one or more actions.

    Unknown tools become `run` with the tool name as the command: better counted as an action
    than dropped.
    """
    args = arguments if isinstance(arguments, dict) else {}
    tool = (name or "").strip()
    key = tool.lower()
    if key in ("bash_command", "bash", "shell", "exec_command", "run_command", "execute_bash", "terminal"):
        text = args.get("keystrokes", args.get("command", args.get("cmd", arguments if isinstance(arguments, str) else "")))
        if isinstance(text, list):  # Codex shell: ["bash", "-lc", "cmd"]
            text = text[-1] if len(text) >= 3 and text[1] in ("-lc", "-c") else shlex.join(str(t) for t in text)
        calls = normalise_shell(str(text or ""))
        return calls or [NormalisedCall(None, None, None)]
    if key in ("mark_task_complete", "task_complete", "submit", "finish", "attempt_completion"):
        return [NormalisedCall("complete", None, tool)]
    if key in ("read", "read_file", "view", "open_file"):
        path = args.get("file_path", args.get("path"))
        return [NormalisedCall("read", path, f"{tool} {path}")]
    if key in ("write", "edit", "multiedit", "write_file", "create_file", "notebookedit"):
        path = args.get("file_path", args.get("path", args.get("notebook_path")))
        return [NormalisedCall("edit", path, f"{tool} {path}")]
    if key == "apply_patch":
        patch = str(args.get("input", args.get("patch", arguments if isinstance(arguments, str) else "")))
        paths = _patch_paths(patch) or [None]
        return [NormalisedCall("edit", p, f"apply_patch {p}") for p in paths]
    if key == "str_replace_editor" or key == "str_replace_based_edit_tool":
        sub = str(args.get("command", ""))
        path = args.get("path")
        action = "read" if sub == "view" else "edit"
        return [NormalisedCall(action, path, f"{tool} {sub} {path}")]
    if key in ("todowrite", "task", "think", "message", "respond", "exit_plan_mode"):
        return [NormalisedCall("message", None, tool)]
    return [NormalisedCall("run", None, tool)]


_SWE_READS = re.compile(r"^(open|goto|scroll_up|scroll_down|search_file)\b")
_SWE_SEARCH = re.compile(r"^(search_dir|find_file)\b")


def normalise_swe_agent_action(action: str, open_file: str | None) -> list[NormalisedCall]:
    """Normalise one SWE-agent action string; `open_file` is the file open before it."""
    text = action.strip()
    if not text:
        return [NormalisedCall(None, None, None)]
    first = text.split("\n", 1)[0]
    words = _tokens(first)
    head = words[0] if words else ""
    if head == "submit":
        return [NormalisedCall("complete", None, "submit")]
    if head in ("str_replace_editor",) and len(words) >= 3:
        return normalise_tool_call(head, {"command": words[1], "path": words[2]})
    if _SWE_READS.match(first):
        path = words[1] if head == "open" and len(words) > 1 else open_file
        if head == "search_file" and len(words) > 2:
            path = words[2]
        return [NormalisedCall("read", path, text)]
    if _SWE_SEARCH.match(first):
        return [NormalisedCall("run", None, text)]
    if head == "create":
        return [NormalisedCall("edit", words[1] if len(words) > 1 else None, text)]
    if head in ("edit", "insert", "append"):
        return [NormalisedCall("edit", open_file, text)]
    return normalise_shell(text)


# An observation that shows something went wrong. Counts like "0 failed" are not failures.
ERROR_RE = (
    r"(?i)(traceback \(most recent call last\)|command not found|no such file or directory|"
    r"modulenotfounderror|importerror|syntaxerror|nameerror|typeerror|valueerror|attributeerror|"
    r"cannot find|could not (compile|find|load)|undefined: |error(\[e\d+\])?: |\berror ts\d+|"
    r"\bfatal: |\bpanic: |segmentation fault|permission denied|exception in thread|"
    r"(^|\n)failed\b|\bfailed: |--- fail|\bfail\t|test result: failed|\b[1-9]\d* (failed|failing|errors?)\b|"
    r"assertionerror|expected .* but (got|received)|cannot load such file)"
    r"|(?-i:\b[A-Z][A-Za-z]*(Error|Exception)(:|\)))"  # a raised class: `LoadError)`, `KeyError:`
)
_ERROR = re.compile(ERROR_RE)
_NO_MATCH_IS_EXIT_1 = re.compile(r"^(grep|egrep|fgrep|rg|diff|cmp|test|\[) ")
_FULL_READ_COMMAND = re.compile(r"^(cat|bat|less|more|nl|open) [^|]*$")
_FULL_READ_TOOLS = {"read", "read_file", "view", "open_file", "str_replace_editor", "str_replace_based_edit_tool"}


def error_observed(action: str | None, command: str | None, output: str | None, exit_code: int | None) -> bool | None:
    """Whether a run shows an error: by exit code where there is one, else by what the output says.

    None when nothing was observed (no output, no exit code) or the step is not a run. `grep`
    and friends exit 1 for "no match", which is not an error.
    """
    if action != "run":
        return None
    if exit_code is not None:
        return exit_code != 0 and not (exit_code == 1 and _NO_MATCH_IS_EXIT_1.match((command or "").strip()) is not None)
    if output is None:
        return None
    return _ERROR.search(output) is not None


def read_is_full(action: str | None, tool_name: str | None, command: str | None, arguments: Any) -> bool | None:
    """For a read: does it show the whole file (cat, Read without offset) rather than a part? None for non-reads."""
    if action != "read":
        return None
    if _FULL_READ_COMMAND.match((command or "").strip()):
        return True
    args = arguments if isinstance(arguments, dict) else {}
    if (tool_name or "").lower() in _FULL_READ_TOOLS or tool_name == "swe-agent":
        partial = any(args.get(k) is not None for k in ("offset", "limit", "view_range"))
        return not partial and not re.match(r"^(goto|scroll_|search_file)", (command or "").strip())
    return False


_TRUNCATION_MARKERS = re.compile(
    r"output (?:was )?truncated|output limited to \d+|<response clipped>|lines? truncated|"
    r"\[\.\.\. ?\d+ (?:more )?(?:bytes|lines|characters)|Observations should not exceed",
    re.I,
)


def looks_truncated(output: str | None) -> bool:
    """Whether an observation says it was cut by the agent harness."""
    return bool(output) and _TRUNCATION_MARKERS.search(output) is not None
