"""What code a single-turn completion offers: the block the sandbox runs, and whether there is one.

Lives beside the trajectory model because two layers need the same answer: training scores the
code it extracts, and the verifier coder explains failures by the code that ran.
"""

from __future__ import annotations

import re

CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)
"""A closed ```python (or ```py, or bare ```) block; group 1 is its code."""


def has_code_block(completion: str) -> bool:
    """Whether the answer holds a closed ```python (or bare ```) block."""
    return bool(CODE_BLOCK.search(completion))


def extract_code(completion: str, entry_point: str | None = None) -> str:
    """The code of a model's answer: the last ```python block that defines `entry_point` (a function,
    or a class such as LeetCode's `Solution`), else the
    last block, else the whole text. (A correct function followed by a usage-example block is the
    function: taking the last block blindly scored such answers 0.)"""
    blocks = CODE_BLOCK.findall(completion)
    if entry_point:
        defining = re.compile(
            rf"^\s*((async\s+)?def\s+{re.escape(entry_point)}\s*\(|class\s+{re.escape(entry_point)}\b)", re.M
        )
        chosen = [b for b in blocks if defining.search(b)]
        if chosen:
            return chosen[-1]
    return blocks[-1] if blocks else completion
