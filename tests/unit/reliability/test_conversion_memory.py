"""The conversion worker starts lean, so a bomb peaks under 768 MB of RSS in all.

The memory budget (512 MB by default) is an address-space limit on top of the idle worker, so
the idle worker's size counts: before, it imported numpy (through openpyxl) with its BLAS
threads, and an idle worker weighed 204 MB of address space here (several hundred MB on a
machine with many cores), for peaks of 800 MB to 1.1 GB there.
"""

from __future__ import annotations

import sys

import pytest

from tests.support import hostile_files as hf
from tests.support.worker_memory import proc_status, run_measured
from workspace_tools.core.convert import pool

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

MB = 1 << 20


def test_the_idle_worker_loads_only_converter_libraries() -> None:
    worker = pool._Worker()
    try:
        pid = worker.process.pid
        with open(f"/proc/{pid}/maps", encoding="ascii", errors="replace") as maps:
            mapped = maps.read()
        status = proc_status(pid)
    finally:
        worker.kill()
    assert "/numpy/" not in mapped and "numpy.libs" not in mapped
    assert "openblas" not in mapped.lower()
    assert status["Threads"] == 1
    assert status["VmSize"] < 256 * MB


@pytest.mark.slow  # seconds of a worker converting a bomb
@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("bomb.html", lambda: hf.unclosed_li_html(700_000)),  # 9 MB of unclosed <li>
    ],
    ids=["html-unclosed-li"],
)
def test_a_bomb_peaks_under_768_mb(name: str, build: object) -> None:
    outcome, peak, _ = run_measured(name, build())  # type: ignore[operator]
    assert outcome in {"memory limit", "time limit"}, outcome
    assert 0 < peak < 768 * MB, f"peak RSS {peak / MB:.0f} MB"


@pytest.mark.slow  # seconds of a worker converting a bomb
def test_a_pdf_bomb_stops_at_its_stream_bound_under_the_memory_budget() -> None:
    # Issue 39: the stream inflated until the address-space limit (peak 491 MB of 512 MB here;
    # 1,085 MB in-process); now it stops at a quarter of the budget with its own reason.
    outcome, peak, _ = run_measured("bomb.pdf", hf.pdf_flate_bomb(600 * MB))  # 597 KB
    assert outcome.startswith(  # run_measured keeps 80 characters of the message
        "error: unpacked size limit: bomb.pdf has a compressed stream that inflates"
    ), outcome
    assert 0 < peak < 400 * MB, f"peak RSS {peak / MB:.0f} MB"
