"""Shared text helpers: tokenizer, chunking, snippets, the file walker, safe YAML, hashing."""
