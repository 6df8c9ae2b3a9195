"""The tokenizing worker process: term ids (and content kinds) of many texts, on another core.

Started by :class:`~workspace_tools.core.text.token_split.TokenWorker` as a plain subprocess
(``python -c`` importing this module from the parent's own package folder; not
``multiprocessing``, whose spawn re-imports the user's ``__main__`` and whose fork is unsafe in a
process with threads). It speaks length-prefixed frames on its stdin and stdout, with its parent
only, in plain bytes (no pickle: strings as UTF-8 with their lengths, ids as int32 arrays). Each
frame's first byte is its tag:

1. :data:`CONFIG` + JSON ``{"config": TokenizerConfig.to_dict(), "lazy": bool}``. Once it has
   built the tokenizer, the worker writes :data:`HELLO` + JSON ``{"fingerprint": ...}`` (the
   parent checks it is its own tokenizer) before any reply to a :data:`TOKENS` job. Not lazy: it
   builds it at once. Lazy (a :data:`KINDS` job is coming first): while it waits for that job
   (the parent stages the first texts meanwhile: ~35 ms of SciFact's build), else when a
   :data:`TOKENS` job comes or when it is idle after answering a :data:`KINDS` job, so kinds
   that are already there do not wait for the stemmer to load (~17 ms).
2. :data:`TOKENS` + the texts (:func:`pack_strings`) -> :data:`TOKENS` + :data:`REPLY` ``(terms
   bytes, lengths bytes, seconds busy)`` then the new terms, the terms per text and the ids: the
   texts' term ids in the worker's own vocabulary (native int32, one text after the other), with
   the terms that vocabulary gained since the last reply in the order they were numbered.
3. :data:`KINDS` + ``(source id, text, format)`` of each text, flat (:func:`pack_strings`) ->
   :data:`KINDS` + :data:`KIND_REPLY` then the kinds (``content_kind``), one byte each (an
   index into ``prior.KINDS``; :func:`answer_kinds`, asked by :mod:`.kind_split`).

Jobs are answered in the order they came. It exits at the end of its input (the parent closed
the pipe, or died) or on a frame it does not know.
"""

from __future__ import annotations

import json
import os
import select
import struct
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import IO, TYPE_CHECKING, Any, Final

from workspace_tools.core._frames import read_frame, write_frame

if TYPE_CHECKING:  # imported when first needed: a lazy worker answers kinds before that
    from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = [
    "CONFIG",
    "HELLO",
    "KINDS",
    "KIND_REPLY",
    "REPLY",
    "TOKENS",
    "answer_kinds",
    "main",
    "pack_strings",
    "read_frame",
    "unpack_strings",
    "write_frame",
]

CONFIG: Final = b"C"
"""Tag of the first frame: the tokenizer's settings."""
HELLO: Final = b"H"
"""Tag of the worker's greeting: the fingerprint of the tokenizer it built."""
TOKENS: Final = b"T"
"""Tag of a term-ids job and of its reply."""
KINDS: Final = b"K"
"""Tag of a content-kinds job and of its reply."""
KIND_REPLY: Final = struct.Struct("=Qd")
"""A kinds reply's head: how many kinds follow (one byte each), seconds busy."""
REPLY: Final = struct.Struct("=QQd")
"""A reply's head: bytes of its packed new terms, bytes of its lengths, seconds busy."""
_COUNT: Final = struct.Struct("=Q")
_UINT32: Final = "I" if array("I").itemsize == 4 else "L"


def pack_strings(strings: Sequence[str], *, tag: bytes = b"") -> bytes:
    """Strings as bytes: their count, their lengths (uint32, in code points), then UTF-8.

    Any ``str`` round-trips (lone surrogates too: ``surrogatepass``). ``tag`` goes first (a
    job's frame is made with one copy of the text).
    """
    lengths = array(_UINT32, map(len, strings))
    text = "".join(strings).encode("utf-8", "surrogatepass")
    return b"".join([tag, _COUNT.pack(len(strings)), lengths.tobytes(), text])


