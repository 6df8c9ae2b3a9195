"""Embedders: the batch embedder, its OpenVINO int8 model, the lean query path, adapters."""
