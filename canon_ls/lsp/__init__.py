"""The language server `canon-ls`: a thin pygls adapter over `canon_ls.core` (SPEC §10)."""
