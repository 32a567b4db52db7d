"""One reading of shell text for every coder, by tree-sitter's bash grammar.

A command line becomes the simple commands it runs, in the order they run, each with the control
that joins it to the one before (`;`, `&&`, `||`, `|`, `&`), the constructs around it (`if`
condition or body, a `case` arm, a loop, a subshell, a function), its words as the shell would
pass them (a word the shell computes, `$f` or `$(ls)`, keeps its `$`: it names no file), and the
files it reads and writes through redirections. What a command edits (`sed -i`, `tee`, `>`/`>>`,
here-docs, `cp`, `mv`, `patch`, `git apply`, `python -c` opening a literal path for writing,
`sqlite3` changing a database) and whether it checks (a test runner, or running what was changed)
are read from those words here and nowhere else.

tree-sitter-bash parses `$((…))`, `case` and `[[ … ]]`, and an unfinished line (keystrokes typed
half-way) still gives a tree: what it could not parse is read as words in place.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/random"})
_WRAPPERS = frozenset({"sudo", "time", "nohup", "timeout", "env", "command", "exec", "nice", "stdbuf"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"^\d+(\.\d+)?[smhd]?$")
_COMPUTED = ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion", "process_substitution")
_CONTROL_TOKENS = frozenset({";", "&&", "||", "|", "|&", "&", ";;", "\n"})


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command of a command line (or a pipeline's stage), as the shell would run it."""

    words: tuple[str, ...]
    """Its words, unquoted, variable assignments and wrappers (`sudo`, `timeout 30`) included; a word
    the shell computes keeps its `$` or backquote."""
    control: str
    """How it joins the command before it: "" (the first), ";" (also a newline), "&&", "||", "|", "&"."""
    within: tuple[str, ...]
    """The constructs around it, outermost first: "if-condition", "if-body", "case", "loop",
    "loop-condition", "subshell", "function", "negated", "substitution"."""
    writes: tuple[str, ...]
    """Files its redirections write (`>`, `>>`, `&>`, a here-doc's target), as written."""
    reads: tuple[str, ...]
    """Files its `<` redirections read."""
    unit: int
    """Index of the unit (a pipeline, or a command alone) it belongs to: `normalise_shell` gives one
    action per unit."""

    @property
    def argv(self) -> tuple[str, ...]:
        """Its words without what only wraps it (`sudo`, `timeout 30`, `env`, `X=1`)."""
        return tuple(strip_wrappers(list(self.words)))

    @property
    def conditional(self) -> bool:
        """Whether whether it runs depends on what ran before (`||`, `&&`, an `if` body, a `case` arm)."""
        return self.control in ("&&", "||") or any(w in ("if-body", "case") for w in self.within)


@dataclass(frozen=True, slots=True)
class Unit:
    """A pipeline (or a command alone) with its source text: what an agent's step shows as one command."""

    text: str
    """Its source text, its redirections and here-doc body included."""
    commands: tuple[SimpleCommand, ...]
    """Its simple commands, in order."""
    nested: bool = False
    """Whether it runs inside another command's `$(…)` or `<(…)`: part of that command as a step shows
    it (`split_commands` leaves it out), a command the shell ran all the same (`read_commands`)."""


def strip_wrappers(words: list[str]) -> list[str]:
    """A command's words without what only wraps it (`sudo -E`, `timeout 30`, `env`, `X=1`, …)."""
    k = 0
    while k < len(words) and (words[k] in _WRAPPERS or _ASSIGNMENT.match(words[k])):
        wrapper = words[k]
        k += 1
        if wrapper in _WRAPPERS:  # its own options: `sudo -u app`, `timeout -s KILL 30`, `env -i`
            while k < len(words) and words[k].startswith("-") and words[k] != "--":
                k += 2 if words[k] in _TAKES_VALUE.get(wrapper, ()) else 1
            if k < len(words) and words[k] == "--":
                k += 1
        if wrapper == "timeout" and k < len(words) and _DURATION.match(words[k]):
            k += 1
    return words[k:]


_TAKES_VALUE = {
    "sudo": ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"),
    "timeout": ("-s", "-k", "--signal", "--kill-after"),
    "env": ("-u", "-C", "-S", "--unset", "--chdir"),
    "nice": ("-n",),
    "stdbuf": ("-i", "-o", "-e"),
}
"""A wrapper's options that take the next word as their value."""


