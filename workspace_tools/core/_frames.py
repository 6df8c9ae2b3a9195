"""Length-prefixed frames on a pipe: an 8-byte big-endian length, then the payload.

What the package's helper processes speak with their parent (the conversion pool,
``convert/worker.py``, and the tokenizing worker, ``text/token_worker.py``). Imports nothing but
the standard library: a helper process starts with it before anything heavy.
"""

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
    """One frame's payload; ``None`` at the end of the input.

    ``stream`` may be unbuffered (a read then returns what the pipe holds: read until whole).
    """
    head = _read_exactly(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    return _read_exactly(stream, size)


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    first = stream.read(size)
    if first is None or len(first) == size:
        return first
    parts = [first]
    left = size - len(first)
    while left:
        part = stream.read(left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
