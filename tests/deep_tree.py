"""Clean-up of very deep directory chains (SPEC §12 deep nesting), shared by the core and LSP
tests: pytest's own clean-up, shutil.rmtree, recurses and would fail on them."""

from __future__ import annotations

import os
from pathlib import Path


def remove_deep(base: Path, name: str = "d") -> None:
    """Remove a deep chain base/name/name/... without recursion or long paths: pull each child
    up one level, then drop the parent."""
    top = base / name
    spare = base / (name + ".next")
    while top.is_dir():
        for entry in os.scandir(top):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if (top / name).is_dir():
            os.rename(top / name, spare)
            os.rmdir(top)
            os.rename(spare, top)
        else:
            os.rmdir(top)


def make_deep(base: Path, depth: int, name: str = "d") -> list[str]:
    """`depth` nested directories under base with a `leaf.md` at the bottom, created through
    directory descriptors (the full path may exceed PATH_MAX); returns the segments."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf = os.open("leaf.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"---\ncapsule: Deep leaf.\n---\n")
        os.close(leaf)
    finally:
        os.close(fd)
    return [name] * depth
