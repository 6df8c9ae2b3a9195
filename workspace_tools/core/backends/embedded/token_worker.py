"""The tokenizing worker process: the term ids of many texts, on another core.

Frames start with a tag byte (:data:`CONFIG`, :data:`PIECE`, :data:`TOKENS`); a job's reply
holds the new terms, terms per text and int32 ids in the worker's own vocabulary.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from array import array
from collections.abc import Sequence
from itertools import accumulate
from typing import Final

from workspace_tools.core.helper_process import read_frame, write_frame

__all__ = ["CONFIG", "HELLO", "PIECE", "REPLY", "TOKENS", "main", "pack_strings", "unpack_strings"]

CONFIG: Final = b"C"
"""Tag of the first frame: the tokenizer's settings."""
HELLO: Final = b"H"
"""Tag of the worker's greeting: the fingerprint of the tokenizer it built."""
PIECE: Final = b"P"
"""Tag of a piece of a term-ids job (its texts)."""
TOKENS: Final = b"T"
"""Tag of a term-ids job's end and of its reply."""
REPLY: Final = struct.Struct("=QQd")
"""A reply's head: bytes of its packed new terms, bytes of its lengths, seconds busy."""
_COUNT: Final = struct.Struct("=Q")
_UINT32: Final = "I" if array("I").itemsize == 4 else "L"


def pack_strings(strings: Sequence[str], *, tag: bytes = b"") -> bytes:
    """Strings as bytes: their count, their lengths (uint32, in code points), then UTF-8.

    Any ``str`` round-trips (lone surrogates too: ``surrogatepass``). ``tag`` goes first.
    """
    lengths = array(_UINT32, map(len, strings))
    text = "".join(strings).encode("utf-8", "surrogatepass")
    return b"".join([tag, _COUNT.pack(len(strings)), lengths.tobytes(), text])


def unpack_strings(data: bytes, *, spaced: bool = False) -> list[str]:
    """The inverse of :func:`pack_strings`.

    Args:
        data: What :func:`pack_strings` made.
        spaced: Decode with ``NEVER_IN_WORDS`` characters made spaces (for term ids).

    Raises:
        ValueError: ``data`` is not such bytes.
    """
    (count,) = _COUNT.unpack_from(data)
    lengths = array(_UINT32)
    start = _COUNT.size + 4 * count
    lengths.frombytes(data[_COUNT.size : start])
    utf8 = data[start:]
    if spaced:  # one character for one: the lengths still hold
        from workspace_tools.core.text.tokenizer import spaced_utf8

        utf8 = spaced_utf8(utf8)
    text = utf8.decode("utf-8", "surrogatepass")
    ends = list(accumulate(lengths))
    if (ends[-1] if ends else 0) != len(text):
        msg = "the packed strings do not add up"
        raise ValueError(msg)
    return [text[end - size : end] for size, end in zip(lengths, ends, strict=True)]


def main() -> None:
    """Answer the handshake, then every job, until the input ends (or an unknown frame)."""
    from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig

    source = os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False)
    sink = sys.stdout.buffer
    first = read_frame(source)
    if first is None or first[:1] != CONFIG:
        return
    tokenizer = Tokenizer(TokenizerConfig.from_dict(json.loads(first[1:])))
    write_frame(sink, HELLO + json.dumps({"fingerprint": tokenizer.fingerprint()}).encode())
    id_bytes, vocab = tokenizer.term_id_bytes, tokenizer.vocab
    known, busy, blobs = len(vocab), 0.0, []
    while (frame := read_frame(source)) is not None:
        tag = frame[:1]
        if tag == PIECE:
            started = time.perf_counter()
            blobs += [
                id_bytes(text, spaced=True) for text in unpack_strings(frame[1:], spaced=True)
            ]
            busy += time.perf_counter() - started
        elif tag == TOKENS:
            lengths = array("i", [len(blob) >> 2 for blob in blobs]).tobytes()
            terms = pack_strings(list(vocab)[known:] if len(vocab) > known else [])
            head = REPLY.pack(len(terms), len(lengths), busy)
            write_frame(sink, b"".join([TOKENS, head, terms, lengths, *blobs]))
            known, busy, blobs = len(vocab), 0.0, []
        else:
            return


if __name__ == "__main__":
    main()
