"""The limits of :mod:`workspace_tools.core.grep`, in a module that imports nothing (CLI help)."""

from __future__ import annotations

from typing import Final

__all__ = [
    "DEFAULT_MAX_MATCHES",
    "DEFAULT_MAX_PER_FILE",
    "DEFAULT_WIDTH",
    "FILE_TIMEOUT",
    "MAX_GROUP_DEPTH",
    "MAX_LINE_CHARS",
    "MAX_PATTERN_CHARS",
    "TOTAL_TIMEOUT",
]

DEFAULT_MAX_MATCHES: Final = 200
"""Matching lines returned by default before the search stops (``truncated`` is then set)."""
DEFAULT_MAX_PER_FILE: Final = 50
"""Matching lines taken from one file by default."""
MAX_LINE_CHARS: Final = 10_000
"""Only this many leading characters of a line are searched."""
MAX_GROUP_DEPTH: Final = 100
"""Deepest group nesting a regex may have (deeper patterns exhaust the compiler's stack)."""
MAX_PATTERN_CHARS: Final = 1000
FILE_TIMEOUT: Final = 1.0
"""Seconds of matching allowed per file; a file over budget is reported in ``timed_out``."""
TOTAL_TIMEOUT: Final = 10.0
"""Seconds of matching allowed for the whole search; over it, the search stops (truncated)."""
DEFAULT_WIDTH: Final = 200
"""Characters of a line shown around its hits."""
