"""Search indexes: bm25s sparse, FAISS dense, the batch embedder, fusion and ranking."""
