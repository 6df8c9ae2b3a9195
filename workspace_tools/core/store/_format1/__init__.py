"""Format 1, read only to convert it: generation folders (``generations.py``), the conversion.

The format-1 corpus files (``Corpus.load``) are still read by ``core/store/corpus.py``.
"""
