"""``-q``: results and errors only, third-party output (progress bars, warnings) included."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Final

__all__ = ["QUIET_ENV", "THIRD_PARTY_LOGGERS", "silence_third_party"]

QUIET_ENV: Final = {
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TQDM_DISABLE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
"""Environment switches the libraries read when imported (child processes inherit them)."""

THIRD_PARTY_LOGGERS: Final = (
    "bm25s",
    "nncf",
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "openvino",
    "filelock",
)
"""Loggers set to ERROR: bm25s sets its own to DEBUG, the others log progress as INFO."""


def _errors_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR


@contextlib.contextmanager
def silence_third_party() -> Iterator[None]:
    """Keep everything but results and errors off the terminal; undone on exit."""
    saved_env = {key: os.environ.get(key) for key in QUIET_ENV}
    names = ("", *THIRD_PARTY_LOGGERS, "workspace_tools")  # "": the root, for all the others
    saved_levels = {name: logging.getLogger(name).level for name in names}
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    for name in names:
        logging.getLogger(name).setLevel(logging.ERROR)
        # bm25s and nncf set their logger's level when imported, after this: a filter stays
        logging.getLogger(name).addFilter(_errors_only)
    console = None
    rich = sys.modules.get("rich")  # not imported here: the model conversion quiets nncf's bars
    if rich is not None:
        console = rich.get_console()
    was_quiet = console.quiet if console is not None else False
    if console is not None:
        console.quiet = True
    transformers_logging = sys.modules.get("transformers.utils.logging")
    verbosity = None
    if transformers_logging is not None:  # imported already: TRANSFORMERS_VERBOSITY is read
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        for key, old in saved_env.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        for name, level in saved_levels.items():
            logging.getLogger(name).setLevel(level)
            logging.getLogger(name).removeFilter(_errors_only)
        if console is not None:
            console.quiet = was_quiet
        if transformers_logging is not None and verbosity is not None:
            transformers_logging.set_verbosity(verbosity)
