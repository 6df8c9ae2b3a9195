"""A sentence-transformers model run by OpenVINO, int8-quantised once and cached on disk.

Quantised by NNCF on the shipped ``calibration.json``; the saved model is keyed by model files,
versions, precision and calibration, and checked by SHA-256 at each load.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from importlib import resources
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.extras import missing_packages, require_extra

__all__ = [
    "CACHE_ENV",
    "OPENVINO_PRECISIONS",
    "OpenVinoEncoder",
    "cache_root",
    "calibration_texts",
    "compile_cached",
    "compile_options",
    "model_cache_dir",
    "openvino_available",
    "record_compiled",
    "trusted_compiled",
    "verified_model",
]

logger = logging.getLogger(__name__)

CACHE_ENV: Final = "WORKSPACE_TOOLS_CACHE_DIR"
"""Environment variable naming the cache folder (default ``~/.cache/workspace-tools``)."""
OPENVINO_PRECISIONS: Final = ("int8", "bf16", "fp32")
_FORMAT: Final = 2
"""Bumped when the saved model's layout or the conversion changes."""
CHECKSUMS: Final = "checksums.json"
"""``file name -> SHA-256`` of the saved model's files, written with them."""
COMPILED_CHECKSUMS: Final = "compiled.json"
"""``blob name -> SHA-256`` of OpenVINO's compiled-model cache (``compiled/``), written after it."""
_MODEL_FILES: Final = ("model.xml", "model.bin")
_OPENVINO_MODULES: Final = ("openvino", "nncf")
_CALIBRATION_BATCH: Final = 8
_SMALL_FILE: Final = 1 << 20


def openvino_available() -> bool:
    """True when ``openvino`` and ``nncf`` (its quantiser) are importable."""
    return not missing_packages("vector", *_OPENVINO_MODULES)


def require_openvino() -> None:
    """Fail with the install command unless OpenVINO and NNCF are installed.

    Raises:
        MissingDependencyError: one of them is missing.
    """
    require_extra(
        "vector",
        purpose="the 'openvino' embedding backend",
        modules=_OPENVINO_MODULES,
        instead=' (or pass backend="torch")',
    )


def cache_root() -> Path:
    """The cache folder: ``$WORKSPACE_TOOLS_CACHE_DIR``, else ``~/.cache/workspace-tools`` (XDG)."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "workspace-tools"


def calibration_texts() -> list[str]:
    """The 64 passages int8 quantisation is calibrated on (shipped with the package)."""
    raw = resources.files("workspace_tools.core.embedding").joinpath("calibration.json").read_text()
    texts = json.loads(raw)
    return [str(text) for text in texts]


def _fingerprint(model_path: Path, precision: str) -> str:
    """A key for the converted model: model files, library versions, precision, calibration."""
    digest = hashlib.sha256()
    parts = [f"format={_FORMAT}", f"openvino={version('openvino')}", f"precision={precision}"]
    if precision == "int8":
        parts.append(f"nncf={version('nncf')}")  # not imported: slow
        parts.append(json.dumps(calibration_texts()))
    for part in parts:
        digest.update(part.encode())
    files = sorted(p for p in model_path.rglob("*") if p.is_file()) if model_path.is_dir() else []
    for file in files:
        stat = file.stat()
        digest.update(f"{file.relative_to(model_path)}:{stat.st_size}".encode())
        if stat.st_size <= _SMALL_FILE:
            digest.update(file.read_bytes())
        else:
            digest.update(str(stat.st_mtime_ns).encode())
    return digest.hexdigest()[:24]


def model_cache_dir(model_path: Path, precision: str) -> Path:
    """The cache folder of the model in ``model_path`` converted at ``precision``."""
    return cache_root() / "openvino" / _fingerprint(model_path, precision)


def compile_options(precision: str, threads: int | None) -> dict[str, Any]:
    """The ``compile_model`` settings of a saved model run at ``precision`` on ``threads``."""
    config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY"}
    if precision == "fp32":
        config["INFERENCE_PRECISION_HINT"] = "f32"
    elif precision == "bf16":
        config["INFERENCE_PRECISION_HINT"] = "bf16"
    if threads is not None:
        config["INFERENCE_NUM_THREADS"] = threads
    return config


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(folder: Path) -> None:
    """Record the SHA-256 of the saved model's files (called before the folder is published)."""
    sums = {name: _sha256(folder / name) for name in _MODEL_FILES}
    (folder / CHECKSUMS).write_text(json.dumps(sums, sort_keys=True), encoding="utf-8")


