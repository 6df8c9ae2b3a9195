"""What the workspace keeps on disk: corpus, vocabulary, embedding cache, crash-safe generations."""
