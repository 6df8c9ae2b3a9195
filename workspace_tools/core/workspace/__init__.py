"""The workspace: a folder (and any text a program adds) indexed for bm25, vector, hybrid search.

:class:`Workspace` is the public facade; everything else in this package is internal.
"""

from workspace_tools.core.workspace._lines import DEFAULT_READ_CHARS, MIN_READ_CHARS, TextPage
from workspace_tools.core.workspace._watch import Watcher, WatchStats
from workspace_tools.core.workspace._workspace import MAX_QUERY_CHARS, Workspace
from workspace_tools.core.workspace.reporting import ProgressListener, progress_listener

__all__ = [
    "DEFAULT_READ_CHARS",
    "MAX_QUERY_CHARS",
    "MIN_READ_CHARS",
    "ProgressListener",
    "TextPage",
    "WatchStats",
    "Watcher",
    "Workspace",
    "progress_listener",
]
