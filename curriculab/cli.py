"""The `curriculab` command: the group, its error handling, and the commands of
`curriculab.commands`, each loaded when it runs. No logic lives here."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from curriculab import commands
from curriculab.analysis.store import DEFAULT_DB
from curriculab.commands.common import CliError
from curriculab.trajectory.errors import CurriculabError


class _Group(click.Group):
    """Turns library errors into `Error: ...` lines; `--debug` shows the traceback instead. Its
    commands load on first use: a command imports its own module, not every stage's."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(commands.HOMES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return commands.load(cmd_name) if cmd_name in commands.HOMES else None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # `curriculab query ... | head`: the reader has all it wanted
            _silence_stdout()
            raise click.exceptions.Exit(0) from None
        except Exception as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            if isinstance(exc, CurriculabError):  # a user's to fix: its message says how
                raise CliError(str(exc)) from None
            raise CliError(
                f"unexpected {type(exc).__name__}: {exc}. Re-run with --debug for the traceback and report it"
            ) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `--debug` is accepted after the command name too (`curriculab report --debug`)
        head, sep, tail = (
            (args[: args.index("--")], ["--"], args[args.index("--") + 1 :]) if "--" in args else (args, [], [])
        )
        if "--debug" in head[1:]:
            head = ["--debug"] + [a for a in head if a != "--debug"]
        return super().parse_args(ctx, head + sep + tail)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--db",
    default=None,
    envvar="CURRICULAB_DB",
    metavar="PATH",
    help=f"DuckDB file (default: $CURRICULAB_DB or ./{DEFAULT_DB}).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="curriculab", prog_name="curriculab")
@click.pass_context
def cli(ctx: click.Context, db: str | None, debug: bool) -> None:
    """Turn coding-agent trajectories into the next round of training data.

    \b
    Example:
      curriculab ingest runs/ && curriculab query "select model, count(*) from trajectories group by 1"
    """
    ctx.ensure_object(dict)
    ctx.obj.update(db=db or DEFAULT_DB, debug=debug)


def main() -> None:
    cli(prog_name="curriculab")


if __name__ == "__main__":
    main()
