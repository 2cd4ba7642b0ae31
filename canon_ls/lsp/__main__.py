"""`canon-ls` / `python -m canon_ls.lsp`: the language server over stdio (or --tcp/--ws)."""

from __future__ import annotations

import sys


def main() -> None:
    from .server import create_server

    server = create_server()
    args = sys.argv[1:]
    if args:
        from pygls.cli import start_server

        start_server(server, args)
        return
    from .stdio import serve

    serve(server)


if __name__ == "__main__":
    main()
