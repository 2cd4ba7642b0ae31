"""SPEC §10 external changes without client file events (Neovim): the server's own watcher.

The server watches `.canon/**` and the asset directories (inotify itself here, watchfiles'
FSEvents on macOS and ReadDirectoryChangesW on Windows), so an agent's write reaches the article's
pushed diagnostics at once. Where the OS cannot report events (the watch limit, or
`WATCHFILES_FORCE_POLLING=1` as here) watchfiles polls every `pollInterval` instead.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import (
    SERVER_COMMAND,
    SERVER_ENV,
    Session,
    article,
    build_workspace,
    capabilities,
)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from test_external import CONFIG, agent_write

PROFILE = "neovim@0.11"
SLOW_POLL = {"pollInterval": 60}  # a poll would be far too slow for these tests: events only

# An agent's write that gives the config article a broken link: the sign it was seen.
BREAK_CONFIG = {
    "action": "write",
    "path": "src/core/config.ts",
    "capsule": "Config now comes from env only.",
    "body": "# Config\n\nEnv only; see [[nowhere/else]].\n",
}


async def start(client: LanguageClient, workspace: Path, settings: dict) -> Session:
    """Initialize as Neovim 0.11 does (no dynamic watcher registration)."""

    def refreshed(client: LanguageClient, params: None) -> None:
        return None

    client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)(refreshed)
    client.feature(types.WORKSPACE_CODE_LENS_REFRESH)(refreshed)
    client.set_configuration(settings, section="canon")
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(PROFILE),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="proj")],
        )
    )
    encoding = str(result.capabilities.position_encoding or "utf-16")
    return Session(client, workspace, PROFILE, encoding)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV))
async def watched_client(lsp_client: LanguageClient, workspace: Path):
    lsp_client.session = await start(lsp_client, workspace, SLOW_POLL)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, server_env={**SERVER_ENV, "WATCHFILES_FORCE_POLLING": "1"}
    )
)
async def polled_client(lsp_client: LanguageClient, workspace: Path):
    # watchfiles' poll (Rust notify's) compares mtimes in whole seconds: a file rewritten in
    # the second of its last write would go unseen. Here the store was written an hour ago.
    an_hour_ago = time.time() - 3600
    for path in (workspace / ".canon").rglob("*"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    lsp_client.session = await start(lsp_client, workspace, {})  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def watched(watched_client: LanguageClient) -> Session:
    return watched_client.session  # type: ignore[attr-defined]


@pytest.fixture
def polled(polled_client: LanguageClient) -> Session:
    return polled_client.session  # type: ignore[attr-defined]


def logged(s: Session, text: str) -> bool:
    return any(text in m.message for m in s.client.log_messages)


async def broken_link(s: Session, rel: str) -> bool:
    return any(d.code == "broken-link" for d in await s.diagnostics(rel))


async def test_the_watcher_delivers_writes(watched: Session):
    """SPEC §10 external changes: with a 60 s poll only file events can deliver these in time:
    a changed article, and one in a directory that did not exist when the watch started."""
    s = watched
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    assert not await broken_link(s, CONFIG)

    await agent_write(s, BREAK_CONFIG)
    await s.until(lambda: broken_link(s, CONFIG), what="the changed article's broken link")

    assert not (s.root / ".canon/articles/lib/widgets").exists()
    await agent_write(
        s,
        {
            "action": "write",
            "path": "lib/widgets/widget.ts",
            "capsule": "The widget itself.",
            "body": "# Widget\n\nSee [[no/such/thing]].\n",
        },
    )
    [new] = [p for p in (s.root / ".canon/articles/lib/widgets").rglob("*.md")]
    rel = new.relative_to(s.root).as_posix()
    await s.until(lambda: broken_link(s, rel), what="the new directory's article")


async def test_poll_fallback_without_events(polled: Session):
    """SPEC §10 external changes: where the OS reports no events (forced here with
    WATCHFILES_FORCE_POLLING=1) the watcher polls and still brings an agent's write to the
    article's diagnostics."""
    s = polled
    await s.checked()
    await s.until(lambda: logged(s, "store by polling"), what="the fallback log line")
    assert not logged(s, "store through")

    await agent_write(s, BREAK_CONFIG)
    await s.until(lambda: broken_link(s, CONFIG), what="the polled article's broken link")


async def orphan(s: Session, rel: str) -> bool:
    return any(d.code == "orphan" for d in await s.diagnostics(rel))


async def test_assets_created_or_deleted_reach_orphans_without_a_save(watched: Session):
    """SPEC §10 external changes (assets) + §9 orphans, without client file events: a file an
    agent creates heals the orphan named like it, a deleted one makes its article an orphan —
    no save, commit or restart (the poll is 60 s here: only file events can bring them)."""
    s = watched
    widget, config = ".canon/articles/lib/widget.md", CONFIG
    await s.checked()
    await s.until(lambda: logged(s, "asset directories through "), what="asset watch")
    assert await orphan(s, widget) and not await orphan(s, config)

    (s.root / "lib/widget.ts").write_text("export const widget = 1;\n")
    await s.until(lambda: not_(orphan(s, widget)), what="the healed orphan")

    (s.root / "src/core/config.ts").unlink()
    await s.until(lambda: orphan(s, config), what="the new orphan")