@functools.cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def read_units(text: str) -> tuple[Unit, ...]:
    """The units of a command line (see `Unit`), in the order they run."""
    if len(text) > _CACHED_CHARS:
        return _Reader(text).units()
    return _cached_units(text)


_CACHED_CHARS = 512
"""Agents repeat short commands (`ls -la`, `pytest -q`) across thousands of steps; long ones
(here-docs writing files) rarely recur and would only fill the cache."""


@functools.lru_cache(maxsize=16384)
def _cached_units(text: str) -> tuple[Unit, ...]:
    return _Reader(text).units()


def read_commands(text: str) -> tuple[SimpleCommand, ...]:
    """Every simple command of a command line, in the order they run (those inside `$(…)` included)."""
    return tuple(c for unit in read_units(text) for c in unit.commands)


class _Reader:
    """One walk of one parse tree."""

    def __init__(self, text: str):
        self.source = text.encode("utf-8", "surrogatepass")
        self.built: list[Unit] = []
        self.pending: list[SimpleCommand] = []
        self.pending_text: list[str] = []
        self.piped = 0  # inside a pipeline: its stages make one unit
        self.unit_start = 0

    def units(self) -> tuple[Unit, ...]:
        tree = _parser().parse(self.source)
        self._statements(tree.root_node, (), "")
        self._close_unit()
        return tuple(self.built)

    def _text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    # -- statements --------------------------------------------------------------------------
    def _statements(self, node: Node, within: tuple[str, ...], control: str, start: int = 0) -> str:
        """Walk a node's children as statements joined by control tokens; returns the control
        token that follows the last one (for the caller's next statement)."""
        for child in node.children[start:]:
            kind = child.type
            if kind in _CONTROL_TOKENS or (not child.is_named and child.text in (b";", b"&", b"\n")):
                control = "&" if kind == "&" else (";" if kind in (";", ";;", "\n") else kind)
                continue
            if not child.is_named or kind == "comment":
                continue
            self._statement(child, within, control)
            control = ";"
        return control

    def _statement(self, node: Node, within: tuple[str, ...], control: str) -> None:
        kind = node.type
        if kind in ("list", "program"):
            self._statements(node, within, control)
        elif kind == "pipeline":
            self._close_unit()
            self.piped += 1
            first = True
            for child in node.children:
                if child.is_named and child.type != "comment":
                    self._statement(child, within, control if first else "|")
                    first = False
            self.piped -= 1
            self._close_unit(self._text(node))
        elif kind in ("command", "test_command", "declaration_command", "unset_command", "variable_assignment"):
            self._command(node, within, control, (), ())
        elif kind == "redirected_statement":
            self._redirected(node, within, control)
        elif kind == "negated_command":
            for child in node.named_children:
                self._statement(child, (*within, "negated"), control)
        elif kind == "if_statement":
            self._if(node, within, control)
        elif kind in ("while_statement", "for_statement", "c_style_for_statement"):
            for child in node.named_children:
                if child.type == "do_group":
                    self._statements(child, (*within, "loop"), ";")
                elif kind == "while_statement":
                    self._statement(child, (*within, "loop-condition"), control)
                else:
                    self._substitutions(child, within)
        elif kind == "case_statement":
            for child in node.named_children:
                if child.type == "case_item":  # its statements follow the `)` that closes its patterns
                    close = next((k for k, c in enumerate(child.children) if c.type == ")"), -1)
                    self._statements(child, (*within, "case"), control, close + 1)
                else:
                    self._substitutions(child, within)
        elif kind in ("subshell", "compound_statement", "do_group"):
            self._statements(node, (*within, "subshell") if kind == "subshell" else within, control)
        elif kind == "function_definition":
            for child in node.named_children:
                if child.type in ("compound_statement", "subshell"):
                    self._statements(child, (*within, "function"), ";")
        elif kind == "ERROR":
            self._error(node, within, control)
        else:  # a lone word, a string, an expansion: read as a command of its words
            self._command(node, within, control, (), ())

    def _if(self, node: Node, within: tuple[str, ...], control: str, part: str = "if-condition") -> None:
        for child in node.children:
            if child.type == "then":
                part = "if-body"
            elif child.type == "elif_clause":
                self._if(child, within, ";")
            elif child.type == "else_clause":
                self._if(child, within, ";", "if-body")
            elif child.is_named and child.type != "comment":
                self._statement(child, (*within, part), control if part == "if-condition" else ";")
                control = ";"

    def _redirected(self, node: Node, within: tuple[str, ...], control: str) -> None:
        writes: list[str] = []
        reads: list[str] = []
        shown: list[str] = []  # the redirections as written on the command's line
        bodies: list[str] = []  # here-doc bodies with their closing word, on the lines after
        follow: list[tuple[str, Node]] = []  # what a here-doc's start line goes on with (`<<EOF && python x`)
        line_end = node.end_byte
        body = node.child_by_field_name("body")
        for child in node.children:
            if child == body:
                continue
            if child.type in ("file_redirect", "herestring_redirect"):
                shown.append(self._text(child))
                self._redirect(child, writes, reads)
            elif child.type == "heredoc_redirect":
                operator, start_end, text = "", child.start_byte, ""
                for part in child.children:
                    if part.type in ("<<", "<<-", "heredoc_start"):
                        start_end = part.end_byte
                    elif part.type in ("heredoc_body", "heredoc_end"):
                        text += self._text(part)
                    elif part.type == "file_redirect":
                        shown.append(self._text(part))
                        self._redirect(part, writes, reads)
                    elif part.type in _CONTROL_TOKENS:
                        operator = part.type
                    elif part.is_named:
                        follow.append((operator or ";", part))
                line_end = start_end
                bodies.append(text)
        if body is None:
            return
        if follow:  # the line up to the here-doc's word, then its body: not what the line went on to run
            text = self.source[node.start_byte : line_end].decode("utf-8", "surrogatepass")
            text += "".join("\n" + b for b in bodies)
        else:
            text = self._text(node)
        if body.type in ("command", "test_command", "declaration_command", "variable_assignment"):
            if not self.piped:
                self._close_unit()
            self._command(body, within, control, tuple(writes), tuple(reads))
            if not self.piped:
                self._close_unit(text)
        else:  # a redirected pipeline, list or compound: its redirections belong to its last command
            self._statement(body, within, control)
            self._redirect_last(tuple(writes), tuple(reads), " ".join(shown))
        for operator, part in follow:
            self._statement(part, within, operator)

    def _redirect(self, node: Node, writes: list[str], reads: list[str]) -> None:
        operator = next((c.type for c in node.children if not c.is_named), ">")
        target = node.child_by_field_name("destination")
        if target is None:
            return
        path = self._word(target)
        if operator in ("<",):
            reads.append(path)
        elif operator in (">", ">>", "&>", "&>>", ">|") and path not in _NOT_FILES and not path.isdigit():
            writes.append(path)

    def _redirect_last(self, writes: tuple[str, ...], reads: tuple[str, ...], shown: str) -> None:
        target = self.pending if self.pending else (list(self.built[-1].commands) if self.built else [])
        if not target:
            return
        last = target[-1]
        updated = SimpleCommand(
            last.words, last.control, last.within, last.writes + writes, last.reads + reads, last.unit
        )
        if self.pending:
            self.pending[-1] = updated
            self.pending_text[0] = f"{self.pending_text[0]} {shown}".strip()
        else:
            unit = self.built[-1]
            self.built[-1] = Unit(f"{unit.text} {shown}".strip(), (*unit.commands[:-1], updated))

    def _error(self, node: Node, within: tuple[str, ...], control: str) -> None:
        """What the grammar could not parse: its statements where it found some, else its words."""
        statements = [
            c for c in node.named_children if c.type not in ("word", "string", "raw_string", "string_content")
        ]
        if statements:
            self._statements(node, within, control)
        elif self.pending:  # an unclosed quote at the end: more words of the command before it
            last = self.pending[-1]
            words = (*last.words, *(self._word(c) for c in node.named_children))
            self.pending[-1] = SimpleCommand(words, last.control, last.within, last.writes, last.reads, last.unit)
            self.pending_text[0] = self.source[self.unit_start : node.end_byte].decode("utf-8", "surrogatepass")
        else:
            self._command(node, within, control, (), ())

    # -- commands ----------------------------------------------------------------------------
    def _command(
        self, node: Node, within: tuple[str, ...], control: str, writes: tuple[str, ...], reads: tuple[str, ...]
    ) -> None:
        words: list[str] = []
        own_writes, own_reads = list(writes), list(reads)
        if node.type == "variable_assignment":
            words.append(self._text(node))
            self._substitutions(node, within)
        for child in node.children if node.type != "variable_assignment" else ():
            kind = child.type
            if kind == "file_redirect":
                self._redirect(child, own_writes, own_reads)
            elif kind == "variable_assignment":
                words.append(self._text(child))
                self._substitutions(child, within)
            elif kind == "command_name":
                words.append(self._word(child.named_children[0] if child.named_children else child))
                self._substitutions(child, within)
            elif child.is_named and kind not in ("comment", "herestring_redirect"):
                words.extend(self._words_of(child))
                self._substitutions(child, within)
            elif kind in ("[[", "]]", "[", "]"):
                words.append(kind)
        if not self.piped:
            self._close_unit()
        self.pending.append(
            SimpleCommand(tuple(words), control, within, tuple(own_writes), tuple(own_reads), len(self.built))
        )
        if not self.pending_text:
            self.pending_text.append(self._text(node))
            self.unit_start = node.start_byte

    def _words_of(self, node: Node) -> list[str]:
        if node.type in ("binary_expression", "unary_expression", "parenthesized_expression", "test_operator"):
            return [w for child in node.children for w in self._words_of(child)] or [self._text(node)]
        return [self._word(node)]

    def _substitutions(self, node: Node, within: tuple[str, ...]) -> None:
        """Commands inside `$(…)` and `<(…)` run too (before the command that holds them): each a unit of its own."""
        if node.type in ("command_substitution", "process_substitution"):
            saved, start = (self.pending, self.pending_text, self.piped), len(self.built)
            self.pending, self.pending_text, self.piped = [], [], 0
            self._statements(node, (*within, "substitution"), "")
            self._close_unit()
            self.built[start:] = [Unit(u.text, u.commands, nested=True) for u in self.built[start:]]
            self.pending, self.pending_text, self.piped = saved
            return
        for child in node.named_children:
            self._substitutions(child, within)

    def _word(self, node: Node) -> str:
        """A word as the shell passes it; a computed one keeps its source text (with `$`)."""
        kind = node.type
        text = self._text(node)
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            return text[2:-1]
        if kind == "string":
            if any(c.type in _COMPUTED for c in node.named_children):
                return text
            inner = text[1:-1] if len(text) >= 2 else text
            return re.sub(r'\\([\\"$`])', r"\1", inner)
        if kind == "concatenation":
            return "".join(self._word(c) for c in node.children)
        if kind in _COMPUTED:
            return text
        if kind == "word" and "\\" in text:
            return re.sub(r"\\(.)", r"\1", text, flags=re.S)
        return text

    def _close_unit(self, text: str | None = None) -> None:
        if not self.pending:
            return
        self.built.append(Unit((text if text is not None else self.pending_text[0]).strip(), tuple(self.pending)))
        self.pending, self.pending_text = [], []


