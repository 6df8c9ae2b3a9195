"""Peak RSS of the conversion worker on decompression bombs (issue 28, item 17).

Run: ``.venv/bin/python tests/benchmarks/conversion_memory.py [SECONDS]``. Each bomb is converted
in a fresh worker with the default memory budget (512 MB) and a time budget of SECONDS (default
60, so that a loaded machine measures memory, not the 10 s time limit); a thread samples the
worker's ``VmHWM`` (the kernel's RSS high-water mark) every 5 ms. Prints the idle RSS/VmSize of a
worker and, per bomb, the outcome and the peak RSS.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support import hostile_files as hf
from tests.support.worker_memory import proc_status, run_measured
from workspace_tools.core.convert import pool

MB = 1 << 20


def bombs() -> dict[str, tuple[str, bytes]]:
    """The four bombs of the issue, built in memory."""
    return {
        "pdf (inflates to 512 MB)": ("bomb.pdf", hf.pdf_flate_bomb(512 * MB)),
        "epub (unpacks to 40 MB)": ("bomb.epub", hf.epub_bomb(40 * MB)),
        "odt (1.5M paragraphs)": ("bomb.odt", hf.odt_bomb(1_500_000)),
        "html (unclosed <li>)": ("bomb.html", hf.unclosed_li_html(700_000)),
    }


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    worker = pool._Worker()
    idle = proc_status(worker.process.pid)
    worker.kill()
    print(
        f"idle worker: RSS {idle['VmRSS'] / MB:.0f} MB, VmSize {idle['VmSize'] / MB:.0f} MB, "
        f"{idle['Threads']} thread(s)"
    )
    for label, (name, data) in bombs().items():
        outcome, peak, elapsed = run_measured(name, data, seconds=seconds)
        print(
            f"{label:28} {len(data) / 1024:8.0f} KB  peak RSS {peak / MB:6.0f} MB  "
            f"{elapsed:5.1f} s  {outcome}"
        )


if __name__ == "__main__":
    main()
