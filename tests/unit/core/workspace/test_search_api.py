"""Search API parity with the seeds: query term frequency, query embedding, per-call vector
weight, filter operators, leading-slash ids and the embedder shapes Mastra accepts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.embedding.adapters import (
    DEFAULT_BATCH_LIMIT,
    BatchAdapter,
    FunctionEmbedder,
    as_embedder,
)
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.index.sparse import BM25Config, query_tf_weights
from workspace_tools.core.workspace import Workspace

# -- query term frequency ------------------------------------------------------------------------


_FILLER = [
    "kappa",
    "lambda",
    "omicron",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
    "iota",
    "theta",
]


def _tf_workspace(tmp_path: Path, rule: str) -> Workspace:
    ws = Workspace(tmp_path, embedder=None, autosave=False, bm25_config=BM25Config(query_tf=rule))
    # "alpha" is rarer than "gamma" (idf about 1.8x), so with each term counted once alpha.md
    # wins; gamma said three times weighs 3 (count), 1.29 (saturated, 2 terms: k3 0.5) or 2.08
    # (saturated, 14 terms: k3 3.5).
    ws.index_many(
        [
            ("alpha.md", "alpha beta"),
            ("gamma.md", "gamma beta"),
            ("other1.md", "gamma delta"),
            ("other2.md", "gamma eta"),
            ("other3.md", "gamma eta"),
            *[(f"filler-{word}.md", f"{word} filler") for word in _FILLER],
        ]
    )
    return ws


def _gamma_first(ws: Workspace, query: str) -> bool:
    ranked = [r.source_id for r in ws.search(query, mode="bm25", top_k=50)]
    return ranked.index("gamma.md") < ranked.index("alpha.md")


@pytest.mark.parametrize(
    ("rule", "short_repeat", "long_repeat"),
    [
        ("distinct", False, False),  # a repeat never counts
        ("count", True, True),  # a repeat always counts in full
        ("saturated", False, True),  # saturates fast in a short query, counts in a long one
    ],
)
def test_repeated_query_terms_count_as_the_rule_says(
    tmp_path: Path, rule: str, short_repeat: bool, long_repeat: bool
) -> None:
    ws = _tf_workspace(tmp_path, rule)
    filler = " ".join(_FILLER)
    assert not _gamma_first(ws, "alpha gamma")  # once each: the rarer term decides
    assert not _gamma_first(ws, f"alpha gamma {filler}")
    assert _gamma_first(ws, "alpha gamma gamma gamma") is short_repeat
    assert _gamma_first(ws, f"alpha gamma gamma gamma {filler}") is long_repeat


def test_saturated_weights_grow_with_query_length() -> None:
    # Short query (4 distinct terms, k3 = 1): a term said twice weighs 4/3, not 2.
    short = query_tf_weights([2, 1, 1, 1], "saturated")
    assert short[0] == pytest.approx(4 / 3)
    assert short[1] == pytest.approx(1.0)
    # Long query (40 distinct terms, k3 = 10): the same repeat weighs 22/12, close to 2.
    long = query_tf_weights([2] + [1] * 39, "saturated")
    assert long[0] == pytest.approx(22 / 12)
    assert list(query_tf_weights([3, 1], "count")) == [3.0, 1.0]
    assert list(query_tf_weights([3, 1], "distinct")) == [1.0, 1.0]


def test_unknown_query_tf_rule_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Unknown query_tf rule 'twice'.*saturated, count"):
        BM25Config(query_tf="twice")


def test_query_tf_rule_is_not_part_of_the_index_fingerprint() -> None:
    assert BM25Config(query_tf="count").to_dict() == BM25Config().to_dict()


# -- queries embedded as queries -----------------------------------------------------------------


class SpyEmbeddings:
    """LangChain-style embeddings that mark queries and documents differently."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.documents: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return [[1.0, 0.0, float(len(t) % 3)] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return [0.0, 1.0, 0.0]


def test_langchain_embed_query_is_used_for_queries(tmp_path: Path) -> None:
    spy = SpyEmbeddings()
    ws = Workspace(tmp_path, embedder=spy, autosave=False)
    ws.index("a.md", "some text about cats")
    spy.queries.clear()
    documents_before = list(spy.documents)
    ws.search("where are the cats", mode="vector")
    ws.search("cats again", mode="hybrid")
    assert spy.queries == ["where are the cats", "cats again"]
    assert spy.documents == documents_before  # no query went through embed_documents