# -- what a command does -------------------------------------------------------------------------
READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "view", "wc", "file", "stat", "xxd", "od"})
"""Commands that show a file named as their last operand (a read only when nothing is piped into or out of them)."""
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag"})
_PY_WRITE = re.compile(
    r"""open\(\s*(['"])([^'"]+)\1\s*,\s*(['"])[^'"]*[wax+][^'"]*\3"""  # open('x', 'w')
    r"""|Path\(\s*(['"])([^'"]+)\4\s*\)\s*\.\s*write_(?:text|bytes)\("""  # Path('x').write_text(
)
_SQL_CHANGE = re.compile(r"(?i)\b(insert|update|delete|create|drop|alter|replace)\b")


def operands(words: Sequence[str]) -> list[str]:
    """A command's arguments that are not options."""
    return [w for w in words if not w.startswith("-")]


def edits(command: SimpleCommand) -> list[str]:
    """The files one command changes, as written (a computed name keeps its `$`); `["?"]` for a
    change of files it does not name (`patch`, `git apply`)."""
    written = list(command.writes)
    words = command.argv
    if not words:
        return written
    head, args = words[0].rsplit("/", 1)[-1], list(words[1:])
    ops = operands(args)
    if head == "tee":
        written += ops
    elif head in ("sed", "perl") and any(a.startswith("-i") or a == "--in-place" or a.startswith("-pi") for a in args):
        if len(ops) > 1:
            written.append(ops[-1])
    elif head in ("mv", "cp", "install", "ln") and len(ops) >= 2:
        written.append(ops[-1])
    elif head in ("rm", "touch", "truncate", "unlink") and ops:
        written += ops
    elif head == "patch" or (head == "git" and args[:1] == ["apply"]):
        written.append("?")
    elif head == "git" and args[:1] in (["checkout"], ["restore"]) and "--" in args:
        written += args[args.index("--") + 1 :]
    elif _PYTHON.match(head) and "-c" in args and args.index("-c") + 1 < len(args):
        for match in _PY_WRITE.finditer(args[args.index("-c") + 1]):
            written.append(match.group(2) or match.group(5))
    elif head in ("sqlite3",) and len(ops) >= 2 and _SQL_CHANGE.search(" ".join(ops[1:])):
        written.append(ops[0])
    return written


