"""Search (BM25) and wikilinks."""
