"""`canon` subcommands that set things up or run elsewhere."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from canon_ls.agent.cli_common import (
    UsageError,
    as_sentence,
    inside_store,
    options_of,
    project_of,
    shown_path,
    store_of,
)


def cmd_settings(args: argparse.Namespace) -> int:
    """SPEC §13: each option's effective value and source; `set` / `unset` change one."""
    from canon_ls.agent import settings_cmd
    from canon_ls.core.storage.layout import OptionError, resolve

    project = project_of(args)
    try:
        if args.change is not None:
            words = None if args.change == "unset" else list(args.value)
            print(settings_cmd.change(project, args.key, words, args.in_project))
            return 0
        options = resolve(project, options_of(args))
    except OptionError as exc:
        raise UsageError(as_sentence(str(exc))) from None
    if args.format == "json":
        print(settings_cmd.dumps(options))
        return 0
    print("\n".join(settings_cmd.describe(options)))
    for problem in options.problems:  # stdout stays the six lines
        print(f"warning: {problem}", file=sys.stderr)
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    """Trust (or `--revoke`, `--list`) the project's canon.toml leading outside the project."""
    from canon_ls.agent import settings_cmd
    from canon_ls.core.storage.layout import OptionError

    try:
        print(settings_cmd.trust(project_of(args), args.trust_action))
    except OptionError as exc:
        raise UsageError(as_sentence(str(exc))) from None
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from canon_ls.agent import stats

    data = stats.report(str(project_of(args)))
    if args.format == "json":
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(stats.render(data))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from canon_ls.agent.mcp import main as mcp_main

    store_of(args)  # a bad --root, --mount or option flag: one sentence, exit 2, before serving
    return mcp_main(project_of(args), options_of(args))


def cmd_hook(args: argparse.Namespace) -> int:
    from canon_ls.agent.hooks import main as hook_main

    if args.project:
        os.chdir(project_of(args))
    return hook_main(args.agent)


def cmd_init(args: argparse.Namespace) -> int:
    """SPEC §11.1: `canon init` creates the store."""
    from canon_ls.agent.init import main as init_main

    if args.target is None:
        if args.user:
            raise UsageError("--global applies to canon init pi only.")
        print("\n".join(_create_store(args, full=True)))
        return 0
    here = not args.user and args.target in ("claude-code", "codex", "pi")
    if here:  # a store that cannot be made is refused before anything is written
        store = inside_store(args)
        if os.path.lexists(store.root) and not store.root.is_dir():
            raise UsageError(f"Cannot create {shown_path(args, str(store.root))}: not a directory.")
    directory = Path(args.dir) if args.dir else None
    code = init_main(args.target, project_of(args), directory, args.user)
    missing = here and not store_of(args).articles_dir.is_dir()  # an existing store stays as is
    made = _create_store(args) if missing and code == 0 else []
    if made:
        print("\n".join(made))
    return code


def _create_store(args: argparse.Namespace, full: bool = False) -> list[str]:
    """The store's part of `canon init`, its refusals as one sentence (exit 2)."""
    from canon_ls.agent.init import store_created
    from canon_ls.core.storage.address import OutsideStore

    try:
        return store_created(store_of(args), full)
    except OutsideStore as exc:  # core's sentence names the path and the fix
        raise UsageError(as_sentence(str(exc))) from None
    except OSError as exc:
        where = shown_path(args, exc.filename) if exc.filename else "the store"
        raise UsageError(f"Cannot create {where}: {exc.strerror or exc}.") from None
