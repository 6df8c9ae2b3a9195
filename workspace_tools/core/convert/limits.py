"""Budgets for converting one untrusted document: wall-clock seconds, memory, unpacked bytes.

Each budget has a default and can be set per format::

    ConversionLimits(seconds=10, memory_bytes=512 * 2**20, per_format={"pdf": {"seconds": 30}})
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from workspace_tools.core.convert.formats import DOCUMENT_FORMAT_NAMES
from workspace_tools.core.errors import InvalidInputError

__all__ = ["DEFAULT_LIMITS", "FORMATS", "Budget", "ConversionLimits", "format_bytes"]

MB: Final = 1 << 20
FORMATS: Final[frozenset[str]] = DOCUMENT_FORMAT_NAMES
"""Format names a per-format budget can name."""
_BUDGETS: Final = ("seconds", "memory_bytes", "unpacked_bytes")
_MIN_MEMORY: Final = 64 * MB


@dataclass(frozen=True, slots=True)
class Budget:
    """The resolved limits for converting one file of one format."""

    format: str
    seconds: float
    memory_bytes: int
    unpacked_bytes: int


@dataclass(frozen=True, kw_only=True)
class ConversionLimits:
    """Per-file budgets for converting rich documents, with per-format overrides.

    Raises:
        InvalidInputError: A bad budget, or an unknown format or budget in ``per_format``.
    """

    seconds: float = 10.0
    """Wall-clock seconds one conversion may take; the worker is killed after that."""
    memory_bytes: int = 512 * MB
    """Memory one conversion may allocate on top of the idle worker (``RLIMIT_AS``)."""
    unpacked_bytes: int = 512 * MB
    """Total unpacked size of the members of a ZIP-based document (DOCX, PPTX, XLSX, EPUB, ODT)."""
    per_format: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Overrides by format name, e.g. ``{"pdf": {"seconds": 30}}``."""
    isolate: bool = True
    """Convert in worker processes (POSIX); ``False``: in this process (only ``unpacked_bytes``)."""

    def __post_init__(self) -> None:
        _check("seconds", self.seconds, "")
        _check("memory_bytes", self.memory_bytes, "")
        _check("unpacked_bytes", self.unpacked_bytes, "")
        for fmt, overrides in self.per_format.items():
            if fmt not in FORMATS:
                msg = (
                    f"ConversionLimits: unknown format {fmt!r} in per_format; the formats are "
                    f"{', '.join(sorted(FORMATS))}."
                )
                raise InvalidInputError(msg)
            for key, value in overrides.items():
                if key not in _BUDGETS:
                    msg = (
                        f"ConversionLimits: unknown budget {key!r} for {fmt}; the budgets are "
                        f"{', '.join(_BUDGETS)}."
                    )
                    raise InvalidInputError(msg)
                _check(key, value, f" (per_format[{fmt!r}])")

    def budget(self, fmt: str) -> Budget:
        """The budgets for a file of format ``fmt`` (the defaults with its overrides)."""
        overrides = self.per_format.get(fmt, {})
        return Budget(
            format=fmt,
            seconds=float(overrides.get("seconds", self.seconds)),
            memory_bytes=int(overrides.get("memory_bytes", self.memory_bytes)),
            unpacked_bytes=int(overrides.get("unpacked_bytes", self.unpacked_bytes)),
        )


def _check(name: str, value: object, where: str) -> None:
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
    if not ok:
        msg = f"ConversionLimits: {name}{where} must be a number above 0, got {value!r}."
        raise InvalidInputError(msg)
    if name == "memory_bytes" and value < _MIN_MEMORY:  # type: ignore[operator]
        msg = (
            f"ConversionLimits: memory_bytes{where} must be at least {_MIN_MEMORY} (64 MB), got "
            f"{value!r}; a converter needs room for the document and its text."
        )
        raise InvalidInputError(msg)


def format_bytes(size: float) -> str:
    """``512 MB``, ``1.5 GB``, ``64 KB``: sizes in messages."""
    for unit, scale in (("GB", 1 << 30), ("MB", MB), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} bytes"


DEFAULT_LIMITS: Final = ConversionLimits()
"""10 s, 512 MB of memory and 512 MB unpacked per file, in worker processes."""
