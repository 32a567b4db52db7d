"""A pydantic validation error as one line a person can act on: where, what, and what was given."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple


class FirstProblem(NamedTuple):
    """The first thing a validation error found wrong (callers add the fix that fits their input)."""

    where: str
    """The field's path, dotted with list indices in brackets (`steps[3].exit_code`); "" for the root."""
    message: str
    """pydantic's message, without the "Value error, " a validator's own ValueError carries."""
    kind: str
    """pydantic's error type (`missing`, `int_parsing`, `less_than_equal`, ...)."""
    value: Any
    """The value given (absent for a missing field)."""
    more: int
    """How many further problems the same error holds."""


def first_problem(exc: Any) -> FirstProblem:
    """The first of a `pydantic.ValidationError`'s errors."""
    errors = exc.errors()
    first = errors[0]
    return FirstProblem(
        dotted(first.get("loc", ())),
        str(first["msg"]).removeprefix("Value error, "),
        first["type"],
        first.get("input"),
        len(errors) - 1,
    )


def dotted(loc: Iterable[Any]) -> str:
    """`("steps", 3, "exit_code")` as `steps[3].exit_code`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
