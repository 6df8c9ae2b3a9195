"""The one change-log follower: it owns the cursor that keeps derived state in step.

Each part (the source list, a search backend) says which version it holds, applies what changed
since or rebuilds; the log is read once for all. Own writes are applied from memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, Protocol

from workspace_tools.core.errors import IndexMismatchError
from workspace_tools.core.store.database import Changes, IndexDatabase, Writer
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = ["ChangeFollower", "Follows", "TokenizerCheck"]

_ATTEMPTS: Final = 3


class Follows(Protocol):
    """A part of the derived state that follows the change log."""

    def cursor(self) -> int | None:
        """Version held (``None``: nothing held, skip me; ``-1``: rebuild me)."""
        ...

    def apply(self, changes: Changes) -> None:
        """Apply what was committed after :meth:`cursor`."""
        ...

    def rebuild(self) -> None:
        """Load from the database in full."""
        ...

    def reset(self) -> None:
        """Forget what is loaded."""
        ...


class ChangeFollower:
    """Keeps its parts at the database's latest version (the Workspace holds the lock).

    Args:
        db: The index database.
    """

    def __init__(self, db: IndexDatabase) -> None:
        self.db = db
        self.parts: list[Follows] = []
        self.empty = False
        """Pretend the database is empty (``rebuild=True`` until its first commit)."""
        self._data_version: int | None = None
        self.refreshes = 0
        self.catch_ups = 0
        """Times the parts were caught up from the database rather than from own writes."""
        self.removals_read = 0
        """Chunk deletions caught up with from the database, plus reloads (read by ``save()``)."""

    def follow(self, part: Follows) -> None:
        """Keep ``part`` in step from now on."""
        self.parts.append(part)
        self._data_version = None

    def refresh(self, *, force: bool = False) -> None:
        """Apply what the database committed since the parts' versions (cheap when nothing)."""
        self.refreshes += 1
        if self.empty:
            return
        if not self.db.exists():  # no index yet: a part that holds nothing holds version 0
            for part in self.parts:
                if part.cursor() == -1:
                    part.apply(Changes(version=0))
            return
        data_version = self.db.data_version()
        if (
            not force
            and data_version == self._data_version
            and all(part.cursor() != -1 for part in self.parts)
        ):
            return
        self._data_version = data_version
        self.catch_ups += 1
        for part in self.parts:
            if part.cursor() == -1:
                part.rebuild()
                self.removals_read += 1
        for _ in range(_ATTEMPTS):
            held = [v for v in (part.cursor() for part in self.parts) if v is not None]
            if not held:
                return
            changes = self.db.changes_since(min(held))
            if changes is not None:
                self.removals_read += len(changes.removed_chunks)
                for part in self.parts:
                    if part.cursor() is not None:
                        part.apply(changes)
                return
            for part in self.parts:  # fell behind the pruned deletion log: reload
                part.reset()
                if part.cursor() == -1:
                    part.rebuild()
                    self.removals_read += 1
        msg = "The index changed too fast to catch up with; retry."
        raise RuntimeError(msg)

    def _from_memory(self, writer: Writer) -> bool:
        base = writer.version - 1
        return (
            writer.changed
            and not writer.cleared
            and all(c is None or c == base for c in (part.cursor() for part in self.parts))
        )

    def committed(self, writer: Writer) -> None:
        """Catch up after this process's write: from memory when nothing else came between."""
        cursors = [part.cursor() for part in self.parts]
        if self._from_memory(writer):
            changes = writer.changes  # built from the writer's maps once, for every part
            try:
                for part, cursor in zip(self.parts, cursors, strict=True):
                    if cursor is not None:
                        part.apply(changes)
            except BaseException:
                # Own commits leave data_version as it was: force the next refresh to read
                self._data_version = None
                raise
            if writer.data_version is not None:  # nothing else came between: up to date
                self._data_version = writer.data_version
            return
        self.refresh(force=True)

    def reset(self) -> None:
        """Forget every part's state (the next :meth:`refresh` loads again)."""
        for part in self.parts:
            part.reset()
        self._data_version = None


class TokenizerCheck:
    """Refuses to tokenize stored texts with a tokenizer other than the one the index records.

    Covers an index another process rebuilt since with other tokenizer settings.

    Args:
        tokenizer: The tokenizer of this process.
        directory: The index folder (for the message).
    """

    def __init__(self, tokenizer: Tokenizer, directory: Path) -> None:
        self.tokenizer = tokenizer
        self.directory = directory
        self._checked: str | None = None

    def __call__(self, settings: str | None) -> None:
        """Check the ``meta`` settings (JSON) read with the rows; ``None``: nothing recorded.

        Raises:
            IndexMismatchError: the recorded tokenizer differs from this process's.
        """
        if settings is None or settings == self._checked:
            return
        recorded = json.loads(settings).get("tokenizer")
        if recorded is not None and _rules(recorded) != _rules(self.tokenizer.fingerprint()):
            msg = (
                f"The index in {self.directory} is now tokenized with other settings "
                f"(index: {recorded}, this process: {self.tokenizer.fingerprint()}): another "
                "process rebuilt it, and the texts it holds would not give the terms it was "
                "built with here. Reopen the workspace with the index's tokenizer settings, or "
                "rebuild it with rebuild=True (CLI: --rebuild)."
            )
            raise IndexMismatchError(msg)
        self._checked = settings


def _rules(fingerprint: Any) -> Any:
    """A tokenizer fingerprint with its rules version (none recorded means 1)."""
    if not isinstance(fingerprint, dict):
        return fingerprint
    return {"rules": 1, **json.loads(json.dumps(fingerprint))}
