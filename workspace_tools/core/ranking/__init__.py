"""Ranking: search modes, metadata filters, fusion rules, multi-query RRF, the ranking prior."""