async def not_(check: Any) -> bool:
    return not await check


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """The usual project, its store moved aside: the server starts without one."""
    root = build_workspace(tmp_path / "proj")
    (root / ".canon").rename(tmp_path / "store-aside")
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV))
async def bare_client(lsp_client: LanguageClient, bare: Path):
    lsp_client.session = await start(lsp_client, bare, SLOW_POLL)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_a_store_appearing_after_startup_is_served(bare_client: LanguageClient):
    """SPEC §10 external changes: a store moved into the project whole while the server runs
    (one event for the directory, none for the files already in it) is read and checked."""
    s: Session = bare_client.session  # type: ignore[attr-defined]
    await s.until(lambda: logged(s, "project folders through "), what="the watch")
    assert not logged(s, "watches the store")
    (s.root.parent / "store-aside").rename(s.root / ".canon")
    await s.until(lambda: orphan(s, ".canon/articles/lib/widget.md"), what="the new store's orphan")
    hover = await s.hover("src/core/config.ts", s.pos("src/core/config.ts", 0, 2))
    assert hover is not None and "Loads layered config" in hover.contents.value


def _watcher_pids() -> list[int]:
    """The watchfiles children of the servers this test process started."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            server = _ppid(Path("/proc", _ppid(entry)))
        except (OSError, IndexError):
            continue
        if b"canon_ls.lsp.helpers.fswatch" in cmdline and server == str(os.getpid()):
            pids.append(int(entry.name))
    return pids


def _ppid(entry: Path) -> str:
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the child in /proc")
async def test_a_killed_watcher_is_restarted(watched: Session):
    """SPEC §10 external changes: the watcher child killed from outside comes back, and the
    writes after it still reach the diagnostics."""
    s = watched
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    [child] = _watcher_pids()
    os.kill(child, signal.SIGKILL)
    await s.until(lambda: logged(s, "restarting it"), what="the restart")
    await s.until(
        lambda: sum("store through " in m.message for m in s.client.log_messages) > 1,
        what="the new watch",
    )
    await agent_write(s, BREAK_CONFIG)
    await s.until(lambda: broken_link(s, CONFIG), what="the write after the restart")


async def test_a_directory_moved_in_and_out_of_the_store(watched: Session):
    """SPEC §10 external changes: a directory of articles moved into the articles tree whole
    (one event for the directory, none for the files in it) is read, and moved out again its
    articles go (their diagnostics are cleared)."""
    s = watched
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    outside = s.root.parent / "moved"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "note.md").write_text(
        article("A note.", "2026-06-01", "# Note\n\nSee [[no/such/place]].\n")
    )
    rel = ".canon/articles/moved/deep/note.md"
    outside.rename(s.root / ".canon/articles/moved")
    await s.until(lambda: broken_link(s, rel), what="the moved-in article's broken link")
    (s.root / ".canon/articles/moved").rename(outside)
    await s.until(lambda: not_(broken_link(s, rel)), what="the moved-out article's diagnostics")


@pytest.fixture
def with_lake(tmp_path: Path) -> Path:
    """The usual project, mounting a lake (a second store outside it, SPEC §8)."""
    root = build_workspace(tmp_path / "proj")
    lake = tmp_path / "lake"
    (lake / ".canon" / "articles" / "prices").mkdir(parents=True)
    (lake / ".canon" / "articles" / "prices" / "daily.md").write_text(
        article("Daily prices.", "2026-06-01", "# Daily\n\nSee [[first/gone]].\n")
    )
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV))
async def lake_client(lsp_client: LanguageClient, with_lake: Path):
    settings = {**SLOW_POLL, "mounts": [str(with_lake.parent / "lake")]}
    lsp_client.session = await start(lsp_client, with_lake, settings)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_a_mounted_store_is_watched_too(lake_client: LanguageClient):
    """SPEC §8 mounts + §10 external changes: a write to a mounted store outside the project
    reaches that article's diagnostics (the mount's store is watched with the project's)."""
    s: Session = lake_client.session  # type: ignore[attr-defined]
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    daily = s.root.parent / "lake/.canon/articles/prices/daily.md"
    uri = daily.as_uri()

    def broken(target: str) -> bool:
        return any(target in d.message for d in s.client.diagnostics.get(uri, []))

    # the check that knows the mount (the setting arrives with workspace/configuration)
    await s.until(lambda: broken("first/gone"), what="the mounted article's first finding")
    daily.write_text(article("Daily prices.", "2026-06-01", "# Daily\n\nSee [[then/gone]].\n"))
    await s.until(lambda: broken("then/gone"), what="the mounted article's new broken link")


async def test_a_store_moved_away_whole_takes_its_diagnostics(watched: Session):
    """SPEC §10 external changes: the store directory moved out of the project in one rename
    (one event, none for the articles in it): its articles go, their diagnostics are cleared."""
    s = watched
    widget = ".canon/articles/lib/widget.md"
    await s.checked()
    await s.until(lambda: logged(s, "store through "), what="the watcher's log line")
    await s.until(lambda: orphan(s, widget), what="the orphan before")
    (s.root / ".canon").rename(s.root.parent / "store-away")
    await s.until(lambda: not_(orphan(s, widget)), what="the orphan cleared")