def reading(command: SimpleCommand) -> tuple[str, str | None] | None:
    """("read", path) for a command that shows a file (`cat f`, `sed -n 1,9p f`, `grep x f`), else None."""
    words = command.argv
    if not words:
        return None
    head, args = words[0], list(words[1:])
    ops = operands(args)
    if head in READERS and ops:
        return "read", ops[-1]
    if head == "sed" and "-n" in args and len(ops) >= 2:
        return "read", ops[-1]
    if head in _SEARCHERS and len(ops) >= 2 and not any(a.startswith("-r") or a == "-R" for a in args):
        return "read", ops[-1]
    if command.reads and (head in READERS or head in ("python", "python3")):
        return "read", command.reads[0]
    return None


# -- changes and checks --------------------------------------------------------------------------
INCIDENTAL = re.compile(
    r"(^|/)(__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.coverage|\.cache)(/|$)|\.py[co]$"
)
"""Files a check writes as a side effect: never a change."""
NEVER_WRITES = frozenset({"echo", "printf", "true", "false", ":", "test", "[", "[[", "ls", "pwd", "cd"})
"""Commands that write no file unless redirected (a redirection makes them an edit)."""

_RUNNERS = frozenset({"pytest", "py.test", "tox", "nox"})
_SUBCOMMAND_RUNNERS = frozenset({"make", "npm", "yarn", "pnpm", "cargo", "go"})
_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")
_NOT_A_RUN = frozenset({"--help", "-h", "--version", "-V", "--collect-only", "--co"})


