"""The whole-store pass in its child process (SPEC §10 diagnostics, §9 staleness): the git pass
runs alongside the rest, a partial answer (everything but staleness) comes first, and the
final answer is exactly `core.check.check`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import SERVER_ENV, build_workspace

from canon_ls.core.checking import assets as core_assets
from canon_ls.core.checking.check import check
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.storage.project import open_store
from canon_ls.lsp.helpers import background


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANON_TODAY", SERVER_ENV["CANON_TODAY"])  # the child inherits both
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return build_workspace(tmp_path / "proj")


def _reference(project: Path, staleness: bool) -> list[core_assets.Finding]:
    store = open_store(project, {})
    times = ChangeTimes(project) if staleness else None
    assets = core_assets.Assets(project, store_root=store.root)
    return check(store, assets, times, staleness=staleness)


def test_partial_then_final_equal_check_without_and_with_staleness(project: Path):
    """SPEC §10 diagnostics: the partial snapshot is check() without stale findings, the final
    one is check() itself (same findings, same order), plus the stale set (SPEC §9)."""
    partials: list[background.Snapshot] = []
    final = background.compute(project, {}, True, partial=partials.append)
    assert len(partials) == 1 and partials[0].partial and not final.partial
    assert partials[0].findings == _reference(project, staleness=False)
    assert final.findings == _reference(project, staleness=True)
    assert any(f.code == "stale" for f in final.findings)
    assert set(final.stale) == {f.address for f in final.findings if f.code == "stale"}
    assert final.newest and partials[0].moves == final.moves


def test_no_partial_without_staleness(project: Path):
    """SPEC §10 settings `staleness.enabled: false`: no git pass, one answer, no stale finding."""
    partials: list[background.Snapshot] = []
    final = background.compute(project, {}, False, partial=partials.append)
    assert partials == []
    assert final.findings == _reference(project, staleness=False)
    assert final.stale == {} and final.newest == {}


async def test_child_process_streams_partial_then_final(project: Path):
    """The real child (`python -m canon_ls.lsp.helpers.background`): both frames arrive, in
    order."""
    seen: list[background.Snapshot] = []

    async def on_partial(snapshot: background.Snapshot) -> None:
        seen.append(snapshot)

    final = await background.run(project, {}, True, on_partial)
    assert final.error is None, final.error
    assert [s.partial for s in seen] == [True]
    assert final.findings == _reference(project, staleness=True)


async def test_child_failure_is_a_sentence(tmp_path: Path):
    """Bad input never crashes the server: a failing child answers an error, not an exception."""
    final = await background.run(tmp_path, {"root": 42}, True)
    assert final.error


def test_the_child_gets_a_fixed_mmap_threshold_unless_the_user_set_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Freed big buffers go back to the system at once (glibc); a user's own value wins."""
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    env = background.child_env()
    assert env["MALLOC_MMAP_THRESHOLD_"] == "131072" and env["MALLOC_ARENA_MAX"] == "4"


async def test_a_snapshot_in_pieces_arrives_whole(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
):
    """Issue 15 (hover p99 during the start-up check): the child sends a snapshot's big fields
    in pieces the server unpickles one per turn of its loop; what arrives is the snapshot."""
    import asyncio
    import copy

    # on a thread of its own: the check lowers its thread's priority (git_reads.yield_cpu)
    sent = await asyncio.to_thread(background.compute, project, {}, True)
    assert len(sent.findings) > 2 and len(sent.dirs) > 2 and sent.newest and sent.evidence
    monkeypatch.setattr(background, "PIECE", 2)
    background._emit(background.Loaded())
    background._emit_snapshot(copy.deepcopy(sent))
    wire = capsysbinary.readouterr().out
    reader = asyncio.StreamReader()
    reader.feed_data(wire)
    reader.feed_eof()
    loaded: list[bool] = []
    got = await background._next_snapshot(reader, lambda: loaded.append(True))
    assert loaded == [True]
    assert got == sent
    assert wire.count(b"Piece") > 4  # several pieces per big field


def test_the_child_imports_no_asyncio() -> None:
    """The child's memory (background.py: asyncio, logging and tempfile, with ssl, cost it
    about 14 MB): only the server's side of the module imports them, where it runs."""
    code = (
        "import sys\n"
        "from canon_ls.lsp.helpers import background\n"
        "heavy = ('asyncio', 'logging', 'tempfile', 'ssl')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
