"""The package version, in a module of its own (the store records it without importing all)."""

__version__ = "0.1.0"
