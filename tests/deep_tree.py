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
