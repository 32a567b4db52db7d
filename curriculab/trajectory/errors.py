"""The one error base. Every error a user can fix derives from `CurriculabError`, and its message
says the cause and the fix; the CLI prints such an error as `Error: <message>` (exit 1) wherever it
is raised, so no command wraps it by hand. Any other exception is a bug: the CLI says so and points
at `--debug`."""


class CurriculabError(Exception):
    """An error a user can fix: the message names what is wrong (the file, the record, the option)
    and what to do."""


class InputError(CurriculabError, ValueError):
    """A value the user gave (an option, a setting, a file, a name) or the store they pointed at
    cannot be used for what was asked; the message names it and what to give instead."""
