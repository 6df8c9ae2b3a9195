"""A database connection whose next write ``COMMIT`` fails, as a full disk makes it fail."""

from __future__ import annotations

import sqlite3
from typing import Any


class CommitFails:
    """Wraps a connection: the first ``COMMIT`` after a ``BEGIN IMMEDIATE`` raises ``SQLITE_FULL``.

    Read transactions' ``COMMIT``\\ s pass; every statement is recorded in :attr:`statements`.
    Install it as ``ws._db._conn`` and put the real connection back afterwards.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.failed = False
        self.statements: list[str] = []
        self._writing = False

    def execute(self, sql: str, *args: Any) -> Any:
        self.statements.append(sql)
        if sql == "BEGIN IMMEDIATE":
            self._writing = True
        if sql == "COMMIT" and self._writing and not self.failed:
            self.failed = True
            msg = "database or disk is full"
            raise sqlite3.OperationalError(msg)
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)