def names_changed(path: str, changed: set[str]) -> bool:
    """Whether a command's argument names one of the files the agent changed (by path suffix)."""
    tail = path.lstrip("./")
    return bool(tail) and any(e in (path, tail) or e.endswith("/" + tail) for e in changed)


def is_check(words: Sequence[str], changed: set[str]) -> bool:
    """Whether a command (its words, wrappers stripped) checks work: a test runner, or running what
    was changed (`python3 app.py`, `./run.sh`, `python3 -c "import app"`)."""
    if not words or any(w in _NOT_A_RUN for w in words[1:]):
        return False
    head, args = words[0], list(words[1:])
    base = head.rsplit("/", 1)[-1]
    if base in _RUNNERS:
        return True
    if base in _SUBCOMMAND_RUNNERS:
        return "test" in args[:2]
    ops = operands(args)
    if _PYTHON.match(base):
        if "-m" in args and args.index("-m") + 1 < len(args):
            return args[args.index("-m") + 1] in ("pytest", "unittest", "doctest")
        if "-c" in args and args.index("-c") + 1 < len(args):
            code = args[args.index("-c") + 1]
            stems = {e.rsplit("/", 1)[-1].removesuffix(".py") for e in changed if e.endswith(".py")}
            return any(re.search(rf"\b(import|from)\s+{re.escape(stem)}\b", code) for stem in stems)
        script = ops[0] if ops else ""
        return bool(script) and ("test" in script.rsplit("/", 1)[-1] or names_changed(script, changed))
    if base in ("bash", "sh"):
        script = ops[0] if ops else ""
        return bool(script) and ("test" in script.rsplit("/", 1)[-1] or names_changed(script, changed))
    if "/" in head:  # ./run_tests.sh, /app/bin/greet.sh
        return "test" in base or names_changed(head, changed)
    return False


