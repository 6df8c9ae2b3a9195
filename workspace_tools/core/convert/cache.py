"""A cache of converted document text keyed by the file's content hash (JSON files, no pickle)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.convert.dispatch import convert_bytes
from workspace_tools.core.convert.formats import DOCUMENT_EXTENSIONS, Converted
from workspace_tools.core.convert.limits import DEFAULT_LIMITS, ConversionLimits
from workspace_tools.core.errors import ConversionError, InvalidInputError
from workspace_tools.core.text.hashing import text_hash

__all__ = ["CONVERTER_VERSION", "CachedConverter", "ConversionCache"]

CONVERTER_VERSION: Final = "documents-2"
"""Bumped whenever the converters' output changes; older entries then read as misses."""

_BUDGET_REASONS: Final = ("time limit:", "memory limit:", "unpacked size limit:")
_MAX_OVER_BUDGET: Final = 1024
"""Content hashes of files over a budget remembered per cache (least recently met dropped)."""
_KEY: Final = re.compile(r"^[A-Za-z0-9_-]{8,128}$")


class ConversionCache:
    """Converted text on disk, one JSON file per content hash (``<dir>/<hash[:2]>/<hash>.json``).

    Writes are atomic; an unreadable entry is a miss.

    Example:
        >>> cache = ConversionCache(tmp_path / "converted")  # doctest: +SKIP
        >>> cache.get(digest) or cache.put(digest, convert_bytes(path, data))  # doctest: +SKIP
    """

    def __init__(
        self,
        directory: Path | str,
        *,
        version: str = CONVERTER_VERSION,
        limits: ConversionLimits | None = None,
    ) -> None:
        """Open (lazily create) the cache in ``directory``.

        Args:
            directory: Folder for the entries; created on the first ``put``.
            version: Converter version recorded in and required of every entry.
            limits: Budgets for converting a missing entry (default: ``DEFAULT_LIMITS``).
        """
        self.directory = Path(directory)
        self.version = version
        self.limits = limits or DEFAULT_LIMITS
        self._over_budget: OrderedDict[str, tuple[ConversionLimits, str, str]] = OrderedDict()
        self._over_budget_lock = threading.Lock()

    def get(self, content_hash: str) -> Converted | None:
        """The cached conversion of the bytes with this hash, or ``None`` on a miss.

        Raises:
            InvalidInputError: ``content_hash`` is not 8-128 characters of ``[A-Za-z0-9_-]``.
        """
        path = self._path(content_hash)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("version") != self.version:
            return None
        text, fmt, markdown, metadata = (
            raw.get("text"),
            raw.get("format"),
            raw.get("markdown"),
            raw.get("metadata"),
        )
        if not (
            isinstance(text, str)
            and isinstance(fmt, str)
            and isinstance(markdown, bool)
            and isinstance(metadata, dict)
        ):
            return None
        return Converted(text=text, format=fmt, markdown=markdown, metadata=metadata)

    def put(self, content_hash: str, converted: Converted) -> Converted:
        """Store ``converted`` under ``content_hash`` and return it.

        Raises:
            InvalidInputError: Bad ``content_hash``, or metadata that is not JSON-serialisable.
        """
        path = self._path(content_hash)
        record: dict[str, Any] = {
            "version": self.version,
            "format": converted.format,
            "markdown": converted.markdown,
            "metadata": converted.metadata,
            "text": converted.text,
        }
        try:
            payload = json.dumps(record, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            msg = f"conversion metadata of {content_hash} is not JSON-serialisable: {exc}"
            raise InvalidInputError(msg) from exc
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(payload)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return converted

    def convert(
        self, path: Path, data: bytes, digest: str | None = None, *, store: bool = True
    ) -> Converted:
        """Text of the file at ``path`` with bytes ``data``, via the cache (rich documents only).

        A file over a budget is remembered by content hash and fails at once when met again.

        Args:
            path: The file (its suffix picks the converter).
            data: Its bytes.
            digest: ``text_hash(data)`` when the caller has it already.
            store: Write a fresh conversion to the cache; ``False`` only reads.

        Raises:
            ConversionError: The file cannot be converted.
        """
        if path.suffix.lower() not in DOCUMENT_EXTENSIONS:
            return convert_bytes(path, data, limits=self.limits)
        if digest is None:
            digest = text_hash(data)
        cached = self.get(digest)
        if cached is not None:
            return cached
        with self._over_budget_lock:
            over = self._over_budget.get(digest)
        if over is not None and over[0] == self.limits:
            raise ConversionError(over[2].replace(over[1], path.name))
        try:
            converted = convert_bytes(path, data, limits=self.limits)
        except ConversionError as exc:
            if str(exc).startswith(_BUDGET_REASONS):
                with self._over_budget_lock:
                    self._over_budget[digest] = (self.limits, path.name, str(exc))
                    while len(self._over_budget) > _MAX_OVER_BUDGET:
                        self._over_budget.popitem(last=False)
            raise
        return self.put(digest, converted) if store else converted

    def prune(self, keep: Iterable[str]) -> int:
        """Delete every entry whose hash is not in ``keep``; return how many were deleted."""
        wanted = set(keep)
        removed = 0
        if not self.directory.is_dir():
            return 0
        for entry in self.directory.glob("*/*.json"):
            if entry.stem not in wanted:
                with contextlib.suppress(OSError):
                    entry.unlink()
                    removed += 1
        return removed

    def _path(self, content_hash: str) -> Path:
        if not _KEY.match(content_hash):
            msg = (
                f"content hash {content_hash!r} is not 8-128 characters of letters, digits, "
                "'-' or '_'; pass the hex digest of the file's bytes"
            )
            raise InvalidInputError(msg)
        return self.directory / content_hash[:2] / f"{content_hash}.json"


class CachedConverter:
    """``convert_bytes`` with an LRU keyed by path, size and mtime; ``disk``: read first."""

    def __init__(self, *, max_entries: int = 64, disk: ConversionCache | None = None) -> None:
        self.max_entries = max_entries
        self.disk = disk
        """A workspace's on-disk conversion cache to read from, or ``None``."""
        self._cache: OrderedDict[tuple[str, int, int], Converted] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, path: Path, data: bytes) -> Converted:
        """Text of the file at ``path`` whose bytes are ``data``."""
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        if self.disk is None:
            converted = convert_bytes(path, data)
        else:
            converted = self.disk.convert(path, data, store=False)
        with self._lock:
            self._cache[key] = converted
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return converted
