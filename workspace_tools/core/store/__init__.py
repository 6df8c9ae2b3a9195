"""The index database (SQLite): sources, chunks, the change log and the embedding cache."""
