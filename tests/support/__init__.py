"""Shared test helpers: fakes, paths, tree builders. Imported as ``tests.support.*``."""
