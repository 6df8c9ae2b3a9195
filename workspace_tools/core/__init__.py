"""Workspace core: indexing and search with no LangChain inside."""
