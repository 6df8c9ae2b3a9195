"""Search indexes: bm25s sparse (a base plus recent segments) and FAISS dense."""
