"""``-q``: results and errors only, third-party output included; notes said once, not per file."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workspace_tools.cli import main

# Looked up, not imported: importing nncf loads torch, seconds of collection for every run.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nncf") is None or importlib.util.find_spec("transformers") is None,
    reason="needs nncf and transformers (the vector extra)",
)

# Every kind of third-party output the first run of the default model and an MCP start made,
# emitted by the libraries themselves from inside a command (`stats` replaced), with a root
# log handler at DEBUG so that only silencing (not a missing handler) keeps them off.
NOISY = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    import workspace_tools.cli as cli

    def noisy(args):
        import bm25s  # sets its own logger to DEBUG when imported
        logging.getLogger("bm25s").debug("Building index from tokens")
        from nncf.common.logging import nncf_logger
        from nncf.common.logging.track_progress import track
        nncf_logger.info("Statistics collection")
        # as the model conversion runs nncf (openvino_model._convert_quietly)
        from workspace_tools.core.embedding.openvino_model import _nncf_bars_hidden_when_quiet
        with _nncf_bars_hidden_when_quiet():
            for _ in track(range(3), description="Applying Smooth Quant"):
                pass
        from transformers.utils import logging as transformers_logging
        transformers_logging.get_logger("transformers.modeling_utils").warning(
            "loss_type=None was set in the config but it is unrecognised. Using the default "
            "loss: ForCausalLMLoss."
        )
        from tqdm import tqdm
        for _ in tqdm(range(3), desc="Batches"):
            pass
        logging.getLogger("workspace_tools.core.embedding.openvino_model").warning(
            "Converting the embedding model for OpenVINO (int8, once)"
        )
        print("the result")
        return 0

    cli.cmd_stats = noisy
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def _noisy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TQDM_", "TRANSFORMERS_"))}
    return subprocess.run(
        [sys.executable, "-c", NOISY, "--root", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**env, "HF_HUB_OFFLINE": "1", "COLUMNS": "80"},
    )


def test_quiet_keeps_only_the_result(tmp_path: Path) -> None:
    loud = _noisy(tmp_path, "stats")
    assert loud.returncode == 0, loud.stderr
    for text in (
        "Building index from tokens",
        "Smooth Quant",
        "ForCausalLMLoss",
        "Batches",
        "Converting",
    ):
        assert text in loud.stdout + loud.stderr  # so the quiet run below can fail
    quiet = _noisy(tmp_path, "-q", "stats")
    assert quiet.returncode == 0
    assert quiet.stdout == "the result\n"
    assert quiet.stderr == ""


def test_quiet_is_undone_after_the_command(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    before = logging.getLogger("bm25s").level, os.environ.get("TQDM_DISABLE")
    assert main(["--root", str(tree), "--embedder", "none", "-q", "stats"]) == 0
    capsys.readouterr()
    assert (logging.getLogger("bm25s").level, os.environ.get("TQDM_DISABLE")) == before
    assert logging.getLogger("bm25s").filters == []


def test_skipped_files_are_one_line_per_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_tools.core.convert import _pdf
    from workspace_tools.core.errors import ConversionError

    def missing(module: str, *, suffix: str) -> object:
        msg = (
            f'missing extra: pip install "workspace-tools[documents]" to read {suffix} files '
            "(the Python module 'pdfminer' is not installed: No module named 'pdfminer')"
        )
        raise ConversionError(msg)

    monkeypatch.setattr(_pdf, "require", missing)
    # in this process, where the patch holds (the project file may not turn isolation off)
    from workspace_tools.core.convert.limits import ConversionLimits
    from workspace_tools.core.workspace import _workspace

    monkeypatch.setattr(_workspace, "DEFAULT_LIMITS", ConversionLimits(isolate=False))
    for name in "abcde":
        (tmp_path / f"{name}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    assert main(["--root", str(tmp_path), "--embedder", "none", "index"]) == 0
    out = capsys.readouterr().out
    assert "Skipped 5 files (missing extra 5):\n" in out
    assert out.count("missing extra: pip install") == 1
    assert (
        "  5 files (a.pdf, b.pdf, c.pdf and 2 more): missing extra: pip install "
        '"workspace-tools[documents]" to read .pdf files' in out
    )
    assert main(["--root", str(tmp_path), "--embedder", "none", "-q", "index"]) == 0
    out = capsys.readouterr().out
    assert "Skipped 5 files (missing extra 5)\n" in out and "pip install" not in out


VECTORS_OFF = textwrap.dedent(
    """
    import sys
    from workspace_tools.core import extras
    extras.missing_vector_packages = lambda *m: ["faiss-cpu", "sentence-transformers"]
    import workspace_tools.cli as cli
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def test_a_base_install_says_vectors_are_off_once(tree: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", VECTORS_OFF, "--root", str(tree), *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )

    index = cli("index")
    assert index.returncode == 0, index.stderr
    assert index.stderr.count("Vector search is off") == 1
    assert "modes bm25 ->" in index.stdout
    search = cli("search", "install")
    assert search.returncode == 0
    assert "Vector search is off" not in search.stdout + search.stderr
    assert "docs/guide.md" in search.stdout
    assert cli("-q", "index").stderr == ""
    vector = cli("search", "install", "--mode", "vector")
    assert vector.returncode == 2
    assert vector.stderr.startswith(
        "error: --mode vector needs vectors, but the 'vector' extra is not installed (missing "
        "faiss-cpu, sentence-transformers)"
    )


def test_quiet_hides_nncf_progress_only_while_a_model_is_converted() -> None:
    # nncf draws its bars on rich's global console; `-q` no longer imports rich for every
    # command, so the conversion quiets the console itself while nncf's logger is at ERROR.
    rich = pytest.importorskip("rich")
    from workspace_tools.cli._quiet import silence_third_party
    from workspace_tools.core.embedding.openvino_model import _nncf_bars_hidden_when_quiet

    console = rich.get_console()
    assert not console.quiet
    with _nncf_bars_hidden_when_quiet():
        assert not console.quiet  # not quiet: the bars show
    with silence_third_party(), _nncf_bars_hidden_when_quiet():
        assert console.quiet
    assert not console.quiet  # put back
