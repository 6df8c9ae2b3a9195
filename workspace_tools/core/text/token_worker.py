"""The tokenizing worker process: term ids of many texts, on another core.

Started by :class:`~workspace_tools.core.text.token_split.TokenWorker` as a plain subprocess
(``python -c`` importing this module from the parent's own package folder; not
``multiprocessing``, whose spawn re-imports the user's ``__main__`` and whose fork is unsafe in a
process with threads). It speaks length-prefixed frames on its stdin and stdout, with its parent
only, in plain bytes (no pickle: strings as UTF-8 with their lengths, ids as int32 arrays):

1. JSON ``{"config": TokenizerConfig.to_dict()}`` -> JSON ``{"fingerprint": ...}``: the tokenizer
   it built, which the parent checks is its own.
2. Each job, the texts (:func:`pack_strings`) -> :data:`REPLY` ``(terms bytes, lengths bytes,
   seconds busy)`` then the new terms, the terms per text and the ids: the texts' term ids in
   the worker's own vocabulary (native int32, one text after the other), with the terms that
   vocabulary gained since the last reply in the order they were numbered (first use).

It exits at the end of its input (the parent closed the pipe, or died).
"""

from __future__ import annotations

import json
import struct
import sys
import time
from array import array
from collections.abc import Sequence
from itertools import accumulate
from typing import IO, Any, Final

from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig

__all__ = ["REPLY", "main", "pack_strings", "read_frame", "unpack_strings", "write_frame"]

_HEADER: Final = struct.Struct(">Q")
REPLY: Final = struct.Struct("=QQd")
"""A reply's head: bytes of its packed new terms, bytes of its lengths, seconds busy."""
_COUNT: Final = struct.Struct("=Q")
_UINT32: Final = "I" if array("I").itemsize == 4 else "L"


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    """Write one length-prefixed frame (8-byte big-endian length, then the payload) and flush."""
    stream.write(_HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One frame's payload; ``None`` at the end of the input."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def pack_strings(strings: Sequence[str]) -> bytes:
    """Strings as bytes: their count, their lengths (uint32, in code points), then UTF-8.

    Any ``str`` round-trips (lone surrogates too: ``surrogatepass``).
    """
    lengths = array(_UINT32, map(len, strings))
    text = "".join(strings).encode("utf-8", "surrogatepass")
    return _COUNT.pack(len(strings)) + lengths.tobytes() + text


def unpack_strings(data: bytes) -> list[str]:
    """The inverse of :func:`pack_strings`.

    Raises:
        ValueError: ``data`` is not such bytes.
    """
    (count,) = _COUNT.unpack_from(data)
    lengths = array(_UINT32)
    start = _COUNT.size + 4 * count
    lengths.frombytes(data[_COUNT.size : start])
    text = data[start:].decode("utf-8", "surrogatepass")
    ends = list(accumulate(lengths))
    if (ends[-1] if ends else 0) != len(text):
        msg = "the packed strings do not add up"
        raise ValueError(msg)
    return [text[end - size : end] for size, end in zip(lengths, ends, strict=True)]


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Answer the handshake, then every job, until ``source`` ends."""
    first = read_frame(source)
    if first is None:
        return
    hello: dict[str, Any] = json.loads(first)
    tokenizer = Tokenizer(TokenizerConfig.from_dict(hello["config"]))
    write_frame(sink, json.dumps({"fingerprint": tokenizer.fingerprint()}).encode())
    id_bytes = tokenizer.term_id_bytes
    vocab = tokenizer.vocab
    while (frame := read_frame(source)) is not None:
        started = time.perf_counter()
        texts = unpack_strings(frame)
        known = len(vocab)
        blobs = [id_bytes(text) for text in texts]
        lengths = array("i", [len(blob) >> 2 for blob in blobs]).tobytes()
        terms = pack_strings(list(vocab)[known:] if len(vocab) > known else [])
        head = REPLY.pack(len(terms), len(lengths), time.perf_counter() - started)
        write_frame(sink, b"".join([head, terms, lengths, *blobs]))


def main() -> None:
    """Serve the parent on stdin/stdout."""
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