# -- what a command may write, and which command a line runs ------------------------------------
_LOOKS = frozenset(
    {
        *READERS,
        *_SEARCHERS,
        "ls", "ll", "dir", "pwd", "echo", "printf", "true", "false", ":", "test", "[", "[[", "which", "type",
        "whereis", "whoami", "id", "printenv", "date", "uname", "hostname", "history", "ps", "free", "df", "du",
        "tree", "sort", "uniq", "cut", "tr", "column", "basename", "dirname", "realpath", "readlink", "jq", "hexdump",
        "strings", "md5sum", "sha256sum", "sha1sum", "cksum", "diff", "cmp", "comm", "sleep", "wait", "clear",
        "javap", "nproc", "lscpu", "locale", "tput", "seq", "expr", "getent", "ldd", "nm", "objdump", "readelf",
        "sed", "awk", "gawk", "find", "env",
    }
)  # fmt: skip
"""Commands that write no file and change nothing a later command sees, unless redirected or given an
option that writes (`sed -i`, `sort -o`, `find -delete`, an `awk` program that prints to a file)."""
_LOOK_SUBCOMMANDS = {
    "git": frozenset({"status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "grep", "remote", "describe",
                      "shortlog", "reflog", "check-ignore", "cat-file", "ls-tree", "whatchanged", "config"}),
    "pip": frozenset({"list", "show", "freeze", "check", "--version", "-V", "index"}),
    "pip3": frozenset({"list", "show", "freeze", "check", "--version", "-V", "index"}),
    "npm": frozenset({"ls", "list", "view", "outdated", "--version", "-v"}),
    "cargo": frozenset({"check", "clippy", "test", "tree", "metadata", "--version"}),
    "go": frozenset({"vet", "test", "list", "version", "env", "doc"}),
    "jar": frozenset({"tf", "-tf", "tvf", "-tvf", "t", "-t"}),
    "unzip": frozenset({"-l", "-v", "-t", "-Z"}),
    "tar": frozenset({"tf", "-tf", "tvf", "-tvf", "-t", "--list", "tzf", "-tzf"}),
    "conda": frozenset({"list", "info", "env"}),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info"}),
    "kubectl": frozenset({"get", "describe", "logs"}),
    "apt": frozenset({"list", "show", "search", "policy"}),
    "apt-cache": frozenset({"search", "show", "policy", "depends"}),
    "dpkg": frozenset({"-l", "-L", "-s", "--list", "--status"}),
}  # fmt: skip
"""Programs that write nothing when run with one of these sub-commands (`git status`, `jar tf`)."""
_CHECKERS = frozenset(
    {
        "pytest",
        "py.test",
        "mypy",
        "pyright",
        "flake8",
        "pylint",
        "shellcheck",
        "tsc",
        "jest",
        "vitest",
        "mocha",
        "rspec",
    }
)
"""Checkers that write nothing but caches (`INCIDENTAL`) unless told to fix (`--fix`, `-w`)."""
_FIXES = frozenset({"--fix", "--write", "-w", "--in-place", "-i", "--inplace", "--fix-only", "--emit"})
_VERSIONS = frozenset({"--version", "-V", "--help", "-h", "version"})
_PY_MAY_WRITE = re.compile(
    r"open\(|write|remove|unlink|rmtree|rename|\.replace\(|subprocess|system\(|popen|shutil|mkdir|makedirs|touch|"
    r"chmod|copy|move|save|to_csv|to_json|dump|exec\(|eval\(|call_command|migrate|create_all|commit\("
)
"""What `python -c` code must say to change a file: without any of it, the code only looks (a probe)."""
_OUTPUT_FILTERS = frozenset({"head", "tail", "less", "more", "cat", "wc", "sort", "uniq", "cut", "tr", "column", "nl"})
"""Programs that only shape what the command piped into them printed (`pytest | tail -5`)."""


