"""Ingestion: loaders (one per format), the structure-aware splitter, and the pipeline."""
