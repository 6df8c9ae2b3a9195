"""Run one job in a fresh conversion worker and measure its peak RSS (Linux ``/proc``)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from workspace_tools.core.convert import pool
from workspace_tools.core.convert.limits import DEFAULT_LIMITS

__all__ = ["proc_status", "run_measured"]


def proc_status(pid: int) -> dict[str, int]:
    """``VmRSS``, ``VmHWM``, ``VmSize``, ``VmPeak`` (bytes) and ``Threads`` of a process."""
    out = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in {"VmRSS", "VmHWM", "VmSize", "VmPeak"}:
                    out[key] = int(value.split()[0]) * 1024
                elif key == "Threads":
                    out[key] = int(value)
    except OSError:
        pass
    return out


def run_measured(name: str, data: bytes, *, seconds: float | None = None) -> tuple[str, int, float]:
    """Convert ``data`` in a new worker (default budgets); ``(outcome, peak RSS, seconds)``.

    A thread samples the worker's ``VmHWM`` (the kernel's RSS high-water mark) every 5 ms.
    """
    worker = pool._Worker()
    pid = worker.process.pid
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, proc_status(pid).get("VmHWM", 0))
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    budget = DEFAULT_LIMITS.budget(Path(name).suffix.lstrip("."))
    wall = budget.seconds if seconds is None else seconds
    header = json.dumps(
        {
            "name": name,
            "format": budget.format,
            "seconds": wall,
            "memory_bytes": budget.memory_bytes,
            "unpacked_bytes": budget.unpacked_bytes,
        }
    ).encode()
    started = time.monotonic()
    try:
        reply = worker.run(header, data, started + wall)
    finally:
        elapsed = time.monotonic() - started
        done.set()
        thread.join()
        worker.kill()
    if reply is None:
        outcome = "time limit" if elapsed >= wall else "worker died"
    elif reply.get("ok"):
        outcome = f"converted ({len(reply['text'])} chars)"
    elif reply.get("limit") == "memory":
        outcome = "memory limit"
    else:
        outcome = f"error: {str(reply.get('error'))[:80]}"
    return outcome, peak, elapsed
