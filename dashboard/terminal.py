"""The agent's own terminal in the trajectory viewer, where the run keeps it: its time against the
task's limit, the final screen (Terminal-Bench's `panes/post-agent.txt`) and where the asciinema
recording is (`sessions/agent.cast`, played with `asciinema play PATH`). The store keeps paths; the
screen is read from the run's folder when shown."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from curriculab.dashboard.common import read

SCREEN_LINES = 400
"""Lines of the final screen drawn (its end: what the agent did last)."""


def time_text(terminal: dict[str, object]) -> str | None:
    """`agent ran 10m 0s of its 10m 0s limit (100%)`, or None where no time was recorded."""
    agent_s, trial_s, limit_s = terminal["agent_s"], terminal["trial_s"], terminal["limit_s"]
    seconds = agent_s if isinstance(agent_s, float) else trial_s if isinstance(trial_s, float) else None
    if seconds is None:
        return None
    whose = "the agent ran" if isinstance(agent_s, float) else "the trial (setup and tests included) ran"
    text = f"{whose} {_duration(seconds)}"
    if isinstance(limit_s, float) and limit_s > 0:
        text += f" of the task's {_duration(limit_s)} limit ({100 * seconds / limit_s:.0f}%)"
    return text


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest}s" if minutes else f"{rest}s"


def show_terminal(trajectory_id: str) -> None:
    """The time line and, where the run keeps them, the final screen and the recording's path."""
    terminal = read("trajectory_terminal", trajectory_id=trajectory_id)
    said = time_text(terminal)
    if said:
        st.caption(f"Time: {said}.")
    panes, recording = terminal["panes"], terminal["recording"]
    if not panes and not recording:
        return
    with st.expander("Agent's terminal (final screen)", expanded=False):
        if recording:
            st.caption(f"Recording: `{recording}` (play it with `asciinema play`).")
        if panes:
            path = Path(str(panes))
            try:
                lines = path.read_text(errors="replace").splitlines()
            except OSError as exc:
                st.warning(f"The final screen was at `{path}` and cannot be read now ({exc.strerror}).")
                return
            cut = len(lines) - SCREEN_LINES
            if cut > 0:
                st.caption(f"The last {SCREEN_LINES} of {len(lines):,} lines.")
            st.code("\n".join(lines[-SCREEN_LINES:]), language=None)
