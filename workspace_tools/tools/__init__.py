"""LangChain adapters over the workspace core."""
