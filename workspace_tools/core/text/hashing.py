"""The one content hash: change detection, the embedding cache and the conversion cache key."""

from __future__ import annotations

import hashlib

__all__ = ["text_hash"]


def text_hash(text: str | bytes) -> str:
    """Content hash used for change detection and the embedding cache (BLAKE2b, 128 bits)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=16).hexdigest()
