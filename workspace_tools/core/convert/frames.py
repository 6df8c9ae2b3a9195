"""Length-prefixed frames on a pipe (the conversion pool's): ``core/_frames.py``."""

from __future__ import annotations

from workspace_tools.core._frames import read_frame, write_frame

__all__ = ["read_frame", "write_frame"]
