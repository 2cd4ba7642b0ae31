"""The iterative directory walk under the store scan and the asset listing (SPEC §12 deep nesting: a
tree thousands of levels deep costs no recursion)."""

from __future__ import annotations

import os
from collections.abc import Iterator


def entries(stack: list[tuple[str, str]]) -> Iterator[tuple[os.DirEntry[str], str]]:
    """(entry, prefix) for each entry of each directory popped from `stack`, whose items are
    (directory path, prefix of its entries)."""
    while stack:
        directory, prefix = stack.pop()
        try:
            it = os.scandir(directory)
        except OSError:
            continue
        with it:
            yield from ((entry, prefix) for entry in it)


MAX_DEPTH = 64  # folders below a rule folder; a tree deeper than this is no one's rules


def files(top: str, suffix: str) -> list[str]:
    """The regular files (links not followed) under `top` named `*suffix`, sorted, relative to it;
    a directory MAX_DEPTH levels down is listed itself (ending in '/'), not walked."""
    out: list[str] = []
    stack = [(top, "")]
    for entry, prefix in entries(stack):
        try:
            if entry.is_dir(follow_symlinks=False):
                below = prefix + entry.name + "/"
                if below.count("/") >= MAX_DEPTH:
                    out.append(below)
                else:
                    stack.append((entry.path, below))
            elif entry.name.endswith(suffix) and entry.is_file(follow_symlinks=False):
                out.append(prefix + entry.name)
        except OSError:
            continue
    return sorted(out)
