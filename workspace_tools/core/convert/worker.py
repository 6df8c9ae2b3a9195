"""The worker process that converts untrusted documents (started by ``convert.pool``).

Length-prefixed JSON frames on stdin/stdout; each job runs under ``RLIMIT_AS``/``RLIMIT_CPU``
with heavy optional libraries (numpy, pandas...) blocked.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.helper_process import read_frame, write_frame

__all__ = ["main"]

_PRELOAD: Final = (
    "pdfminer.high_level",
    "pdfminer.layout",
    "docx",
    "pptx",
    "openpyxl",
    "bs4",
    "markdownify",
    "lxml.etree",
    "email.parser",
    "workspace_tools.core.convert._pdf",
    "workspace_tools.core.convert._office",
    "workspace_tools.core.convert._web",
    "workspace_tools.core.convert._odt",
)
_BLOCKED: Final = (
    "numpy",
    "pandas",
    "scipy",
    "torch",
    "tensorflow",
    "matplotlib",
    "sentence_transformers",
    "faiss",
)
"""Libraries no converter needs (blocked)."""
_NEAR: Final = 32 << 20
"""Peak address space this close to the limit counts as having hit it."""


def _vm(field: str) -> int | None:
    """``VmSize``/``VmPeak`` of this process in bytes (Linux), else ``None``."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _preload() -> None:
    for blocked in _BLOCKED:
        sys.modules.setdefault(blocked, None)  # type: ignore[arg-type]
    for module in _PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)


class _Limits:
    """Sets and lifts the per-job resource limits (no-ops where ``resource`` is missing)."""

    def __init__(self) -> None:
        try:
            import resource
        except ImportError:  # pragma: no cover - Windows
            self.resource: Any = None
        else:
            self.resource = resource
        self.address_limit: int | None = None

    def apply(self, memory_bytes: int, seconds: float) -> None:
        res = self.resource
        if res is None:
            return
        size = _vm("VmSize")
        if size is not None and hasattr(res, "RLIMIT_AS"):
            self.address_limit = size + memory_bytes
            with contextlib.suppress(ValueError, OSError):
                res.setrlimit(res.RLIMIT_AS, (self.address_limit, res.RLIM_INFINITY))
        usage = res.getrusage(res.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        with contextlib.suppress(ValueError, OSError):
            res.setrlimit(res.RLIMIT_CPU, (int(used + 2 * seconds + 5), res.RLIM_INFINITY))

    def lift(self) -> None:
        res = self.resource
        if res is None:
            return
        with contextlib.suppress(ValueError, OSError):
            if hasattr(res, "RLIMIT_AS"):
                res.setrlimit(res.RLIMIT_AS, (res.RLIM_INFINITY, res.RLIM_INFINITY))
            res.setrlimit(res.RLIMIT_CPU, (res.RLIM_INFINITY, res.RLIM_INFINITY))

    def near_limit(self, margin: int = _NEAR) -> bool:
        """Whether this job's peak address space came within ``margin`` bytes of the limit."""
        peak = _vm("VmPeak")
        limit = self.address_limit
        return peak is not None and limit is not None and peak >= limit - margin


def _convert(job: dict[str, Any], data: bytes) -> dict[str, Any]:
    from workspace_tools.core.convert._documents import convert_document
    from workspace_tools.core.errors import ConversionError

    try:
        converted = convert_document(
            Path(job["name"]),
            data,
            unpacked_bytes=int(job["unpacked_bytes"]),
            memory_bytes=int(job["memory_bytes"]),
        )
    except ConversionError as exc:
        return {"ok": False, "error": str(exc), "limit": None}
    except MemoryError:
        return {"ok": False, "error": "", "limit": "memory"}
    return {
        "ok": True,
        "text": converted.text,
        "format": converted.format,
        "markdown": converted.markdown,
        "metadata": converted.metadata,
    }


def _encode(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogatepass")


def main() -> None:
    """Serve conversion jobs until end of input (or until a job ran out of memory)."""
    stdin = sys.stdin.buffer
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints never reach the protocol
    _preload()
    limits = _Limits()
    write_frame(out, b'{"ready": true}')
    while True:
        header = read_frame(stdin)
        data = read_frame(stdin) if header is not None else None
        if header is None or data is None:
            return
        job = json.loads(header)
        limits.apply(int(job["memory_bytes"]), float(job["seconds"]))
        encoded = None
        try:
            reply = _convert(job, data)
            del data
            encoded = _encode(reply)  # under the limit too
        except MemoryError:
            reply = {"ok": False, "error": "", "limit": "memory"}
        finally:
            limits.lift()
        heavy = limits.near_limit(int(job["memory_bytes"]) // 2)
        if limits.near_limit() and not reply["ok"]:
            reply = {"ok": False, "error": reply.get("error", ""), "limit": "memory"}
            encoded = None
        if encoded is None or not reply["ok"]:
            reply["exit"] = heavy
            encoded = _encode(reply)
        else:  # splice the flag in rather than encode the text twice
            encoded = encoded[:-1] + (b', "exit": true}' if heavy else b', "exit": false}')
        reply = {}
        write_frame(out, encoded)
        if heavy:
            return


if __name__ == "__main__":
    main()