def unpack_strings(data: bytes, *, spaced: bool = False) -> list[str]:
    """The inverse of :func:`pack_strings`.

    Args:
        data: What :func:`pack_strings` made.
        spaced: Decode the strings with their ``NEVER_IN_WORDS`` characters made spaces
            (``tokenizer.spaced_utf8``: one ``bytes.translate`` of them all, for their term ids).

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


def serve(source: IO[bytes], sink: IO[bytes], *, waiting: Callable[[], bool] | None = None) -> None:
    """Answer the handshake, then every job, until ``source`` ends (or sends an unknown frame).

    Args:
        source: The parent's frames.
        sink: Where the replies go.
        waiting: Whether a frame is waiting in ``source`` (a lazy worker idle after a kinds job
            builds its tokenizer then); ``None``: it builds it only for a term-ids job.
    """
    first = read_frame(source)
    if first is None or first[:1] != CONFIG:
        return
    hello: dict[str, Any] = json.loads(first[1:])
    tokenizer = None if hello.get("lazy") else _greet(sink, hello["config"])
    if tokenizer is None:  # the kinds' module, loaded while the kinds are on the way
        from workspace_tools.core.ranking import prior  # noqa: F401

        if waiting is not None and not waiting():  # still on the way: the tokenizer too
            tokenizer = _greet(sink, hello["config"])
    while (frame := read_frame(source)) is not None:
        tag = frame[:1]
        if tag == KINDS:
            write_frame(sink, answer_kinds(unpack_strings(frame[1:])))
            if tokenizer is None and waiting is not None and not waiting():
                tokenizer = _greet(sink, hello["config"])
        elif tag == TOKENS:
            if tokenizer is None:
                tokenizer = _greet(sink, hello["config"])
            write_frame(sink, _term_ids(tokenizer, frame))
        else:
            return


def answer_kinds(strings: list[str]) -> bytes:
    """The reply to a :data:`KINDS` job: ``(source id, text, format)`` of each text, flat.

    Raises:
        ValueError: the strings do not come in threes.
    """
    from workspace_tools.core.ranking.prior import KINDS as NAMES
    from workspace_tools.core.ranking.prior import content_kind

    started = time.perf_counter()
    if len(strings) % 3:
        msg = f"a kinds job holds {len(strings)} strings, not (id, text, format) triples"
        raise ValueError(msg)
    codes = {kind: code for code, kind in enumerate(NAMES)}
    triples = zip(strings[0::3], strings[1::3], strings[2::3], strict=True)
    kinds = bytes(codes[content_kind(source, text, fmt=fmt)] for source, text, fmt in triples)
    return b"".join([KINDS, KIND_REPLY.pack(len(kinds), time.perf_counter() - started), kinds])


def _greet(sink: IO[bytes], config: dict[str, Any]) -> Tokenizer:
    """Build the tokenizer and tell the parent its fingerprint."""
    from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig

    tokenizer = Tokenizer(TokenizerConfig.from_dict(config))
    write_frame(sink, HELLO + json.dumps({"fingerprint": tokenizer.fingerprint()}).encode())
    return tokenizer


def _term_ids(tokenizer: Tokenizer, frame: bytes) -> bytes:
    """The reply to a :data:`TOKENS` job."""
    id_bytes = tokenizer.term_id_bytes
    vocab = tokenizer.vocab
    started = time.perf_counter()
    texts = unpack_strings(frame[1:], spaced=True)
    known = len(vocab)
    blobs = [id_bytes(text, spaced=True) for text in texts]
    lengths = array("i", [len(blob) >> 2 for blob in blobs]).tobytes()
    terms = pack_strings(list(vocab)[known:] if len(vocab) > known else [])
    head = REPLY.pack(len(terms), len(lengths), time.perf_counter() - started)
    return b"".join([TOKENS, head, terms, lengths, *blobs])


def main() -> None:
    """Serve the parent on stdin/stdout (stdin unbuffered: ``select`` then tells a frame waits)."""
    source = os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False)

    def waiting() -> bool:
        return bool(select.select([source], [], [], 0)[0])

    serve(source, sys.stdout.buffer, waiting=waiting)


if __name__ == "__main__":
    main()
