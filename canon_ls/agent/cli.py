# PYTHON_ARGCOMPLETE_OK  (argcomplete's marker: `canon` completes in bash, zsh and fish)
"""The `canon` command line (SPEC §11.1): a thin argparse adapter over the store core."""

from __future__ import annotations

import os
import sys

from canon_ls.agent.cli_common import PROG, UsageError, as_sentence
from canon_ls.agent.cli_parser import build_parser

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `canon` console script."""
    # Never die on an unencodable character in a store (e.g. CJK on a C-locale terminal).
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    parser = build_parser()
    if "_ARGCOMPLETE" in os.environ:  # a shell asking for completions; never imported otherwise
        import argcomplete

        argcomplete.autocomplete(parser)
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        return int(args.func(args))
    except UsageError as exc:
        print(as_sentence(str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("CANON_DEBUG"):
            raise
        print(
            f"{PROG}: this command needs module {exc.name}, which is not installed."
            if isinstance(exc, ModuleNotFoundError)
            else as_sentence(f"{PROG}: unexpected {type(exc).__name__}: {exc}")
            + " Set CANON_DEBUG=1 to see the traceback.",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
