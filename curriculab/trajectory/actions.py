"""Normalise every agent's tool calls into one action vocabulary.

Agents differ (Terminus-2 types keystrokes, Claude Code has Read/Edit/Write/Bash, Codex runs
`exec_command`, SWE-agent has its own commands), but coders need one question answered the
same way for all of them: did this step read a file, edit a file, run a command or declare
completion? Shell text is read once, by `shell` (tree-sitter's bash grammar): a command that writes
files (redirections, here-docs, `sed -i`, `tee`, `mv`, `cp`, `rm`, `git apply`, `patch`, `python -c`
opening a literal path) is an edit of what it writes, and keystrokes carrying several commands
are one call each.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

from curriculab.trajectory.shell import (
    INCIDENTAL,
    NEVER_WRITES,
    READERS,
    Unit,
    edits,
    is_check,
    names_changed,
    read_commands,
    read_units,
    reading,
)

ToolTable = dict[str, Any]
"""One agent's table, or one tool's entry in it, as `agents.yaml` spells them."""


class NormalisedCall(NamedTuple):
    """One normalised action derived from a tool call (a named tuple: ingest makes one per tool call,
    and a frozen dataclass cost three times as much to make)."""

    action: str | None
    """read, edit, run, complete, message, other (effect unknown), or None for a call that does nothing (a wait)."""
    path: str | None
    """File read or written, when one can be named."""
    command: str | None
    """The single shell command, or a short rendering of the tool invocation."""


_TMUX_KEY = re.compile(r"^(?:C|M)-[A-Za-z\[\]\\]$")


def split_commands(text: str) -> list[str]:
    """Shell text as the commands an agent's step shows, one per pipeline or command alone, in the
    order they run (`shell.read_units`): here-doc bodies stay with the command that opened them, and
    the commands of an `if`, a loop or a `case` arm are each their own."""
    return [unit.text for unit in read_units(text) if not unit.nested]


def _clean_path(path: str | None) -> str | None:
    """A path as written, None where the shell computes it (`$sample`, `$(ls)`; a glob is kept)."""
    if path is None or path == "?" or "$" in path or "`" in path:
        return None
    return path[2:] if path.startswith("./") and len(path) > 2 else path


def classify_command(command: str) -> NormalisedCall:
    """Classify one shell command (as produced by `split_commands`) as read, edit or run."""
    calls = normalise_shell(command)
    return calls[0] if calls else NormalisedCall("run", None, command)


def _classified(unit: Unit) -> NormalisedCall:
    """The action of one unit: an edit of the first file any of its commands writes (a redirection,
    `sed -i`, `tee`, `python -c` opening a literal path, ...), else a read of the file a lone reader
    or a search shows, else a run."""
    if _TMUX_KEY.match(unit.text.strip()):
        return NormalisedCall("run", None, unit.text)
    written = [path for command in unit.commands for path in edits(command)]
    if written:
        named = [p for p in written if p != "?"]
        return NormalisedCall("edit", _clean_path(named[0] if named else None), unit.text)
    first = unit.commands[0]
    read = reading(first)
    lone = len(unit.commands) == 1 and "<<" not in unit.text
    if read and (lone or first.argv[0] not in READERS):
        return NormalisedCall("read", _clean_path(read[1]), unit.text)
    return NormalisedCall("run", None, unit.text)


def normalise_shell(text: str) -> list[NormalisedCall]:
    """Read shell text (`shell.read_units`) and classify each of its commands."""
    if len(text) > _CACHED_SHELL_CHARS:
        return [_classified(unit) for unit in read_units(text) if not unit.nested]
    return list(_normalised_short_shell(text))


_CACHED_SHELL_CHARS = 512
"""Agents repeat short commands (`ls -la`, `git status`, `pytest -q`) across thousands of steps;
long ones (here-docs writing files) rarely recur and would only fill the cache."""


@functools.lru_cache(maxsize=16384)
def _normalised_short_shell(text: str) -> tuple[NormalisedCall, ...]:
    return tuple(_classified(unit) for unit in read_units(text) if not unit.nested)


def with_observed_changes(
    calls: list[NormalisedCall], changed: list[str], episode_changed: set[str] | None = None
) -> list[NormalisedCall]:
    """A call's actions with the files its environment saw it change (curriculab's episodes record
    them): a changed file no edit of the call names was written by its last command that can write
    (not a check, not one that never writes), which becomes an edit of that file. So `./backup.sh`
    writing backups is a change, as the environment coder counts it; a call whose only writer is a
    check (`python3 app.py` writing its output) keeps its run."""
    files = [p for p in changed if not INCIDENTAL.search(p)]
    named = [c.path for c in calls if c.action == "edit" and c.path]
    unnamed = [f for f in files if not any(f == n or names_changed(n, {f}) for n in named)]
    if not unnamed:
        return calls
    edited = {p for p in episode_changed or files if not INCIDENTAL.search(p)}
    for k in range(len(calls) - 1, -1, -1):
        action, _, command = calls[k]
        if action == "edit":
            return calls  # the last writer is an edit: what else changed, changed with it
        if action != "run" or not command:
            continue
        commands = read_commands(command)
        words = list(commands[0].argv) if commands else []
        if words and not is_check(words, edited) and words[0] not in NEVER_WRITES:
            return [*calls[:k], NormalisedCall("edit", unnamed[0], command), *calls[k + 1 :]]
    return calls


def _words(line: str) -> list[str]:
    """The words of a line's first command (SWE-agent's commands are one line each)."""
    commands = read_commands(line)
    return list(commands[0].words) if commands else []


def _patch_paths(patch: str) -> list[str]:
    # Codex apply_patch envelopes and unified diffs both name their files on header lines.
    paths = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", patch, re.M)
    paths += re.findall(r"^\+\+\+ (?:b/)?(.+)$", patch, re.M)
    return [p.strip() for p in paths if p.strip() != "/dev/null"]


AGENT_TOOLS_ENV = "CURRICULAB_AGENT_TOOLS"
"""Environment variable naming a YAML file of extra or overriding agent tool tables."""


@functools.lru_cache(maxsize=8)
def _tables(extra_path: str | None) -> tuple[dict[str, ToolTable], dict[str, str]]:
    """(tables by agent name, agent name by alias), the shipped file merged with the user's."""
    import yaml

    shipped = yaml.safe_load((Path(__file__).parent / "agents.yaml").read_text(encoding="utf-8"))["agents"]
    agents = {name: {**table, "tools": dict(table.get("tools") or {})} for name, table in shipped.items()}
    if extra_path:
        try:
            mine = (yaml.safe_load(Path(extra_path).read_text(encoding="utf-8")) or {}).get("agents") or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(
                f"${AGENT_TOOLS_ENV} = {extra_path}: cannot read it as an agent tool table ({exc}). "
                f"Fix the file or unset the variable"
            ) from None
        for name, table in mine.items():
            merged = agents.setdefault(name, {"tools": {}})
            merged.update({k: v for k, v in table.items() if k != "tools"})
            merged["tools"].update(table.get("tools") or {})
    aliases = {}
    for name, table in agents.items():
        for alias in [name, *(table.get("aliases") or [])]:
            aliases[alias.lower()] = name
    return agents, aliases


