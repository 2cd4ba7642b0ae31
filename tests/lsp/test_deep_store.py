"""SPEC §12 (deep nesting) while the server runs: a 1,000-deep directory of articles moved into
the store whole is read without a RecursionError (the watcher's reload walks iteratively): its
articles get their diagnostics, and the server keeps answering."""

from __future__ import annotations

import os
from pathlib import Path

from deep_tree import make_deep, remove_deep
from lsp_harness import Session, article, text_of
from test_external import CONFIG, agent_write
from test_file_watch import BREAK_CONFIG, broken_link, logged, watched, watched_client  # noqa: F401

DEPTH = 1000


def _deep_tree(top: Path) -> str:
    """`top/d/d/…/d/bottom.md` DEPTH levels down, made relative to dodge path limits; the
    bottom article's path relative to `top`."""
    top.mkdir()
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(DEPTH):
            os.mkdir("d")
            os.chdir("d")
        Path("bottom.md").write_text(article("Deep.", "2026-06-01", "# Deep\n\nSee [[x/y]].\n"))
    finally:
        os.chdir(here)
    (top / "top.md").write_text(article("Top.", "2026-06-01", "# Top\n\nSee [[no/where]].\n"))
    return "/".join(["d"] * DEPTH) + "/bottom.md"


async def test_a_deep_directory_moved_into_the_store(watched: Session):  # noqa: F811
    s = watched
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    outside = s.root.parent / "deep"
    _deep_tree(outside)
    outside.rename(s.root / ".canon/articles/deep")
    try:
        await _answers(s)
    finally:
        remove_deep(s.root / ".canon/articles/deep")


async def _answers(s: Session) -> None:
    await s.until(
        lambda: broken_link(s, ".canon/articles/deep/top.md"), what="the moved-in top article"
    )
    s.open("docs/readme.md", "markdown")
    hover = await s.hover("docs/readme.md", s.pos_of("docs/readme.md", "[[src/core/config]]", 4))
    assert "Loads layered config; env beats file." in text_of(hover)
    assert "deep/top: Top." in await s.command("canon.map", {"path": "deep"})


PAST_PATH_MAX = 2_100  # "d/" * 2,100: 4,200 bytes, past Linux's 4,096


async def test_a_store_directory_past_path_max_leaves_the_watcher_working(
    watched: Session,  # noqa: F811
):
    """SPEC §12 (deep nesting), §10 external changes: a directory chain under articles/ grown
    past PATH_MAX while the server watches (the watcher cannot name its bottom) never stops
    the watch: a later external write is still seen, and the trouble is logged once at most."""
    s = watched
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    articles = s.root / ".canon/articles"
    make_deep(articles, PAST_PATH_MAX, "d")
    try:
        await agent_write(s, BREAK_CONFIG)
        await s.until(lambda: broken_link(s, CONFIG), what="the write after the deep chain")
        warnings = [m.message for m in s.client.log_messages if "watcher:" in m.message]
        assert warnings == [
            "canon's file watcher: directories too deep to name or unreadable are not watched"
        ]
    finally:
        remove_deep(articles, "d")
