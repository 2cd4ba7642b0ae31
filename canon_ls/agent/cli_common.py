"""What every `canon` subcommand shares."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

PROG = "canon"
DOCS = "docs/FORMAT.md of the canon-ls source (the clone you installed from)"


class UsageError(Exception):
    """A bad command line or unreadable input: printed as one sentence, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports errors as one sentence instead of usage + message + exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}. Run `{self.prog} --help` for usage.")


def project_of(args: argparse.Namespace) -> Path:
    """SPEC §2: --project, else the nearest ancestor holding .canon/, else the cwd."""
    cached: Path | None = getattr(args, "_project_dir", None)
    if cached is not None:
        return cached
    if args.project:
        project = Path(args.project).expanduser()
        if not project.is_dir():
            raise UsageError(f"--project {args.project} is not a directory.")
        project = project.resolve()
    else:
        from canon_ls.core.storage.layout import discover

        found, note = discover(Path.cwd())
        if note:
            print(note, file=sys.stderr)
        project = found.resolve()
    args._project_dir = project
    return project


def path_arg(args: argparse.Namespace, raw: str) -> str:
    """A PATH typed in a subdirectory of the project is relative to it."""
    if not raw or raw.startswith("file:") or os.path.isabs(raw):
        return raw
    cwd, project = Path.cwd().resolve(), project_of(args)
    if project not in cwd.parents and ".." not in raw.replace("\\", "/").split("/"):
        return raw
    base = cwd if project in cwd.parents else project
    return os.path.normpath(base / raw.replace("\\", "/"))


def options_of(args: argparse.Namespace) -> dict[str, Any]:
    """SPEC §2/§8 store options from --root and --mount."""
    options: dict[str, Any] = {}
    for key in ("surface", "resurface", "retrieval", "standout"):  # `settings` and `mcp` only
        text = getattr(args, f"option_{key}", None)
        if text is not None:
            from canon_ls.core.storage.layout import parse_text

            options[key] = parse_text(key, text)
    if getattr(args, "root", None):
        options["root"] = args.root
    if getattr(args, "mount", None):
        options["mounts"] = list(args.mount)
    return options


def store_of(args: argparse.Namespace, *, warn: bool = True) -> Store:
    """The store by the resolved options."""
    from canon_ls.core.storage.layout import UNTRUSTED_OPTION
    from canon_ls.core.storage.project import OptionError, open_store

    try:
        store = open_store(project_of(args), options_of(args))
    except OptionError as exc:
        raise UsageError(as_sentence(str(exc))) from None
    for problem in store.options.issues if warn and store.options is not None else ():
        if problem.code == UNTRUSTED_OPTION:
            print(f"canon: {problem.sentence}", file=sys.stderr)
    return store


def shown_path(args: argparse.Namespace, filename: str | bytes) -> str:
    """A path in a message: relative to the project when inside it."""
    path = Path(os.fsdecode(filename))
    try:
        return path.relative_to(project_of(args)).as_posix()
    except ValueError:
        return str(path)


def as_sentence(text: str) -> str:
    """One line: collapse whitespace, end with a full stop."""
    line = " ".join(text.split())
    return line if line.endswith((".", "?", "!")) else line + "."


def read_input(source: str, what: str) -> str:
    """Read UTF-8 text from a file, or from stdin when source is '-'."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise UsageError(f"Cannot read {what} {source}: {exc.strerror or exc}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"{what} {source} is not UTF-8 text; save it as UTF-8 and retry."
        ) from None


def run_action(args: argparse.Namespace, action: object, *, json_tool: bool = False) -> int:
    """One action through the tool; its next-step hints in CLI words."""
    from canon_ls.core import dialect, tool

    words = dialect.JSON if json_tool else dialect.CLI
    result = tool.run(store_of(args), action, source="cli", dialect=words)
    stream = sys.stderr if result.code == 2 else sys.stdout
    stream.write(result.text if result.text.endswith("\n") else result.text + "\n")
    return result.code


def inside_store(args: argparse.Namespace, *, warn: bool = True) -> Store:
    """`store_of`, refusing (SPEC §12) a store whose directories lead outside the project: one
    sentence, exit 2."""
    store = store_of(args, warn=warn)
    problem = store.layout_problem()
    if problem:
        raise UsageError(problem)
    return store
