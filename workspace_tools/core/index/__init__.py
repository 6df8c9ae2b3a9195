"""The bm25s building blocks: a BM25 build over term ids, pair counts, the (tf, length) grid."""