def verified_model(cache_dir: Path) -> Path | None:
    """``model.xml`` of a converted model whose files match their checksums, else ``None``."""
    try:
        if cache_dir.is_symlink() or not cache_dir.is_dir():
            return None
        names = (*_MODEL_FILES, CHECKSUMS)
        if any((cache_dir / n).is_symlink() or not (cache_dir / n).is_file() for n in names):
            if (cache_dir / "model.xml").exists():
                logger.warning("Cached OpenVINO model in %s is incomplete or linked", cache_dir)
            return None
        recorded = json.loads((cache_dir / CHECKSUMS).read_text(encoding="utf-8"))
        if not isinstance(recorded, dict):
            return None
        for name in _MODEL_FILES:
            if recorded.get(name) != _sha256(cache_dir / name):
                logger.warning(
                    "Cached OpenVINO model file %s fails its checksum; converting again",
                    cache_dir / name,
                )
                return None
    except (OSError, ValueError):
        return None
    return cache_dir / "model.xml"


_warned_compiled: set[Path] = set()
"""Compiled caches already warned about (one warning per folder per process)."""


def _blobs(compiled: Path) -> dict[str, str]:
    """``name -> SHA-256`` of every entry of ``compiled`` (a link or folder hashes as ``""``)."""
    return {
        entry.name: _sha256(entry) if entry.is_file() and not entry.is_symlink() else ""
        for entry in sorted(compiled.iterdir())
    }


def trusted_compiled(compiled: Path) -> bool:
    """Whether OpenVINO may read the cache ``compiled`` (its blobs match ``compiled.json``)."""
    try:
        if compiled.is_symlink() or not compiled.is_dir():
            return False
        found = _blobs(compiled)
        if not found:
            return True
        try:
            recorded = json.loads((compiled.parent / COMPILED_CHECKSUMS).read_text("utf-8"))
        except (OSError, ValueError):
            recorded = None
        if isinstance(recorded, dict) and recorded == found:
            return True
        if compiled not in _warned_compiled:
            _warned_compiled.add(compiled)
            logger.warning(
                "Compiled OpenVINO cache %s does not match %s (a blob changed, was added or has "
                "no checksum); compiling again instead of loading it",
                compiled,
                COMPILED_CHECKSUMS,
            )
        (compiled.parent / COMPILED_CHECKSUMS).unlink(missing_ok=True)
        shutil.rmtree(compiled)
        compiled.mkdir()
    except OSError:
        return False
    return True


def record_compiled(compiled: Path) -> None:
    """Write ``compiled.json``: the SHA-256 of each blob OpenVINO wrote (atomically, after them)."""
    manifest = compiled.parent / COMPILED_CHECKSUMS
    staging = manifest.with_name(f".{COMPILED_CHECKSUMS}.{os.getpid()}")
    try:
        staging.write_text(json.dumps(_blobs(compiled), sort_keys=True), encoding="utf-8")
        os.replace(staging, manifest)
    except OSError:  # a read-only cache: the next process checks the blobs and compiles again
        staging.unlink(missing_ok=True)


def compile_cached(core: Any, xml: Path, config: dict[str, Any]) -> Any:
    """``core.compile_model`` of the saved ``xml`` through OpenVINO's verified cache beside it.

    Raises:
        RuntimeError: OpenVINO cannot compile the model.
    """
    from filelock import FileLock

    compiled = xml.parent / "compiled"
    if not _writable_folder(compiled):
        return core.compile_model(str(xml), "CPU", config)
    with FileLock(str(xml.parent) + ".lock"):
        cached = trusted_compiled(compiled)
        if cached:
            core.set_property({"CACHE_DIR": str(compiled)})
        result = core.compile_model(str(xml), "CPU", config)
        if cached:
            record_compiled(compiled)
        return result