class PromptModel:
    """Stands in for a SentenceTransformer with a query prompt (``encode_query``)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def encode(self, texts: list[str], **_: Any) -> npt.NDArray[np.float32]:
        self.calls.append(("encode", texts))
        return np.ones((len(texts), 4), dtype=np.float32)

    def encode_query(self, texts: list[str], **_: Any) -> npt.NDArray[np.float32]:
        self.calls.append(("encode_query", texts))
        return np.full((len(texts), 4), 2.0, dtype=np.float32)


def test_sentence_transformer_queries_go_through_encode_query() -> None:
    from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(precision="fp32", device="cpu")
    model = PromptModel()
    embedder._model = model
    vector = embedder.embed_query("a question")
    assert model.calls == [("encode_query", ["a question"])]
    assert vector.shape == (4,)
    assert np.linalg.norm(vector) == pytest.approx(1.0)


# -- per-call vector weight ----------------------------------------------------------------------


class TwoSided:
    """``lexical.md`` wins on BM25, ``semantic.md`` on vectors."""

    model_id = "two-sided"
    dimension = 2
    max_batch_size = 8

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [(0.0, 1.0) if "zebra" in t else (1.0, 0.0) for t in texts]
        return np.asarray(rows, dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return np.asarray((1.0, 0.0), dtype=np.float32)


def _two_sided(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path, embedder=TwoSided(), autosave=False)
    ws.index_many(
        [
            ("lexical.md", "zebra crossing rules zebra"),
            ("semantic.md", "how to cross a street safely"),
            ("filler.md", "zebra"),
        ]
    )
    return ws


def test_vector_weight_per_call(tmp_path: Path) -> None:
    ws = _two_sided(tmp_path)
    assert ws.search("zebra crossing", vector_weight=0.0)[0].source_id == "lexical.md"
    assert ws.search("zebra crossing", vector_weight=1.0)[0].source_id == "semantic.md"
    assert ws.vector_weight == 0.5  # the call did not change the workspace's default


@pytest.mark.parametrize("bad", [-0.1, 1.5, True, "0.5"])
def test_vector_weight_out_of_range_is_refused(tmp_path: Path, bad: Any) -> None:
    ws = _two_sided(tmp_path)
    with pytest.raises(InvalidInputError, match=r"vector_weight must be a number between 0 and 1"):
        ws.search("zebra", vector_weight=bad)


# -- filter operators ----------------------------------------------------------------------------


@pytest.fixture
def meta_ws(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), autosave=False)
    ws.index_many(
        [
            ("a.md", "report on rivers", {"year": 2019, "lang": "en", "tags": ["water"]}),
            ("b.md", "report on rivers", {"year": 2021, "lang": "de"}),
            ("c.md", "report on rivers", {"year": 2023, "lang": "en", "draft": True}),
            ("d.md", "report on rivers", {"lang": "fr"}),
        ]
    )
    return ws


def _ids(ws: Workspace, flt: Any, mode: str = "bm25") -> set[str]:
    return {r.source_id for r in ws.search("report rivers", mode=mode, filter=flt)}


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"lang": "en"}, {"a.md", "c.md"}),
        ({"lang": {"$eq": "en"}}, {"a.md", "c.md"}),
        ({"lang": {"$ne": "en"}}, {"b.md", "d.md"}),
        ({"lang": {"$in": ["de", "fr"]}}, {"b.md", "d.md"}),
        ({"lang": {"$nin": ["de", "fr"]}}, {"a.md", "c.md"}),
        ({"year": {"$gt": 2021}}, {"c.md"}),
        ({"year": {"$gte": 2021}}, {"b.md", "c.md"}),
        ({"year": {"$lt": 2021}}, {"a.md"}),
        ({"year": {"$lte": 2021}}, {"a.md", "b.md"}),
        ({"year": {"$gte": 2020, "$lt": 2022}}, {"b.md"}),
        ({"draft": {"$exists": True}}, {"c.md"}),
        ({"draft": {"$exists": False}}, {"a.md", "b.md", "d.md"}),
        ({"tags": {"$in": ["water"]}}, {"a.md"}),
        ({"$and": [{"lang": "en"}, {"year": {"$gt": 2020}}]}, {"c.md"}),
        ({"$or": [{"lang": "fr"}, {"year": 2019}]}, {"a.md", "d.md"}),
        ({"source_id": {"$in": ["b.md", "d.md"]}}, {"b.md", "d.md"}),
        ({"year": {"$gt": "2020"}}, set()),  # a string cannot be ordered against a number
    ],
)
@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_filter_operators(meta_ws: Workspace, flt: Any, expected: set[str], mode: str) -> None:
    assert _ids(meta_ws, flt, mode) == expected


@pytest.mark.parametrize(
    ("flt", "message"),
    [
        ({"lang": {"$regex": "e.*"}}, r"Unknown filter operator '\$regex' on 'lang'\. Known"),
        ({"$not": {"lang": "en"}}, r"Unknown filter operator '\$not' at the top level"),
        ({"lang": {"$in": "en"}}, r"\$in on 'lang' takes a list of values, got 'en'"),
        ({"$or": []}, r"\$or takes a non-empty list of filters"),
        (["lang"], r"filter must be a mapping"),
    ],
)
def test_bad_filters_are_refused_with_the_bad_part_named(
    meta_ws: Workspace, flt: Any, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        meta_ws.search("report", filter=flt)


# -- leading-slash ids ---------------------------------------------------------------------------


def test_leading_slash_ids_are_root_relative(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, autosave=False)
    ws.index("/docs/guide.md", "the guide")
    assert ws.source_ids() == ["docs/guide.md"]
    assert ws.source("/docs/guide.md") is not None
    assert [c.source_id for c in ws.chunks_of("/docs/guide.md")] == ["docs/guide.md"]
    assert ws.remove("/docs") == ["docs/guide.md"]


def test_absolute_paths_inside_the_root_keep_their_meaning(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, autosave=False)
    ws.index(str(tmp_path / "notes" / "a.md"), "text")
    assert ws.source_ids() == ["notes/a.md"]


def test_read_text_accepts_a_leading_slash(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("hello guide")
    ws = Workspace(tmp_path, embedder=None, autosave=False)
    assert ws.read_text("/docs/guide.md") == "hello guide"


# -- embedder shapes -----------------------------------------------------------------------------


def test_single_text_function_embedder(tmp_path: Path) -> None:
    seen: list[str] = []

    def embed_one(text: str) -> list[float]:
        seen.append(text)
        return [1.0, float("cat" in text), 0.5]

    ws = Workspace(tmp_path, embedder=embed_one, autosave=False)
    assert isinstance(ws.embedder, FunctionEmbedder)
    ws.index_many([("cat.md", "a cat"), ("dog.md", "a dog")])
    assert ws.search("cat", mode="vector")[0].source_id == "cat.md"
    assert "a cat" in seen and "cat" in seen
    assert ws.embedder.dimension == 3


def test_function_embedder_returning_a_batch_is_refused() -> None:
    embedder = FunctionEmbedder(lambda text: [[1.0, 2.0]], model_id="bad")
    with pytest.raises(ValueError, match=r"function bad returned an array of shape \(1, 2\)"):
        embedder.embed(["x"])


class BareBatch:
    """A batch embedder with ``embed`` only: no model_id, dimension or max_batch_size."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.sizes.append(len(texts))
        return [[1.0, float(len(t))] for t in texts]