def may_write(command: SimpleCommand) -> tuple[str, ...] | None:
    """The files one command may change, as written: `()` for a command that changes nothing a later
    command sees (looking around, a check, a listing of an archive), the files or globs it names or
    is known to produce (`sed -i f`, `> f`, `javac A.java` → `*.class`), and None where it may change
    any file or the environment a later command runs in (a script, a build, an install, `cd`, `export`)."""
    named = edits(command)
    if "?" in named:
        return None
    words = command.argv
    if not words or _changes_shell(command):
        return tuple(named)  # `cd`, `export X=1`: the shell's state, no file (`environment_change`)
    head, args = words[0].rsplit("/", 1)[-1], list(words[1:])
    if any(a in _VERSIONS for a in args[:1]):
        return tuple(named)
    if head in _LOOKS:
        if head == "env" and operands(args):
            return None  # `env X=1 cmd` wraps another program (strip_wrappers left it)
        if head == "find" and any(a in ("-delete", "-exec", "-execdir", "-fprint", "-ok") for a in args):
            return None
        if head in ("awk", "gawk") and any(">" in a or "system(" in a for a in args):
            return None
        if head == "sort" and any(a == "-o" or a.startswith("--output") for a in args):
            return None
        return tuple(named)
    sub = _LOOK_SUBCOMMANDS.get(head)
    if sub is not None and args and (args[0] in sub or (head == "git" and args[0] == "branch" and len(args) == 1)):
        if head == "git" and args[0] == "config" and len(operands(args)) > 2:
            return None  # `git config user.name x` sets a value
        return tuple(named)
    if _PYTHON.match(head) and "-c" in args[:-1] and not _PY_MAY_WRITE.search(args[args.index("-c") + 1]):
        return tuple(named)  # a probe (`python -c "import m; print(m.f(1))"`): it opens nothing to write
    if head in _CHECKERS or (_PYTHON.match(head) and args[:2] == ["-m", "pytest"]):
        return None if any(a in _FIXES for a in args) else tuple(named)
    if head in ("ruff", "black", "isort", "prettier", "eslint"):
        checking = (head == "ruff" and args[:1] == ["check"] and "--fix" not in args) or "--check" in args
        return tuple(named) if checking else None
    if head == "javac":
        folder = args[args.index("-d") + 1] if "-d" in args[:-1] else None
        return (*named, f"{folder.rstrip('/')}/*" if folder else "*.class")
    if head in ("gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "go") and (
        head != "go" or args[:1] == ["build"]
    ):
        if "-o" in args[:-1]:
            return (*named, args[args.index("-o") + 1])
        if head == "go":
            return None
        return (*named, "*.o" if "-c" in args else "a.out")
    if head in ("mkdir", "touch"):
        return (*named, *operands(args))  # the folders or empty files it names: no other file's content
    return None


_SHELL_STATE = frozenset(
    {"cd", "pushd", "popd", "export", "unset", "alias", "unalias", "set", "shopt", "ulimit", "umask"}
)
"""Builtins that change only the shell's own state (its folder, variables, options), never a file."""


def _changes_shell(command: SimpleCommand) -> bool:
    words = command.argv
    if not words:
        return bool(command.words)  # `X=1` alone, `export X=1` (read as its assignment)
    return words[0] in _SHELL_STATE or (
        words[0] in ("conda", "nvm", "pyenv") and words[1:2] in (("activate",), ("use",))
    )


def environment_change(text: str) -> str | None:
    """The commands of a line that change the state of the shell a later command runs in (`cd src`,
    `export X=1`, `source venv/bin/activate`, `conda activate x`), as one text, or None for a line that
    changes none. Two lines with the same text (`cd /testbed` before every command) leave the shell as
    the first one did."""
    changes = [
        " ".join(command.words)
        for command in read_commands(text)
        if _changes_shell(command) or (command.argv[:1] and command.argv[0] in ("source", "."))
    ]
    return "; ".join(changes) or None


def line_writes(text: str) -> tuple[str, ...] | None:
    """What every command of a line may change together (`may_write`): None if any may change anything."""
    written: list[str] = []
    for command in read_commands(text):
        files = may_write(command)
        if files is None:
            return None
        written += files
    return tuple(dict.fromkeys(w for w in written if not INCIDENTAL.search(w)))


def retry_key(text: str) -> str:
    """What a line runs, for telling a retry from a revised attempt: the words (wrappers and variable
    assignments set aside) of its commands that do something, without the commands that only look
    around before them (`ls; jar tf x.jar; javac X.java` runs what `javac X.java` runs) or only shape
    its output after a pipe (`pytest -q | tail -5`). A line that only looks around is keyed by all of it."""
    kept: list[str] = []
    looked: list[str] = []
    for command in read_commands(text):
        words = command.argv
        if not words:
            continue
        shown = " ".join((*words, *(f"> {w}" for w in command.writes)))
        if command.control == "|" and words[0] in _OUTPUT_FILTERS:
            continue
        if may_write(command) == () and not (words[0] in _CHECKERS or _PYTHON.match(words[0])):
            looked.append(shown)
            continue
        kept.append(shown)
    return "\x1f".join(kept or looked)