def _model_inputs(model: Any, features: dict[str, Any]) -> list[str]:
    """The preprocessed features the transformer's ``forward`` takes (ids, mask, types)."""
    transformer = model[0].auto_model
    accepted = set(inspect.signature(transformer.forward).parameters)
    return [
        name
        for name, value in features.items()
        if name in accepted and getattr(value, "ndim", 0) == 2
    ]


class OpenVinoEncoder:
    """Encodes texts with a ``SentenceTransformer`` whose transformer runs in OpenVINO.

    Args:
        model: The loaded sentence-transformers model (fp32, on the CPU).
        model_path: The folder the model was loaded from (part of the cache key).
        precision: ``"int8"``, ``"bf16"`` or ``"fp32"``.
        threads: OpenVINO inference threads; ``None``: every core.

    Raises:
        MissingDependencyError: openvino or nncf is not installed.
        InvalidInputError: the model's first module is not a text transformer.
    """

    def __init__(
        self,
        model: Any,
        *,
        model_path: Path,
        precision: str = "int8",
        threads: int | None = None,
    ) -> None:
        require_openvino()
        if precision not in OPENVINO_PRECISIONS:
            msg = f"OpenVINO precision must be one of {OPENVINO_PRECISIONS}, got {precision!r}."
            raise ValueError(msg)
        first = model[0]
        if getattr(first, "auto_model", None) is None or getattr(first, "tokenizer", None) is None:
            msg = (
                f"The OpenVINO backend runs models whose first module is a text transformer; "
                f"{type(first).__name__} is not. Pass backend='torch'."
            )
            raise InvalidInputError(msg)
        self._model = model
        self._tail = list(model)[1:]
        self.precision = precision
        self.threads = threads
        sample = model.preprocess(["a short text", "another, slightly longer short text"])
        self._inputs = _model_inputs(model, sample)
        self.cache_dir = model_cache_dir(model_path, precision)
        self._compiled = self._compile(self._load_or_convert(sample))
        self._output = self._compiled.output(0)

    def _load_or_convert(self, sample: dict[str, Any]) -> Path | Any:
        """The verified saved model, else a new conversion, saved when the cache is usable.

        Returns:
            The path of ``model.xml``, or an in-memory ``openvino.Model``.
        """
        xml = verified_model(self.cache_dir)
        if xml is not None:
            return xml
        try:
            return self._convert_into_cache(sample)
        except OSError as exc:
            logger.warning(
                "The model cache %s is unusable (%s): the embedding model is converted in "
                "memory for this process only (slow, every time). Set %s to a writable folder "
                "to keep the conversion.",
                self.cache_dir.parent.parent,
                exc.strerror or exc,
                CACHE_ENV,
            )
            return self._convert_quietly(sample)

    def _convert_into_cache(self, sample: dict[str, Any]) -> Path:
        from filelock import FileLock

        self.cache_dir.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.cache_dir) + ".lock"):
            xml = verified_model(self.cache_dir)
            if xml is not None:  # another process converted it meanwhile
                return xml
            if self.cache_dir.is_symlink() or self.cache_dir.is_file():
                self.cache_dir.unlink()
            elif self.cache_dir.exists():  # damaged: replaced
                shutil.rmtree(self.cache_dir)
            logger.warning(
                "Converting the embedding model for OpenVINO (%s, once; cached in %s)",
                self.precision,
                self.cache_dir,
            )
            converted = self._convert_quietly(sample)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.cache_dir.parent))
            staging.chmod(0o755)
            try:
                import openvino

                openvino.save_model(converted, str(staging / "model.xml"), compress_to_fp16=False)
                write_checksums(staging)
                os.replace(staging, self.cache_dir)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        return self.cache_dir / "model.xml"

    def _convert_quietly(self, sample: dict[str, Any]) -> Any:
        # stdout carries an MCP stdio server's messages; the loss_type warning is meaningless.
        modeling = logging.getLogger("transformers.modeling_utils")
        modeling.addFilter(_no_loss_type)
        try:
            with (
                contextlib.redirect_stdout(sys.stderr),
                warnings.catch_warnings(),
                _nncf_bars_hidden_when_quiet(),
            ):
                warnings.simplefilter("ignore")  # torch's tracer warnings
                return self._convert(sample)
        finally:
            modeling.removeFilter(_no_loss_type)

    def _convert(self, sample: dict[str, Any]) -> Any:
        import openvino
        import torch

        transformer = self._model[0].auto_model.eval()
        example = {name: sample[name] for name in self._inputs}
        with torch.no_grad():
            converted = openvino.convert_model(transformer, example_input=example)
        if self.precision != "int8":
            return converted
        import nncf

        texts = calibration_texts()
        batches = []
        for start in range(0, len(texts), _CALIBRATION_BATCH):
            features = self._model.preprocess(texts[start : start + _CALIBRATION_BATCH])
            batches.append({name: features[name].numpy() for name in self._inputs})
        return nncf.quantize(
            converted,
            nncf.Dataset(batches),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(batches),
        )

    def _compile(self, model: Path | Any) -> Any:
        import openvino

        config = compile_options(self.precision, self.threads)
        core = openvino.Core()
        if not isinstance(model, Path):  # converted in memory: the cache folder is unusable
            return core.compile_model(model, "CPU", config)
        try:
            return compile_cached(core, model, config)
        except RuntimeError as exc:  # a damaged compiled entry, or a model it cannot read
            logger.warning("Cached OpenVINO model %s unusable (%s); converting again", model, exc)
            with contextlib.suppress(OSError):
                shutil.rmtree(self.cache_dir)
            core = openvino.Core()
            sample = self._model.preprocess(["a short text"])
            again = self._load_or_convert(sample)
            return core.compile_model(
                again if not isinstance(again, Path) else str(again), "CPU", config
            )

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 32, prompt: str | None = None
    ) -> npt.NDArray[np.float32]:
        """Vectors of ``texts`` as the model's own modules pool them.

        Args:
            texts: The texts.
            batch_size: Texts per forward pass.
            prompt: Text put before each input.

        Returns:
            An ``(len(texts), dimension)`` float32 array.
        """
        import torch

        order = np.argsort([-len(text) for text in texts])  # sentence-transformers' order
        rows_out: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]] = []
        request = self._compiled.create_infer_request()
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                rows = order[start : start + batch_size]
                features = self._model.preprocess([texts[i] for i in rows], prompt=prompt)
                inputs = {name: features[name].numpy() for name in self._inputs}
                hidden = request.infer(inputs)[self._output]
                features["token_embeddings"] = torch.from_numpy(
                    np.ascontiguousarray(hidden, dtype=np.float32)
                )
                for module in self._tail:
                    features = module(features)
                rows_out.append((rows, features["sentence_embedding"].to(torch.float32).numpy()))
        dimension = rows_out[0][1].shape[1] if rows_out else 0
        out = np.zeros((len(texts), dimension), dtype=np.float32)
        for rows, vectors in rows_out:
            out[rows] = vectors
        return out


def _no_loss_type(record: logging.LogRecord) -> bool:
    """A logging filter: not transformers' ``loss_type`` warning."""
    return not record.getMessage().startswith("`loss_type=")


def _writable_folder(folder: Path) -> bool:
    """``folder`` exists (made if need be), is no symlink, and this process may write in it."""
    try:
        if folder.is_symlink():
            return False
        folder.mkdir(exist_ok=True)
    except OSError:
        return False
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


@contextlib.contextmanager
def _nncf_bars_hidden_when_quiet() -> Any:
    """Hide nncf's rich progress bars while the ``workspace_tools`` logger shows errors only."""
    if logging.getLogger("workspace_tools").getEffectiveLevel() < logging.ERROR:
        yield
        return
    import rich

    console = rich.get_console()
    was_quiet = console.quiet
    console.quiet = True
    try:
        yield
    finally:
        console.quiet = was_quiet
