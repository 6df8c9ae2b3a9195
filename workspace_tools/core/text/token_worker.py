"""The tokenizing worker process: term ids of many texts, on another core.

Started by :class:`~workspace_tools.core.text.token_split.TokenWorker` as a plain subprocess
(``python -c`` importing this module from the parent's own package folder; not
``multiprocessing``, whose spawn re-imports the user's ``__main__`` and whose fork is unsafe in a
process with threads). It speaks length-prefixed pickle frames on its stdin and stdout, with its
parent only (no data from the indexed folder is ever unpickled: the texts arrive as strings):

1. ``{"config": TokenizerConfig.to_dict()}`` -> ``{"fingerprint": ..., "module": ...}``: the
   tokenizer it built, which the parent checks is its own.
2. Each job, ``list[str]`` -> ``(new_terms, lengths, ids, busy)``: the texts' term ids in the
   worker's own vocabulary (``ids``: native int32 bytes, one text after the other; ``lengths``:
   int32 bytes, terms per text), the terms that vocabulary gained since the last reply in the
   order they were numbered (first use), and the seconds the job took.

It exits at the end of its input (the parent closed the pipe, or died).
"""

from __future__ import annotations

import pickle
import struct
import sys
import time
from typing import IO, Any, Final

from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig

__all__ = ["main", "read_frame", "write_frame"]

_HEADER: Final = struct.Struct(">Q")


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


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Answer the handshake, then every job, until ``source`` ends."""
    first = read_frame(source)
    if first is None:
        return
    hello: dict[str, Any] = pickle.loads(first)  # noqa: S301 - our own parent's frame
    tokenizer = Tokenizer(TokenizerConfig.from_dict(hello["config"]))
    import workspace_tools.core.text.tokenizer as module

    reply = {"fingerprint": tokenizer.fingerprint(), "module": module.__file__}
    write_frame(sink, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
    id_bytes = tokenizer.term_id_bytes
    vocab = tokenizer.vocab
    while (frame := read_frame(source)) is not None:
        started = time.perf_counter()
        texts: list[str] = pickle.loads(frame)  # noqa: S301 - our own parent's frame
        known = len(vocab)
        blobs = [id_bytes(text) for text in texts]
        lengths = struct.pack(f"={len(blobs)}i", *(len(blob) >> 2 for blob in blobs))
        new_terms = list(vocab)[known:] if len(vocab) > known else []
        busy = time.perf_counter() - started
        out = (new_terms, lengths, b"".join(blobs), busy)
        write_frame(sink, pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))


def main() -> None:
    """Serve the parent on stdin/stdout."""
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
