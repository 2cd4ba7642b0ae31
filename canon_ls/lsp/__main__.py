"""`canon-ls` / `python -m canon_ls.lsp`: the language server over stdio (or --tcp/--ws).

`--stdio` is accepted and is the default (clients such as vscode-languageclient's stdio
transport append it); `--version` prints the version.
"""

from __future__ import annotations

import sys


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--stdio"]
    if args in (["--version"], ["-V"]):
        from .state import _version

        print(f"canon-ls {_version()}")
        return
    from .server import create_server

    server = create_server()
    if args:
        from pygls.cli import start_server

        start_server(server, args)
        return
    from .stdio import serve

    serve(server)


if __name__ == "__main__":
    main()
