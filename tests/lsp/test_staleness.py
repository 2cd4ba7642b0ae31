"""Staleness you can act on, in the editor (SPEC §9.1 evidence in the diagnostics, hover and
code lens; §9.2 `canon.history` and "Show changes since <address> was updated"): the real
server over a git history dated to the day (tests/stale_repo.py), three client profiles."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from lsp_harness import SERVER_ENV, Session, text_of
from lsprotocol import types
from stale_repo import Repo, build
from test_actions import actions
from test_external import client_watches

FETCH = ".canon/articles/src/feed/fetch.md"
LINE = 'stale: 3 commits in 39 days since updated 2026-10-21 touched src/feed/fetch.py (newest {h} 2026-11-27 "Retry on 429")'  # noqa: E501

_built: dict[Path, Repo] = {}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    _built[root] = build(root)
    return root


def line_of(s: Session) -> str:
    return LINE.format(h=_built[s.root].hashes["Retry on 429"])


async def lenses(s: Session, rel: str) -> list[str]:
    result = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=s.uri(rel)))
    )
    return [lens.command.title for lens in result or [] if lens.command]


async def test_spec_9_1_diagnostics_carry_the_evidence(s: Session):
    """SPEC §9.1 + §10 diagnostics: the article's stale finding and the asset's hint say how
    many commits, since when, and which was newest (the one-line form)."""
    await s.checked()

    async def stale_on_article() -> list[types.Diagnostic]:
        return [d for d in await s.diagnostics(FETCH) if d.code == "stale"]

    found = await s.until(stale_on_article, what="the stale finding on the article")
    assert found[0].message == (
        f"src/feed/fetch is {line_of(s)}; update it, or mark it reviewed if it still holds."
    )
    s.open("src/feed/fetch.py")
    asset = await s.until(lambda: s.diagnostics("src/feed/fetch.py"), what="the asset hint")
    assert [d.message for d in asset] == [f"governing article src/feed/fetch is {line_of(s)}"]


async def test_spec_9_1_hover_and_code_lens_show_the_evidence(s: Session):
    """SPEC §9.1: the hover on a governed file has the evidence line; the code lens reads
    `stale · 3 commits since 2026-10-21` on the file and on the article, and opens the changes."""
    await s.checked()
    s.open("src/feed/fetch.py")
    hover = text_of(await s.hover("src/feed/fetch.py", s.pos("src/feed/fetch.py", 0, 1)))
    assert "**stale**: " + line_of(s).removeprefix("stale: ") in hover
    assert await lenses(s, "src/feed/fetch.py") == [
        "canon: src/feed/fetch · updated 2026-10-21 · 2 journal",
        "stale · 3 commits since 2026-10-21",
    ]
    s.open(FETCH, "markdown")
    assert await lenses(s, FETCH) == ["stale · 3 commits since 2026-10-21"]
    s.open("src/feed/util.py")
    assert (await lenses(s, "src/feed/util.py"))[1] == (
        "stale · 1 commit, 1 uncommitted file since 2026-11-05"
    )
    s.open("src/app.py")
    assert await lenses(s, "src/app.py") == ["canon: src/app · updated 2026-11-28 · 0 journal"]


async def test_spec_9_2_history_command_returns_the_cli_text(s: Session):
    """SPEC §9.2: `canon.history {path}` returns the text of `canon history PATH`."""
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "canon"),
        "history",
        "src/feed/fetch.py",
        cwd=s.root,
        env=SERVER_ENV,
        stdout=asyncio.subprocess.PIPE,
    )
    cli, _ = await proc.communicate()
    text = await s.command("canon.history", {"path": s.uri("src/feed/fetch.py")})
    assert text == cli.decode().rstrip("\n")
    assert text.splitlines()[1].endswith("asset Ann Lee: Retry on 429")
    since = await s.command("canon.history", {"path": "src/feed/fetch", "sinceUpdated": True})
    assert "Initial import" not in since and "Retry on 429" in since


async def test_spec_6_read_command_equals_the_cli_read(s: Session):
    """SPEC §6 read through `canon.read`: the same text as `canon read`, the evidence line
    included (the server takes it from its last whole-store pass, no git on its loop)."""
    await s.checked()
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "canon"),
        "read",
        "src/feed/fetch.py",
        cwd=s.root,
        env=SERVER_ENV,
        stdout=asyncio.subprocess.PIPE,
    )
    cli, _ = await proc.communicate()
    text = await s.command("canon.read", {"path": "src/feed/fetch.py"})
    assert text == cli.decode().rstrip("\n")
    assert line_of(s) in text.splitlines()


async def test_spec_9_2_show_changes_opens_a_read_only_diff(s: Session):
    """SPEC §9.2: on a stale asset, "Show changes since <address> was updated" opens (with
    window/showDocument) a read-only document holding the diff since the reference date; the
    file lives under the cache directory, never in the project."""
    await s.checked()
    s.open("src/feed/fetch.py")
    titles = [a.title for a in await actions(s, "src/feed/fetch.py")]
    assert titles[-2:] == [
        "Mark src/feed/fetch reviewed",
        "Show changes since src/feed/fetch was updated",
    ]
    action = (await actions(s, "src/feed/fetch.py"))[-1]
    assert action.command is not None and action.command.command == "canon.showChanges"
    uri = await s.command("canon.showChanges", *(action.command.arguments or []))
    assert [d.uri for d in s.client.shown_documents] == [uri]
    path = Path(unquote(urlparse(uri).path))
    assert path.suffix == ".diff" and s.root not in path.parents
    assert path.is_relative_to(SERVER_ENV["XDG_CACHE_HOME"])
    assert not stat.S_IMODE(os.stat(path).st_mode) & 0o222  # read-only
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Changes to the files src/feed/fetch governs since updated 2026-10-21")
    assert f"# {line_of(s)}\n" in text
    assert "-    return get(timeout=5)\n" in text
    assert "+    return retry(429, backoff(get, timeout=10))\n" in text
    again = await s.command("canon.showChanges", {"address": "src/feed/fetch"})
    assert again == uri  # rewritten in place although read-only


async def test_spec_9_1_a_review_redates_the_evidence_then_clears_it(s: Session):
    """SPEC §9.1 after an edit: a `reviewed` date between the commits keeps only the commits
    after it (no new git pass needed); one after them all clears the verdict."""
    await s.checked()
    s.open("src/feed/fetch.py")
    path = s.root / FETCH
    original = path.read_text(encoding="utf-8")

    async def asset_message() -> str:
        found = await s.diagnostics("src/feed/fetch.py")
        return found[0].message if found else ""

    def edit(reviewed: str) -> None:
        path.write_text(original.replace("---\n#", f"reviewed: {reviewed}\n---\n#"), "utf-8")
        if client_watches(s):
            s.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(
                    changes=[types.FileEvent(uri=s.uri(FETCH), type=types.FileChangeType.Changed)]
                )
            )

    edit("2026-11-10")
    expected = (
        "governing article src/feed/fetch is stale: 2 commits in 19 days since reviewed "
        "2026-11-10 touched src/feed/fetch.py"
    )

    async def redated() -> bool:
        return (await asset_message()).startswith(expected)

    await s.until(redated, what="the evidence re-dated to the review")
    assert await lenses(s, "src/feed/fetch.py") == [
        "canon: src/feed/fetch · updated 2026-10-21 · 2 journal",
        "stale · 2 commits since 2026-11-10",
    ]
    edit("2026-11-28")

    async def cleared() -> bool:
        return await s.diagnostics("src/feed/fetch.py") == []

    await s.until(cleared, what="the stale hint to go")
    assert len(await lenses(s, "src/feed/fetch.py")) == 1


async def test_newly_stale_after_an_edit_names_its_subject_once(s: Session):
    """SPEC §9.1 after an edit that makes a fresh article stale: until the next pass brings
    the evidence, the asset's hint carries the short reason, its subject named once (not
    "governing article src/app is stale: src/app is stale: …")."""
    await s.checked()
    s.open("src/app.py")
    path = s.root / ".canon/articles/src/app.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("updated: 2026-11-28", "updated: 2026-01-05"),
        encoding="utf-8",
    )
    if client_watches(s):
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=s.uri(".canon/articles/src/app.md"), type=types.FileChangeType.Changed
                    )
                ]
            )
        )

    async def asset_message() -> str:
        found = await s.diagnostics("src/app.py")
        return found[0].message if found else ""

    first = await s.until(asset_message, what="the stale hint on src/app.py")
    assert first.startswith("governing article src/app is stale: src/app.py changed on "), first
    assert first.count("src/app is") == 1, first
    assert first.endswith(
        "after the article was last updated on 2026-01-05; update it, or mark it reviewed if "
        "it still holds."
    ), first
