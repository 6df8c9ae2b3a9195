"""Fixtures of the reliability tests (defined in :mod:`tests.support.reliability`)."""

from tests.support.reliability import arena, file_audit

__all__ = ["arena", "file_audit"]
