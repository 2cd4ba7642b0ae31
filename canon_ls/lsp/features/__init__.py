"""One module per LSP feature; each handler is a few lines over `canon_ls.core`."""
