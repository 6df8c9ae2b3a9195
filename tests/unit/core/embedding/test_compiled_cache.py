"""OpenVINO's compiled-model cache beside the verified model is checked too (issue 39).

The saved model's files are verified against ``checksums.json``; the blobs OpenVINO writes into
``compiled/`` (``CACHE_DIR``) were loaded unchecked. They are recorded in ``compiled.json`` after
OpenVINO wrote them and checked before it may read them: a changed, extra or unrecorded blob is
never loaded, the model is compiled again (one warning per folder). A fake ``openvino.Core``
stands in for the real one: it imports a blob when one is there, as OpenVINO does.
"""

from __future__ import annotations

import logging
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from workspace_tools.core.embedding import openvino_model
from workspace_tools.core.embedding.openvino_model import COMPILED_CHECKSUMS, OpenVinoEncoder

_GOOD = b"compiled model for the CPU"


class _FakeCore:
    """Compiles into ``CACHE_DIR/model.blob``, or imports that blob when it exists."""

    events: ClassVar[list[tuple[str, bytes]]] = []

    def __init__(self) -> None:
        self.cache: Path | None = None

    def set_property(self, properties: dict[str, str]) -> None:
        self.cache = Path(properties["CACHE_DIR"])

    def compile_model(self, model: str, device: str, config: dict[str, Any]) -> str:
        blob = None if self.cache is None else self.cache / "model.blob"
        if blob is not None and blob.exists():
            self.events.append(("imported", blob.read_bytes()))
        else:
            self.events.append(("compiled", _GOOD))
            if blob is not None:
                blob.write_bytes(_GOOD)
        return "compiled model"


@pytest.fixture
def encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OpenVinoEncoder:
    fake = types.ModuleType("openvino")
    fake.Core = _FakeCore  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "openvino", fake)
    monkeypatch.setattr(openvino_model, "_warned_compiled", set())
    _FakeCore.events = []
    cache_dir = tmp_path / "openvino" / "model-fp32"
    cache_dir.mkdir(parents=True)
    (cache_dir / "model.xml").write_text("<net/>")
    model = OpenVinoEncoder.__new__(OpenVinoEncoder)
    model.precision, model.threads, model.cache_dir = "fp32", None, cache_dir
    return model


def _compile(model: OpenVinoEncoder) -> tuple[str, bytes]:
    model._compile(model.cache_dir / "model.xml")
    return _FakeCore.events[-1]


def test_a_tampered_compiled_blob_is_not_loaded(
    encoder: OpenVinoEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    blob = encoder.cache_dir / "compiled" / "model.blob"
    assert _compile(encoder) == ("compiled", _GOOD)
    assert (encoder.cache_dir / COMPILED_CHECKSUMS).is_file()  # recorded after the blob
    assert _compile(encoder) == ("imported", _GOOD)  # a verified blob is used
    tampered = bytearray(blob.read_bytes())
    tampered[3] ^= 0xFF
    with caplog.at_level(logging.WARNING, logger=openvino_model.__name__):
        for _ in range(2):
            blob.write_bytes(bytes(tampered))
            assert _compile(encoder) == ("compiled", _GOOD)  # rebuilt, never imported
    warnings = [r.getMessage() for r in caplog.records if "compiled" in r.getMessage()]
    assert len(warnings) == 1, warnings  # once per folder
    assert "does not match compiled.json" in warnings[0]
    assert "compiling again instead of loading it" in warnings[0]
    assert blob.read_bytes() == _GOOD
    assert _compile(encoder) == ("imported", _GOOD)


@pytest.mark.parametrize("case", ["no manifest", "extra blob"])
def test_unrecorded_compiled_blobs_are_not_loaded(encoder: OpenVinoEncoder, case: str) -> None:
    compiled = encoder.cache_dir / "compiled"
    if case == "no manifest":
        compiled.mkdir()
        (compiled / "model.blob").write_bytes(b"planted")
    else:
        _compile(encoder)
        (compiled / "model.blob").write_bytes(b"planted")
        (compiled / "other.blob").write_bytes(b"planted")
    assert _compile(encoder) == ("compiled", _GOOD)
    assert not (compiled / "other.blob").exists()
