"""Starting over (``rebuild=True``) and opening older indexes.

The format-1 reader and its conversion live in :mod:`workspace_tools.core.store._format1`;
``migrate_legacy`` and ``remove_legacy`` are re-exported here, the store's one entry point for
index formats.
"""

from __future__ import annotations

import logging
import shutil

from workspace_tools.core.store._format1.convert import migrate_legacy, remove_legacy
from workspace_tools.core.store.database import DB_NAME, IndexDatabase

__all__ = ["clear_index", "migrate_legacy", "remove_legacy"]

logger = logging.getLogger(__name__)


def clear_index(db: IndexDatabase) -> bool:
    """Prepare ``rebuild=True``; returns whether the first commit must clear the database.

    A healthy database is cleared by the first commit, in the same transaction (an interrupted
    rebuild leaves the old index). A damaged one cannot be trusted to do that: it is deleted now.
    """
    if not db.path.exists():
        remove_legacy(db.directory)
        return False
    if db.quick_check():
        return True
    db.close()
    logger.warning("Deleting the damaged index database %s to rebuild it", db.path)
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        (db.directory / name).unlink(missing_ok=True)
    for path in db.directory.glob("snapshot-*"):
        shutil.rmtree(path, ignore_errors=True)
    remove_legacy(db.directory)
    return False
