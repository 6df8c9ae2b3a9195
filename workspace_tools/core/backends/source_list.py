"""The source list: every indexed source, over the database, whatever the search backend."""

from __future__ import annotations

from collections.abc import Iterable

from workspace_tools.core.backends.follow import ChangeFollower
from workspace_tools.core.store.database import Changes, SourceRecord

__all__ = ["SourceList"]


class SourceList:
    """Sources by id, in step with the database.

    Args:
        follower: The change-log follower of the workspace (the catalogue follows through it).
    """

    def __init__(self, follower: ChangeFollower) -> None:
        self.follower = follower
        self.db = follower.db
        self._sources: dict[str, SourceRecord] | None = None
        self._version = -1
        follower.follow(self)

    def all(self) -> dict[str, SourceRecord]:
        """Every source (loaded on first use, then kept up to date by the follower)."""
        if self.follower.empty or not self.db.exists():
            return {}
        if self._sources is None:
            self.rebuild()
            self.follower.refresh(force=True)
        assert self._sources is not None
        return self._sources

    def get(self, source_id: str) -> SourceRecord | None:
        """One source, without loading them all."""
        return self.get_many([source_id])[source_id]

    def get_many(self, source_ids: Iterable[str]) -> dict[str, SourceRecord | None]:
        """:meth:`get` of each id (``None``: not stored), the database looked for once."""
        if self.follower.empty or not self.db.exists():
            return dict.fromkeys(source_ids)
        if self._sources is not None:
            return {i: self._sources.get(i) for i in source_ids}
        return {i: self.db.source(i) for i in source_ids}

    def cursor(self) -> int | None:
        """The version of the loaded rows (``None``: none loaded, nothing to follow)."""
        return None if self._sources is None else self._version

    def apply(self, changes: Changes) -> None:
        """Apply sources written and deleted after the loaded version."""
        if self._sources is None or self._version >= changes.version:
            return
        fresh = changes.after(self._version)
        for removed in fresh.removed_sources:
            self._sources.pop(removed.source_id, None)
        for changed in fresh.sources:
            self._sources[changed.record.id] = changed.record
        self._version = changes.version

    def rebuild(self) -> None:
        """Read every source row."""
        version, rows = self.db.sources_at()
        self._sources = {r.id: r for r in rows}
        self._version = version

    def start_empty(self, version: int) -> None:
        """Hold no source at ``version`` (a database known to be empty then), without a read."""
        self._sources, self._version = {}, version

    def reset(self) -> None:
        """Forget the loaded rows."""
        self._sources, self._version = None, -1
