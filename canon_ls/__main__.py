"""`python -m canon_ls` runs the language server (same as `canon-ls`)."""

from canon_ls.lsp.__main__ import main

if __name__ == "__main__":
    main()