def agent_tables() -> dict[str, ToolTable]:
    """Every agent's tool table (shipped, plus $CURRICULAB_AGENT_TOOLS)."""
    return _tables(os.environ.get(AGENT_TOOLS_ENV))[0]


def agent_key(agent: str | None) -> str | None:
    """The table name for an agent as a source names it (`Claude-Code@1.0` → `claude-code`), or None."""
    return agent_conventions(agent).key


@dataclass(frozen=True, slots=True)
class Observation:
    """What a tool's output says about how the call went, by the agent's own conventions."""

    exit_code: int | None
    """The exit status the output prints (gemini `Exit Code: N`, Codex `Process exited with code N`, ...)."""
    failed: bool | None
    """The agent's format flags the call as failed (or not); None when it says nothing either way."""


_UNKNOWN_TOOL = object()


class AgentConventions:
    """One agent's tool table and output conventions, resolved once: an importer reads every call of
    a trajectory by the same agent, and resolving the table through the environment twice per call
    was a measurable share of reading a trajectory."""

    def __init__(self, key: str | None, table: ToolTable, agents: dict[str, ToolTable]) -> None:
        self.key, self.table, self.agents = key, table, agents
        self._exit_code = [_Searcher(p) for p in table.get("exit_code") or []]
        self._error_if = _Searcher(table["error_if"]) if table.get("error_if") else None
        self._exit_zero_if = _Searcher(table["exit_zero_if"]) if table.get("exit_zero_if") else None
        self._noise = [re.compile(p) for p in table.get("noise") or []]
        self._not_run_if = _Searcher(table["not_run_if"]) if table.get("not_run_if") else None
        self._specs: dict[str, Any] = {}

    def tool_spec(self, tool: str) -> ToolTable | None:
        """The table entry for `tool`: the agent's own, else the first agent's that names it (an unknown
        agent, or a tool it borrowed), else one named the same but for case."""
        spec = self._specs.get(tool, _UNKNOWN_TOOL)
        if spec is _UNKNOWN_TOOL:
            spec = self._specs[tool] = self._find_spec(tool)
        return cast("ToolTable | None", spec)

    def _find_spec(self, tool: str) -> ToolTable | None:
        own: dict[str, ToolTable] = self.table.get("tools", {})
        if tool in own:
            return own[tool]
        for table in self.agents.values():
            tools: dict[str, ToolTable] = table.get("tools", {})
            if tool in tools:
                return tools[tool]
        lowered = tool.lower()
        for table in self.agents.values():
            for name, spec in table.get("tools", {}).items():
                if name.lower() == lowered:
                    return cast(ToolTable, spec)
        return None

    def normalise(self, name: str | None, arguments: Any) -> list[NormalisedCall]:
        """`normalise_tool_call` by this agent's table."""
        args = arguments if isinstance(arguments, dict) else {}
        tool = (name or "").strip()
        spec = self.tool_spec(tool)
        if spec is None:
            shown = (
                json.dumps(args, sort_keys=True, default=str)[:200]
                if args
                else (str(arguments)[:200] if arguments else "")
            )
            return [NormalisedCall("other", None, f"{tool} {shown}".strip())]
        action = spec.get("action")
        if spec.get("by"):
            sub = str(args.get(spec["by"], ""))
            commands = spec.get("commands") or {}
            action = commands.get(sub, commands.get("default", "other"))
            path = _argument(args, spec.get("path"))
            return [NormalisedCall(action, None if path is None else str(path), f"{tool} {sub} {path or ''}".strip())]
        if action == "shell":
            text = _argument(args, [*(spec.get("command") or []), "command", "cmd", "keystrokes"])
            if text is None and isinstance(arguments, (str, list)):
                text = arguments
            return normalise_shell(_shell_text(text)) or [NormalisedCall(None, None, None)]
        if action == "script":
            script = _argument(args, spec.get("command"))
            script = str(script if script is not None else (arguments if isinstance(arguments, str) else ""))
            calls = [
                c
                for tool_name, called in script_calls(script)
                if tool_name != tool
                for c in (
                    self.normalise(tool_name, called)
                    if called
                    else [NormalisedCall("other", None, f"{tool_name} (its argument computed by the script)")]
                )
            ]
            return calls or [NormalisedCall("other", None, f"{tool} {script[:200]}".strip())]
        if action == "patch":
            patch = _argument(args, spec.get("command"))
            patch = str(patch if patch is not None else (arguments if isinstance(arguments, str) else ""))
            paths: list[str | None] = [*_patch_paths(patch)] or [None]
            return [NormalisedCall("edit", p, f"{tool} {p or ''}".strip()) for p in paths]
        path = _argument(args, spec.get("path"))
        if isinstance(path, list):
            path = path[0] if len(path) == 1 else None
        shown = _argument(args, spec.get("command"))
        detail = shown if shown is not None else path  # a search shows its pattern, a read its file
        if isinstance(detail, (list, dict)):
            detail = json.dumps(detail, default=str)[:200]
        command = tool if action in ("complete", "message") or detail is None else f"{tool} {detail}"
        return [NormalisedCall(action, None if path is None else str(path), command)]

    def not_run(self, calls: list[NormalisedCall], output: str | None) -> list[NormalisedCall]:
        """`calls` as they happened: where the output says the harness refused to run the call (the
        agent's `not_run_if`), none ran, and each is `other` (neither a change nor a check)."""
        if not output or self._not_run_if is None or self._not_run_if.search(output) is None:
            return calls
        return [NormalisedCall("other", None, command) for _, _, command in calls]

    def refused(self, output: str | None) -> bool | None:
        """Whether the agent's own tool refused the call (its `error_if`), None when it says nothing:
        the reading for a tool whose output is no command's (a file viewer shows code, not errors)."""
        return True if output and self._error_if is not None and self._error_if.search(output) else None

    def observe(self, output: str | None) -> Observation:
        """`observe` by this agent's conventions."""
        if not output or not self.table:
            return Observation(None, None)
        flagged = True if self._error_if is not None and self._error_if.search(output) else None
        for pattern in self._exit_code:
            match = pattern.search(output)
            if match:
                return Observation(int(match.group(1)), flagged)
        if self._exit_zero_if is not None and self._exit_zero_if.search(output) and not flagged:
            return Observation(0, None)
        if flagged is None and self._noise:
            text = output
            for noise in self._noise:
                text = noise.sub("", text)
            flagged = _shows_error(text)
        return Observation(None, flagged)


