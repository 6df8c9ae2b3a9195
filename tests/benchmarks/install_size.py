"""Install size, package count and time of the built wheel in a fresh venv (README's table).

    .venv/bin/python tests/benchmarks/install_size.py            # base install
    .venv/bin/python tests/benchmarks/install_size.py vector     # + "[vector]" with CPU torch

Builds the wheel of this checkout, creates a venv with the interpreter's base Python, installs
the wheel (with the extra) with ``--no-cache-dir`` from the configured package index, then
prints one Markdown row: packages (``pip list``, pip and setuptools included), ``du -sh`` of
the venv, wall time of the install, and when it ran.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TORCH = "torch==2.13.0"
"""The CPU build the project machine's mirror holds (see the README)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("extra", nargs="?", help="an extra to install with the wheel (vector...)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(REPO)],
            check=True,
        )
        (wheel,) = work.glob("workspace_tools-*.whl")
        env = work / "venv"
        subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", str(env)], check=True)
        target = f"{wheel}[{args.extra}]" if args.extra else str(wheel)
        extra = [TORCH] if args.extra == "vector" else []
        started = dt.datetime.now(dt.timezone.utc)
        clock = time.perf_counter()
        subprocess.run(
            [str(env / "bin" / "pip"), "install", "--no-cache-dir", "-q", *extra, target],
            check=True,
        )
        seconds = time.perf_counter() - clock
        listed = subprocess.run(
            [str(env / "bin" / "pip"), "list", "--format=freeze"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        size = subprocess.run(
            ["du", "-sh", str(env)], check=True, capture_output=True, text=True
        ).stdout.split()[0]
    what = f'"workspace-tools[{args.extra}]"' if args.extra else "workspace-tools"
    print(f"| `pip install {what}` | {len(listed)} | {size} | {seconds:.0f} s |")
    print(f"(measured {started:%Y-%m-%d %H:%M} UTC, Python {sys.version.split()[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
