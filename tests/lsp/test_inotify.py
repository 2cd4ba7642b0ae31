"""The Linux watcher (canon_ls/core/storage/inotify.py) with real files, and the watcher child using
it.

SPEC §10 (external changes): writes, creations, deletions and moves reach the server; a file
that is merely opened or read wakes nothing (watchfiles' inotify watch asks for IN_OPEN, so a
cold start that reads a 50k-article store twice kept the watcher busy for seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from canon_ls.core.storage import inotify

pytestmark = pytest.mark.skipif(not inotify.available(), reason="inotify is Linux only")

ADDED, MODIFIED, DELETED = inotify.ADDED, inotify.MODIFIED, inotify.DELETED
IN_OPEN = 0x20


def changes(watch: inotify.Inotify, timeout_ms: int = 5000) -> set[tuple[int, str]]:
    """The next batch (empty when none came within the timeout)."""
    got = watch.watch(200, 50, timeout_ms, threading.Event())
    return got if isinstance(got, set) else set()


def test_writes_creations_and_deletions_are_reported(tmp_path: Path) -> None:
    existing = tmp_path / "a.md"
    existing.write_text("one\n")
    with inotify.Inotify([str(tmp_path)], recursive=True) as watch:
        existing.write_text("two\n")
        assert (MODIFIED, str(existing)) in changes(watch)
        new = tmp_path / "b.md"
        new.write_text("new\n")
        assert (ADDED, str(new)) in changes(watch)
        existing.unlink()
        assert (DELETED, str(existing)) in changes(watch)


def test_a_burst_of_rewrites_is_one_batch_after_the_quiet(tmp_path: Path) -> None:
    """A file rewritten every few ms keeps the batch open until a quiet step passes (the
    server then handles the burst once, not on every write)."""
    target = tmp_path / "a.md"
    target.write_text("0\n")
    last = [0.0]

    def burst() -> None:
        for i in range(15):
            target.write_text(f"{i}\n")
            last[0] = time.monotonic()
            time.sleep(0.005)  # the stimulus' pace (a write every 5 ms), not a wait

    with inotify.Inotify([str(tmp_path)], recursive=True) as watch:
        writer = threading.Thread(target=burst)
        writer.start()
        got = watch.watch(2000, 40, 5000, threading.Event())
        returned = time.monotonic()
        writer.join()
        assert got == {(MODIFIED, str(target))}
        assert returned >= last[0]


def test_reading_a_file_wakes_nothing(tmp_path: Path) -> None:
    article = tmp_path / "sub" / "a.md"
    article.parent.mkdir()
    article.write_text("capsule\n")
    with inotify.Inotify([str(tmp_path)], recursive=True) as watch:
        for _ in range(20):
            article.read_text()
        assert changes(watch, timeout_ms=300) == set()
        article.write_text("changed\n")
        assert (MODIFIED, str(article)) in changes(watch)


def test_a_new_directory_is_reported_and_watched_with_what_is_below(tmp_path: Path) -> None:
    with inotify.Inotify([str(tmp_path)], recursive=True) as watch:
        deep = tmp_path / "new" / "deep"
        deep.mkdir(parents=True)
        assert (ADDED, str(tmp_path / "new")) in changes(watch)
        later = deep / "later.md"
        later.write_text("z\n")
        assert (ADDED, str(later)) in changes(watch)


def test_a_directory_moved_out_is_deleted_and_no_longer_watched(tmp_path: Path) -> None:
    inside = tmp_path / "store"
    (inside / "dir").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    with inotify.Inotify([str(inside)], recursive=True) as watch:
        (inside / "dir").rename(outside / "dir")
        assert (DELETED, str(inside / "dir")) in changes(watch)
        (outside / "dir" / "a.md").write_text("x\n")
        assert changes(watch, timeout_ms=300) == set()


def test_a_flat_watch_reports_entries_but_not_deeper(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with inotify.Inotify([str(tmp_path)], recursive=False) as watch:
        (tmp_path / "sub" / "deep.md").write_text("x\n")
        assert changes(watch, timeout_ms=300) == set()
        (tmp_path / "top.md").write_text("x\n")
        assert (ADDED, str(tmp_path / "top.md")) in changes(watch)


def test_a_missing_path_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        inotify.Inotify([str(tmp_path / "nowhere")], recursive=True)


def test_the_watcher_child_watches_without_open_events(tmp_path: Path) -> None:
    """The child the server runs: its watches never ask for IN_OPEN, and a write arrives."""
    store = tmp_path / ".canon"
    store.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "WATCHFILES_FORCE_POLLING"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "canon_ls.lsp.helpers.fswatch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps({"trees": [str(store)], "dirs": []}) + "\n").encode())
        proc.stdin.flush()
        lines = [json.loads(proc.stdout.readline()) for _ in range(2)]  # trees, then dirs
        assert {"ready": "trees", "count": 1, "polling": False, "by": "inotify"} in lines
        masks = []
        for fd in os.listdir(f"/proc/{proc.pid}/fdinfo"):
            text = Path(f"/proc/{proc.pid}/fdinfo/{fd}").read_text()
            masks += [
                int(part.split(":")[1], 16)
                for line in text.splitlines()
                if line.startswith("inotify")
                for part in line.split()
                if part.startswith("mask:")
            ]
        assert masks and not any(mask & IN_OPEN for mask in masks)
        (store / "a.md").write_text("x\n")
        batch = json.loads(proc.stdout.readline())
        assert [ADDED, str(store / "a.md")] in batch["changes"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