# -- checks that ran tests (issue 67 item 3) -----------------------------------------------------
SYSTEM_FOLDERS = ("/usr/", "/bin/", "/sbin/", "/lib/")
"""Where a test runner named by path must live to count: a path into the agent's folders (a
virtualenv, a link to `/bin/true`) is a program the agent made."""
_PYTHON_RUNNERS = {"pytest": "pytest", "unittest": "unittest", "doctest": "doctest"}
_NO_TESTS_MAKE = re.compile(r"No rule to make target|No targets specified and no makefile found|Nothing to be done")
_NO_TESTS_NPM = re.compile(r"Missing script|no test specified", re.IGNORECASE)
_PYTEST_SUMMARY = re.compile(r"\b[1-9]\d* (passed|failed|errors?|xfailed|xpassed)\b")
_UNITTEST_RAN = re.compile(r"^Ran ([1-9]\d*) tests? in ", re.MULTILINE)
_UNITTEST_LOADER_FAILED = re.compile(r"^ERROR: \S+ \(unittest\.loader\._FailedTest\b", re.MULTILINE)
_DOCTEST_RAN = re.compile(r"\b[1-9]\d* (passed and|tests? in|failures?\.)")
_CARGO_RAN = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed")


def test_runner(words: Sequence[str]) -> str | None:
    """The system test runner a command (its words, wrappers stripped) runs — `pytest`, `unittest`,
    `doctest`, `make`, `npm`, `cargo`, `go`, `tox`, `nox` — or None: anything else (a script or
    program of the agent's, whatever its name), a runner named by a path outside the system folders,
    `--help`/`--version`/`--collect-only`."""
    if not words or any(w in _NOT_A_RUN for w in words[1:]):
        return None
    head, args = words[0], list(words[1:])
    if "/" in head and not head.startswith(SYSTEM_FOLDERS):
        return None
    base = head.rsplit("/", 1)[-1]
    if base in ("pytest", "py.test"):
        return "pytest"
    if base in ("tox", "nox"):
        return base
    if base in ("make", "npm", "yarn", "pnpm", "cargo", "go") and "test" in args[:2]:
        return "npm" if base in ("yarn", "pnpm") else base
    if _PYTHON.match(base) and "-m" in args and args.index("-m") + 1 < len(args):
        return _PYTHON_RUNNERS.get(args[args.index("-m") + 1])
    return None


def reported_tests(runner: str, status: int | None, output: str) -> bool:
    """Whether a run of `runner` (`test_runner`) that exited `status` and printed `output` ran
    tests, passing or failing: pytest exiting 5 (none collected), unittest's `Ran 0 tests`, a
    missing module (`No module named pytest`; a test module unittest could not import, which it
    counts as a test run), make's `No rule to make target`, npm's `Missing script` are no check;
    nor is a run killed, timed out or not found (no status, 126, 127)."""
    if status is None or status in (126, 127) or status < 0 or status >= 128:
        return False
    if runner == "pytest":
        return status in (0, 1) and bool(_PYTEST_SUMMARY.search(output))
    if runner == "unittest":  # a module it could not import is counted as a test run: it is none
        ran = _UNITTEST_RAN.search(output)
        return status in (0, 1) and ran is not None and int(ran[1]) > len(_UNITTEST_LOADER_FAILED.findall(output))
    if runner == "doctest":
        return status in (0, 1) and bool(_DOCTEST_RAN.search(output))
    if runner == "make":
        return status in (0, 2) and not _NO_TESTS_MAKE.search(output)
    if runner == "npm":
        return status in (0, 1) and not _NO_TESTS_NPM.search(output)
    if runner == "cargo":
        return any(int(a) + int(b) > 0 for a, b in _CARGO_RAN.findall(output))
    if runner == "go":
        return status in (0, 1) and "no test files" not in output and bool(re.search(r"^(ok|FAIL|---)", output, re.M))
    return status in (0, 1)  # tox, nox: their environments' own runners report
