"""Find the project root and open its Store from options (SPEC §2, §8, §11.4)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from canon_ls.core.store import BadInput, Store

OPTION_KEYS = ("root", "mounts", "retrieval", "standout")


class OptionError(ValueError):
    """An option the store does not know or cannot use; the message names it."""


def find_project(start: Path) -> Path:
    """The nearest ancestor of `start` (itself included) holding `.canon/`, else `start`."""
    start = Path(os.path.abspath(start))
    for directory in (start, *start.parents):
        if (directory / ".canon").is_dir():
            return directory
    return start


def check_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate options; unknown keys and wrong types raise OptionError naming the key."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise OptionError("canon options must be an object of keys and values.")
    for key in options:
        if key not in OPTION_KEYS:
            raise OptionError(
                f"Unknown canon option {key!r}; known options are {', '.join(OPTION_KEYS)}."
            )
    out = dict(options)
    root = out.get("root")
    if root is not None and not isinstance(root, (str, Path)):
        raise OptionError("Option 'root' must be a path string.")
    mounts = out.get("mounts")
    if mounts is not None:
        if isinstance(mounts, (str, Path)) or not isinstance(mounts, (list, tuple)):
            raise OptionError("Option 'mounts' must be a list of directory paths.")
        if not all(isinstance(m, (str, Path)) and str(m) for m in mounts):
            raise OptionError("Option 'mounts' must be a list of non-empty directory paths.")
        for mount in mounts:
            if not Path(mount).expanduser().is_dir():
                raise OptionError(f"Mount {mount} is not a directory (option 'mounts', SPEC §8).")
    retrieval = out.get("retrieval")
    if retrieval is not None and retrieval not in ("none", "lexical"):
        raise OptionError('Option \'retrieval\' must be "none" or "lexical".')
    standout = out.get("standout")
    if standout is not None and (
        isinstance(standout, bool) or not isinstance(standout, (int, float)) or standout < 1
    ):
        raise OptionError("Option 'standout' must be a number of at least 1.")
    return out


def open_store(project: Path, options: Mapping[str, Any] | None = None) -> Store:
    """A Store for `project` with options root and mounts (retrieval/standout ride along as
    store.retrieval and store.standout). Creates nothing on disk."""
    opts = check_options(options)
    try:
        store = Store(Path(project), root=opts.get("root"), mounts=opts.get("mounts") or ())
    except BadInput as exc:
        raise OptionError(str(exc)) from None
    store.retrieval = opts.get("retrieval") or "none"
    store.standout = float(opts.get("standout") or 1.4)
    return store
