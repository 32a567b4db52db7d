"""A training run prints one progress bar and one line per step: while it runs, Hugging Face's own
bars (dataset splits, loading weights, writing shards) are off, and library warnings and log
records go to a file in the run's folder instead of the terminal."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

LOG_NAME = "libraries.log"
"""The file in the run's output folder that library warnings and log records go to."""

_LOGGERS = ("transformers", "datasets", "trl", "accelerate", "torch")


@contextmanager
def library_output_to(log: Path) -> Iterator[None]:
    """Route library bars, warnings and log records away from the terminal into `log` while the
    block runs; everything is as it was afterwards (a notebook or another caller keeps its own)."""
    import datasets
    from transformers.utils import logging as hf_logging

    log.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    bars = hf_logging.is_progress_bar_enabled(), not datasets.are_progress_bars_disabled()
    propagate = {name: logging.getLogger(name).propagate for name in _LOGGERS}
    shown = warnings.showwarning

    def to_log(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        handler.emit(
            logging.LogRecord(
                "py.warnings",
                logging.WARNING,
                filename,
                lineno,
                warnings.formatwarning(message, category, filename, lineno, line).rstrip(),
                None,
                None,
            )
        )

    hf_logging.disable_progress_bar()
    datasets.disable_progress_bars()
    hf_logging.disable_default_handler()
    for name in _LOGGERS:
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).propagate = False
    warnings.showwarning = to_log
    try:
        yield
    finally:
        warnings.showwarning = shown
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).propagate = propagate[name]
        hf_logging.enable_default_handler()
        if bars[0]:
            hf_logging.enable_progress_bar()
        if bars[1]:
            datasets.enable_progress_bars()
        handler.close()
