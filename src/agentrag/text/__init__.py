"""Text utilities shared by ingest, indexing and retrieval: tokens, sentences, fingerprints, dates."""
