"""Errors raised by the workspace core (messages name the value, the rule and the fix)."""

from __future__ import annotations

__all__ = [
    "ConversionError",
    "IndexCorruptError",
    "IndexMismatchError",
    "InvalidInputError",
    "MissingDependencyError",
    "PathOutsideWorkspaceError",
    "ReadOnlyWorkspaceError",
    "SearchModeError",
    "SkillFormatError",
    "SkillNotFoundError",
    "SkillSourceError",
    "StorageError",
    "WorkspaceError",
]


class WorkspaceError(Exception):
    """Base class of every error the workspace core raises on purpose."""


class InvalidInputError(WorkspaceError, ValueError):
    """An argument breaks a documented rule (bad regex, empty id, weight out of range...)."""


class PathOutsideWorkspaceError(InvalidInputError):
    """A path resolves outside the folders the caller may read."""


class SearchModeError(InvalidInputError):
    """A search mode was asked for that this workspace is not configured for."""


class ReadOnlyWorkspaceError(WorkspaceError, PermissionError):
    """A write was attempted on a workspace opened read-only."""


class IndexMismatchError(WorkspaceError, ValueError):
    """The index on disk was built with settings that differ from the current ones."""


class IndexCorruptError(WorkspaceError, RuntimeError):
    """An index file on disk is truncated, tampered with or unreadable."""


class StorageError(WorkspaceError, OSError):
    """The index could not be read or written: disk full, folder not writable, locked too long."""


class ConversionError(WorkspaceError, ValueError):
    """A file could not be turned into text (binary, corrupt, encrypted, unsupported)."""


class MissingDependencyError(WorkspaceError, ImportError):
    """An optional dependency a feature needs is not installed (the message names the extra)."""


class SkillFormatError(WorkspaceError, ValueError):
    """A SKILL.md file breaks the Agent Skills format (raised in strict mode)."""


class SkillNotFoundError(WorkspaceError, LookupError):
    """No skill matches the given name or path, or the name is ambiguous."""


class SkillSourceError(WorkspaceError, RuntimeError):
    """A skill could not be fetched, published or read: git failed, a stored file is damaged."""
