"""`canon-ls` / `python -m canon_ls.lsp`: the language server over stdio (or --tcp/--ws)."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

DOCS = "docs"  # of the canon-ls source, which every install route starts from

DESCRIPTION = """\
The canon language server. It serves a project's memory, the .canon/ folder in the
repository (one Markdown article per file or folder, a journal, a schema), to your editor:
the capsule of the article governing a file as hover, inlay hint and code lens; diagnostics
for orphaned, stale and broken articles; code actions to create, update, review and journal;
links, completion, references and rename support. Every workspace folder holding a .canon/
store is served. Editors start it themselves (the VS Code extension, the Neovim plugin, or any
LSP client given the command `canon-ls`); you rarely run it by hand."""

EPILOG = f"""\
In the canon-ls source (the clone you installed from):
features and settings:  {DOCS}/LSP.md
setting up an editor:   {DOCS}/EDITORS.md
the store's format:     {DOCS}/FORMAT.md
Scripts and coding agents use the `canon` command instead (`canon --help`)."""


class _Parser(argparse.ArgumentParser):
    """A bad flag is one sentence on stderr, exit 2 (no usage dump in an editor's log)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"canon-ls: {message}. Run `canon-ls --help` for usage.\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="canon-ls",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio",
        action="store_true",
        help="speak LSP over stdin and stdout (the default; what editors use)",
    )
    transport.add_argument("--tcp", action="store_true", help="serve over TCP on HOST:PORT")
    transport.add_argument("--ws", action="store_true", help="serve over WebSocket on HOST:PORT")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address for --tcp/--ws (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8888, help="port for --tcp/--ws (default: 8888)"
    )
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    # vscode-languageclient may pass its process id; the server does not need it.
    parser.add_argument("--clientProcessId", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        from canon_ls import version

        print(f"canon-ls {version() or '0'}")
        return
    import gc

    stdio = not (args.tcp or args.ws)
    early = meanwhile = None
    if stdio:
        from canon_ls.lsp.startup import first_answer
        from canon_ls.lsp.startup.meanwhile import Meanwhile, enabled

        if first_answer.enabled():  # before the heavy imports below
            meanwhile = Meanwhile.start() if enabled() else None
            early = first_answer.answer(sys.stdin.buffer, sys.stdout.buffer)
            if meanwhile is not None:
                meanwhile.go(early)  # symbols are answered while the server is built
    from canon_ls.core.git import gitrun
    from canon_ls.lsp.server import create_server

    server = create_server()
    gitrun.share()  # at most gitrun.AT_ONCE git processes in the server and its children
    # What the imports made lives as long as the process: frozen, the collector's full passes
    # (10-30 ms over it, on the path of whichever request triggers one) skip it.
    gc.freeze()
    if meanwhile is not None and early is not None:
        early = meanwhile.take(early)
    if args.tcp or args.ws:  # say on stderr where the server listens (pygls logs `Serving on …`)
        import logging

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("canon-ls: %(message)s"))
        log = logging.getLogger("pygls.server")
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    elif args.ws:
        server.start_ws(args.host, args.port)
    else:
        from canon_ls.lsp.wire.stdio import serve

        serve(server, early)


if __name__ == "__main__":
    main()
