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
