"""Per-format converters behind :func:`workspace_tools.core.documents.convert_document`.

Each module turns the bytes of one family of formats into Markdown text. The third-party
libraries they use are imported inside the functions, so importing this package is cheap.
"""