class _Searcher:
    """A compiled output pattern from an agent's table, searched only in text holding the literal
    every match of it contains (`required_literal`): a multi-line pattern anchored at `^` is
    tried at every line of a long output, where a substring test rules most outputs out at once."""

    __slots__ = ("pattern", "literal")

    def __init__(self, pattern: str):
        self.pattern = re.compile(pattern)
        self.literal = required_literal(self.pattern)

    def search(self, text: str) -> re.Match[str] | None:
        if self.literal is not None and self.literal not in text:
            return None
        return self.pattern.search(text)


def required_literal(pattern: re.Pattern[str]) -> str | None:
    """The longest run of plain characters that every match of `pattern` contains, as written (the
    pattern's own top-level sequence, outside groups and alternatives); None for a case-insensitive
    pattern, one with none, or one the parser does not take apart."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]  # the parser re itself compiles with; private, hence the guard

        items = _parser.parse(pattern.pattern, pattern.flags)
        runs, current = [], []
        for op, value in items:
            if op is _constants.LITERAL:
                current.append(chr(value))
            else:
                runs.append("".join(current))
                current = []
        runs.append("".join(current))
    except Exception:  # noqa: BLE001 - an internal API changed shape: search without the prefilter
        return None
    longest = max(runs, key=len)
    return longest or None


def agent_conventions(agent: str | None) -> AgentConventions:
    """The conventions of an agent as a source names it, by the tables in force now (an unknown
    agent gets an empty table: every tool looked up in the others, outputs not read)."""
    return _conventions(os.environ.get(AGENT_TOOLS_ENV), agent)


@functools.lru_cache(maxsize=1024)
def _conventions(extra_path: str | None, agent: str | None) -> AgentConventions:
    agents, aliases = _tables(extra_path)
    key = aliases.get(agent.split("@", 1)[0].strip().lower()) if agent else None
    return AgentConventions(key, agents.get(key or "", {}), agents)


_SCRIPT_CALL = re.compile(r"\btools\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*['\"]([A-Za-z_]\w*)['\"]\s*\])\s*\(")
_SCRIPT_KEY = re.compile(r"""(?:["']([A-Za-z_]\w*)["']|\b([A-Za-z_]\w*))\s*:\s*(?=["'`])""")
_JS_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r?\n|.)", re.S)
_JS_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def script_calls(script: str) -> list[tuple[str, Any]]:
    """The tool calls a Codex `exec` script makes (`await tools.exec_command({cmd: "..."})`,
    `tools.apply_patch(patch)`), in order, each with what can be read of its argument without running
    the script: a string literal (or the literal a `const` assigned to the name passed), or the
    string-valued keys of an object literal. Anything computed is left out, not guessed."""
    calls = []
    found = list(_SCRIPT_CALL.finditer(script))
    for k, match in enumerate(found):
        start, end = match.end(), found[k + 1].start() if k + 1 < len(found) else len(script)
        region = script[start:end]
        head = region.lstrip()
        if head[:1] in "\"'`":
            argument: Any = _js_string(head, 0)
        elif head[:1] == "{":
            argument = {(m.group(1) or m.group(2)): _js_string(region, m.end()) for m in _SCRIPT_KEY.finditer(region)}
            argument = {key: value for key, value in argument.items() if value is not None}
        else:
            name = re.match(r"[A-Za-z_$][\w$]*", head)
            bound = name and re.search(
                rf"\b(?:const|let|var)\s+{re.escape(name.group(0))}\s*=\s*(?=[\"'`])", script[: match.start()]
            )
            argument = _js_string(script, bound.end()) if bound else None
        calls.append((match.group(1) or match.group(2), argument))
    return calls


def _js_string(text: str, at: int) -> str | None:
    """The JavaScript string literal that opens at `text[at]`, decoded; None where none closes (or a
    template literal interpolates: its value is computed)."""
    quote = text[at : at + 1]
    if quote not in ('"', "'", "`"):
        return None
    k = at + 1
    while k < len(text) and text[k] != quote:
        k += 2 if text[k] == "\\" else 1
    body = text[at + 1 : k]
    if k >= len(text) or (quote == "`" and "${" in body):
        return None

    def unescape(m: re.Match[str]) -> str:
        escaped = m.group(1)
        if escaped.startswith("u{"):
            return chr(int(escaped[2:-1], 16))
        if escaped[0] in "ux" and len(escaped) > 1:
            return chr(int(escaped[1:], 16))
        if escaped in ("\n", "\r\n"):
            return ""  # a line continuation
        return _JS_ESCAPES.get(escaped, str(escaped))

    return _JS_ESCAPE.sub(unescape, body)


def _argument(args: dict[str, Any], keys: list[str] | None) -> Any:
    for key in keys or []:
        value = args.get(key)
        if value not in (None, ""):
            return value
    return None


def _shell_text(value: Any) -> str:
    if isinstance(value, list):  # Codex shell: ["bash", "-lc", "cmd"]
        return value[-1] if len(value) >= 3 and value[1] in ("-lc", "-c") else shlex.join(str(t) for t in value)
    return str(value or "")


def normalise_tool_call(name: str | None, arguments: Any, agent: str | None = None) -> list[NormalisedCall]:
    """Normalise one tool call into one or more actions, by the agent's tool table (`agents.yaml`).

    A tool no table names gets the explicit `other` action with its arguments shown: it is
    neither a change nor a verification.
    """
    return agent_conventions(agent).normalise(name, arguments)


def observe(agent: str | None, output: str | None) -> Observation:
    """Read an output by the agent's conventions: its printed exit status, its own error flag, and,
    with neither, error text searched after the agent's framing lines are removed."""
    return agent_conventions(agent).observe(output)


_SWE_READS = re.compile(r"^(open|goto|scroll_up|scroll_down|search_file|set_cursors)\b")
_SWE_SEARCH = re.compile(r"^(search_dir|find_file)\b")


_ACTIONS = frozenset({"read", "edit", "run", "complete", "message", "other"})
_DOCUMENTED = re.compile(r"(?m)^(?:(\w+):\n\s+docstring:|\s+signature: (\w+))")


def interface_commands(prompt: str) -> frozenset[str]:
    """The commands a SWE-agent prompt documents (`name:` then `docstring:`, or a `signature:`
    line), as SWE-agent writes its interface's commands into the prompt: those a system adds (a
    `plan`, a role's `succeed`) included."""
    return frozenset(a or b for a, b in _DOCUMENTED.findall(prompt))


def normalise_swe_agent_action(
    action: str, open_file: str | None, documented: frozenset[str] = frozenset()
) -> list[NormalisedCall]:
    """Normalise one SWE-agent action string; `open_file` is the file open before it
    (`swe_agent_open_file` follows it from one action to the next). `documented`: the commands the
    trajectory's prompt documents (`interface_commands`): one of them that is neither SWE-agent's own
    nor in its tool table is one `other` step, its arguments (a multi-line block) included; the
    table (`agents.yaml`, $CURRICULAB_AGENT_TOOLS) maps a command to an action."""
    text = action.strip()
    if not text:
        return [NormalisedCall(None, None, None)]
    first = text.split("\n", 1)[0]
    words = _words(first)
    head = words[0] if words else ""
    if head == "submit":  # with what it submitted (a flag, a patch's name), as typed
        return [NormalisedCall("complete", None, first)]
    if head in ("str_replace_editor",) and len(words) >= 3:
        return normalise_tool_call(head, {"command": words[1], "path": words[2]}, agent="swe-agent")
    if _SWE_READS.match(first):
        path = words[1] if head == "open" and len(words) > 1 else open_file
        if head == "search_file" and len(words) > 2:
            path = words[2]
        return [NormalisedCall("read", path, text)]
    if _SWE_SEARCH.match(first):  # a search of the repository (or of the folder named): a read
        return [NormalisedCall("read", words[2] if len(words) > 2 else None, text)]
    if head == "create":
        return [NormalisedCall("edit", words[1] if len(words) > 1 else None, text)]
    if head in ("edit", "insert", "append"):
        return [NormalisedCall("edit", open_file, text)]
    spec = agent_conventions("swe-agent").table.get("tools", {}).get(head) if head else None
    if isinstance(spec, dict) and spec.get("action") in _ACTIONS:
        return [NormalisedCall(spec["action"], None, text)]
    if head in documented and not isinstance(spec, dict):
        return [NormalisedCall("other", None, text)]
    return normalise_shell(text)


_SWE_COMMANDS = frozenset(
    "open goto scroll_up scroll_down search_file set_cursors search_dir find_file create edit insert append "
    "submit str_replace_editor".split()
)
"""SWE-agent's own commands: their output is its tool's (a file's lines, a search's hits), not a shell's."""


def swe_agent_failed(action: str, output: str | None) -> bool | None:
    """Whether a SWE-agent step failed: for its own commands, only its tools' refusals say so (a
    viewed file full of `raise ValueError` is no error); a shell command's output is read as any
    shell's, with its terminal warnings set aside (`agents.yaml`)."""
    conventions = agent_conventions("swe-agent")
    words = _words(action.strip().split("\n", 1)[0])
    if words and words[0] in _SWE_COMMANDS:
        return conventions.refused(output)
    return conventions.observe(output).failed


def swe_agent_open_file(action: str, open_file: str | None) -> str | None:
    """The file open after a SWE-agent action, from the action itself: `open F` and `create F` open
    F; anything else leaves `open_file` open (the trajectory's own `state`, where it has one, wins)."""
    words = _words(action.strip().split("\n", 1)[0])
    if len(words) > 1 and words[0] in ("open", "create"):
        return words[1]
    return open_file


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
_ERROR_WORDS = (
    "error",
    "fail",
    "exception",
    "traceback",
    "command not found",
    "no such file or directory",
    "cannot",
    "could not",
    "undefined: ",
    "fatal: ",
    "panic: ",
    "segmentation fault",
    "permission denied",
    "expected",
)
"""A literal that every alternative of ERROR_RE contains, case-folded. Python's regex engine cannot
search a case-insensitive alternation by its literals and tries every branch at every position
(~0.4 ms for a 400-character output); absent all of these words, ERROR_RE cannot match."""


def folded_case(text: str) -> str:
    """`text` case-folded so that every character re.I takes for an ASCII letter becomes that letter:
    casefold does so for all but `İ` and `ı`, which re.I takes for `i` (checked over every code point
    in the tests). Only for literal prefilters: where it differs from re.I, it finds more, never less."""
    folded = text.casefold()
    if not folded.isascii():
        folded = folded.replace("i\u0307", "i").replace("\u0131", "i")
    return folded


def _found(text: str, folded: str | None, words: tuple[str, ...], pattern: re.Pattern[str]) -> bool:
    """Whether `pattern` matches `text`, searched only where `folded` (the text case-folded, made
    here if not given) holds one of `words`, literals one of which every match contains."""
    if folded is None:
        folded = folded_case(text)
    for word in words:
        if word in folded:
            return pattern.search(text) is not None
    return False


def _shows_error(text: str, folded: str | None = None) -> bool:
    return _found(text, folded, _ERROR_WORDS, _ERROR)


_NO_MATCH_IS_EXIT_1 = re.compile(r"^(grep|egrep|fgrep|rg|diff|cmp|test|\[) ")
_FULL_READ_COMMAND = re.compile(r"^(cat|bat|less|more|nl|open) [^|]*$")
_FULL_READ_TOOLS = {"read", "read_file", "view", "open_file", "str_replace_editor", "str_replace_based_edit_tool"}


def error_observed(
    action: str | None,
    command: str | None,
    output: str | None,
    exit_code: int | None,
    failed: bool | None = None,
    folded: str | None = None,
) -> bool | None:
    """Whether a run shows an error: by exit code where there is one, else by the agent's own
    failure flag (see `observe`), else by what the output says.

    A step that is not a run is an error only where the agent's format flags it (`failed`: SWE-agent's
    linter refusing an edit, an editor call on no open file); None otherwise, as where nothing was
    observed (no output, no exit code). `grep`
    and friends exit 1 for "no match", which is not an error. `folded`: `output` case-folded
    (`folded_case`), where the caller has it already.
    """
    if action != "run":  # a read, an edit, a submission: only the agent's own refusal says it failed
        return True if failed else None
    if failed and exit_code in (None, 0):
        return True
    if exit_code is not None:
        return exit_code != 0 and not (
            exit_code == 1 and _NO_MATCH_IS_EXIT_1.match((command or "").strip()) is not None
        )
    if failed is not None:
        return failed
    if output is None:
        return None
    return _shows_error(output, folded)


def read_is_full(action: str | None, tool_name: str | None, command: str | None, arguments: Any) -> bool | None:
    """For a read: does it show the whole file (cat, Read without offset) rather than a part? None for non-reads."""
    if action != "read":
        return None
    if _FULL_READ_COMMAND.match((command or "").strip()):
        return True
    args = arguments if isinstance(arguments, dict) else {}
    if (tool_name or "").lower() in _FULL_READ_TOOLS or tool_name == "swe-agent":
        partial = any(args.get(k) is not None for k in ("offset", "limit", "view_range"))
        return not partial and not re.match(r"^(goto|scroll_|search_file|set_cursors)", (command or "").strip())
    return False


_TRUNCATION_MARKERS = re.compile(
    r"output (?:was )?truncated|output limited to \d+|<response clipped>|lines? truncated|"
    r"\[\.\.\. ?\d+ (?:more )?(?:bytes|lines|characters)|Observations should not exceed",
    re.I,
)


_TRUNCATION_WORDS = ("truncated", "limited to", "clipped", "[...", "observations should not exceed")
"""A literal every marker contains: a case-folded substring test (`folded_case`) rules most outputs out
far faster than the case-insensitive regex can."""


def looks_truncated(output: str | None, folded: str | None = None) -> bool:
    """Whether an observation says it was cut by the agent harness. `folded`: `output` case-folded
    (`folded_case`), where the caller has it already."""
    return output is not None and output != "" and _found(output, folded, _TRUNCATION_WORDS, _TRUNCATION_MARKERS)