def test_batch_embedder_without_max_batch_size_gets_the_default(tmp_path: Path) -> None:
    bare = BareBatch()
    embedder = as_embedder(bare)
    assert isinstance(embedder, BatchAdapter)
    assert embedder.max_batch_size == DEFAULT_BATCH_LIMIT
    assert embedder.model_id == "BareBatch"
    ws = Workspace(tmp_path, embedder=bare, autosave=False)
    ws.index_many([(f"{i}.md", f"text {i}") for i in range(DEFAULT_BATCH_LIMIT + 5)])
    assert max(bare.sizes) == DEFAULT_BATCH_LIMIT
    assert ws.search("text 3", mode="vector")


def test_batch_embedder_wrong_count_is_refused() -> None:
    class Short:
        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]]

    with pytest.raises(ValueError, match=r"Embedder returned 1 embeddings for 2 inputs"):
        as_embedder(Short()).embed(["a", "b"])


@pytest.mark.parametrize("rule", ["count", "saturated"])
def test_weighted_query_terms_score_the_same_before_and_after_a_merge(
    tmp_path: Path, rule: str
) -> None:
    # Right after writes, BM25 scores come from the recent segment's postings; after save() they
    # come from the merged base matrix. The query-tf weights must give the same scores on both.
    ws = _tf_workspace(tmp_path, rule)
    queries = ["alpha gamma gamma gamma", f"alpha gamma gamma gamma {' '.join(_FILLER)}"]
    before = [[(r.id, r.score) for r in ws.search(q, mode="bm25", top_k=50)] for q in queries]
    ws.save()
    reopened = Workspace(tmp_path, embedder=None, bm25_config=BM25Config(query_tf=rule))
    after = [[(r.id, r.score) for r in reopened.search(q, mode="bm25", top_k=50)] for q in queries]
    assert [[i for i, _ in hits] for hits in after] == [[i for i, _ in hits] for hits in before]
    for hits_before, hits_after in zip(before, after, strict=True):
        assert [s for _, s in hits_after] == pytest.approx([s for _, s in hits_before], rel=1e-5)
