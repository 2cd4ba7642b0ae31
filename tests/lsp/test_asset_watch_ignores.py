"""Default ignores through the server (SPEC §9 asset set, §10 external changes): in a project
with no `.gitignore`, an untracked `.venv`, `node_modules` and `__pycache__` add no asset
directory to the server's watch, which follows the whole-store check's listing.

The real server as Neovim 0.11 starts it (no client file events, so the server watches).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, write
from test_file_watch import logged, watched, watched_client  # noqa: F401 - fixtures

NOISE = [
    ".venv/lib/python3.12/site-packages/pkg/sub/__init__.py",
    ".venv/bin/python",
    "node_modules/left-pad/lib/index.js",
    "web/node_modules/react/cjs/react.js",
    "src/core/__pycache__/util.cpython-312.pyc",
]
# build_workspace's asset directories, the project root included
WATCHED = ["", "docs", "lib", "lib/widgets", "src", "src/core"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")  # a git repository without a .gitignore
    for rel in NOISE:
        write(root, rel, "x\n")
    return root


async def test_the_asset_watch_leaves_the_defaults_out(watched: Session):  # noqa: F811
    s = watched
    await s.checked()
    await s.until(lambda: logged(s, "asset directories through"), what="the asset watch")
    [line] = [m.message for m in s.client.log_messages if "asset directories through" in m.message]
    count = int(re.search(r"watches (\d+) asset directories", line).group(1))  # type: ignore[union-attr]
    assert count == len(WATCHED), line  # `web` holds only node_modules: not an asset either
