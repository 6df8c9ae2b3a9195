"""Fixtures of the reliability tests (defined in :mod:`reliability_support`)."""

from reliability_support import arena, file_audit

__all__ = ["arena", "file_audit"]
