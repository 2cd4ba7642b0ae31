"""Print the walk of one hover and one whole-store check through canon_ls's modules.

docs/ARCHITECTURE.md ("One hover, end to end") counts them this way: a stay is a call from
one canon_ls module into another (pygls, lsprotocol and the standard library are no rooms:
a call through them counts from the nearest canon_ls caller); each call site counts once
(a loop, a resumed generator or coroutine is not counted again; the methods dataclasses
generate count as the standard library's); a return is a stay in a module the walk visited
before. The hover is on a path token in a governed file of a loaded
store (the text open in the editor, settled files, caches warm); the check is a push
client's second one, in process, its child a real child process.

Usage: .venv/bin/python scripts/walks.py   (from the repository root)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "lsp"))

from lsp_harness import build_workspace  # noqa: E402
from lsprotocol import types  # noqa: E402
from pygls.workspace import Workspace  # noqa: E402

import canon_ls.core.storage.freshness as freshness  # noqa: E402
from canon_ls.lsp.handlers import hover
from canon_ls.lsp.session import lifecycle  # noqa: E402
from canon_ls.lsp.session.state import CanonLanguageServer  # noqa: E402


def _room(frame: FrameType | None) -> tuple[str | None, FrameType | None]:
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith("canon_ls"):
            return name, frame
        frame = frame.f_back
    return None, None


class Walk:
    def __init__(self, keep: Any = lambda frame: True) -> None:
        self.keep = keep
        self.stays: list[tuple[str, str]] = []
        self._sites: set[tuple[Any, ...]] = set()

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        name = frame.f_globals.get("__name__", "")
        generated = frame.f_code.co_filename == "<string>"  # a dataclass's __init__, __eq__
        if event != "call" or not name.startswith("canon_ls") or generated or not self.keep(frame):
            return
        caller, at = _room(frame.f_back)
        site = (frame.f_code, at.f_code if at else None, at.f_lineno if at else None)
        if site in self._sites:
            return
        self._sites.add(site)
        if caller != name:
            self.stays.append((name.removeprefix("canon_ls."), frame.f_code.co_qualname))

    def counts(self) -> tuple[int, int, int]:
        """(stays, rooms, returns)."""
        rooms = len({room for room, _ in self.stays})
        return len(self.stays), rooms, len(self.stays) - rooms

    def report(self, title: str) -> None:
        seen: set[str] = set()
        print(f"## {title}")
        for n, (room, function) in enumerate(self.stays, 1):
            print(f"{n:3} {'R' if room in seen else ' '} {room}: {function}")
            seen.add(room)
        print("stays {}, rooms {}, returns {}\n".format(*self.counts()))


def _server(root: Path) -> CanonLanguageServer:
    ls = CanonLanguageServer()
    ls.protocol._workspace = Workspace(root.as_uri())
    ls.protocol.client_capabilities = types.ClientCapabilities()
    ls.protocol.notify = lambda method, params=None: None  # type: ignore[method-assign]
    lifecycle.create(ls)
    return ls


def walks(base: Path) -> tuple[Walk, Walk]:
    """One hover's walk and one check's, in a project built under `base` (its caches there)."""
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")  # the check child's parse cache
    racy, freshness.RACY_NS = freshness.RACY_NS, 0  # the files are settled (written long ago)
    try:
        return _walks(base)
    finally:
        freshness.RACY_NS = racy


def _walks(base: Path) -> tuple[Walk, Walk]:
    root = build_workspace(base / "proj")
    old = time.time() - 86400
    for directory, dirs, files in os.walk(root):
        for name in files + dirs:
            os.utime(os.path.join(directory, name), (old, old))
    ls = _server(root)
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.load is not None
    uri = (root / "src/core/config.ts").as_uri()
    text = (root / "src/core/config.ts").read_text()
    ls.workspace.put_text_document(types.TextDocumentItem(uri, "typescript", 1, text))
    params = types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 35))

    async def session() -> tuple[Walk, Walk]:
        await folder.load.ready()
        folder.check.schedule()
        assert folder.check.task is not None
        await folder.check.task  # the first check writes the caches the second one reads
        hover.on_hover(ls, params)
        hovered = Walk()
        sys.setprofile(hovered)
        try:
            hover.on_hover(ls, params)
        finally:
            sys.setprofile(None)

        def in_check(frame: FrameType) -> bool:
            task = asyncio.current_task()
            return frame.f_code.co_qualname == "Check.schedule" or (
                task is not None and task.get_name().startswith("canon-check")
            )

        checked = Walk(in_check)
        sys.setprofile(checked)
        try:
            folder.check.schedule()
            await folder.check.task
        finally:
            sys.setprofile(None)
            folder.close()  # its searcher goes
            ls.watcher.close()
        return hovered, checked

    return asyncio.run(session())


if __name__ == "__main__":
    hovered, checked = walks(Path(tempfile.mkdtemp()))
    hovered.report("one hover")
    checked.report("one check")
