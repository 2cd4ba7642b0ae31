"""`canon-ls` / `python -m canon_ls.lsp`: the language server over stdio."""

from __future__ import annotations

import sys


def main() -> None:
    from pygls.cli import start_server

    from .server import create_server

    start_server(create_server(), sys.argv[1:] if len(sys.argv) > 1 else [])


if __name__ == "__main__":
    main()
