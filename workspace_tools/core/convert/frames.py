"""Length-prefixed frames on a pipe: 8-byte big-endian length, then the payload."""

from __future__ import annotations

import struct
from typing import IO, Final

__all__ = ["read_frame", "write_frame"]

_HEADER: Final = struct.Struct(">Q")


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    """Write one length-prefixed frame and flush."""
    stream.write(_HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> bytes | None:
    """Read one frame; ``None`` at end of input."""
    head = _read_exact(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    return _read_exact(stream, size)


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    parts: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
