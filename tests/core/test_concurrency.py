"""SPEC §12 with real processes: concurrent journal writers all land; concurrent article
writers never leave a torn or mixed file; SIGKILL mid-write leaves the old or the new file."""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import re
import signal
import time
from pathlib import Path

import pytest

from canon_ls.core.storage.article import parse
from canon_ls.core.storage.store import Store
from tests.conftest import TODAY

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
CTX = mp.get_context("fork")


def _journal_worker(project: str, i: int, barrier) -> None:  # type: ignore[no-untyped-def]
    store = Store(Path(project))
    barrier.wait(timeout=20)
    store.journal(f"entry number {i} " + "x" * 2000, slug="same", source=f"p{i}")


def test_spec_12_sixteen_journal_writers_same_slug(project: Path) -> None:
    """SPEC §6/§12: 16 processes journaling the same slug at once -> 16 files, none lost."""
    barrier = CTX.Barrier(16)
    procs = [
        CTX.Process(target=_journal_worker, args=(str(project), i, barrier)) for i in range(16)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    files = sorted((project / ".canon/journal").iterdir())
    names = {f.name for f in files}
    assert names == {f"{TODAY}-same.md"} | {f"{TODAY}-same-{n}.md" for n in range(2, 17)}
    bodies = set()
    for f in files:
        entry = parse(f.read_bytes(), f.name)
        assert not entry.problems
        i = int(entry.body.split()[2])
        assert entry.meta["harness"] == f"p{i}"
        assert entry.body == f"entry number {i} " + "x" * 2000 + "\n"
        bodies.add(i)
    assert bodies == set(range(16))


def _versions(n: int) -> list[tuple[str, str]]:
    return [
        (f"Version {i} capsule.", f"# v{i}\n" + (f"line {i}\n" * (500 + 37 * i))) for i in range(n)
    ]


def _article_worker(project: str, i: int, rounds: int, barrier) -> None:  # type: ignore[no-untyped-def]
    store = Store(Path(project))
    versions = _versions(8)
    barrier.wait(timeout=20)
    for r in range(rounds):
        capsule, body = versions[(i + r) % 8]
        store.write("src/shared.ts", capsule=capsule, body=body)


def test_spec_12_eight_writers_one_article(project: Path) -> None:
    """SPEC §12: 8 processes writing one article -> it always parses and equals one write."""
    versions = set(_versions(8))
    barrier = CTX.Barrier(9)
    procs = [
        CTX.Process(target=_article_worker, args=(str(project), i, 15, barrier)) for i in range(8)
    ]
    for p in procs:
        p.start()
    barrier.wait(timeout=20)
    file = project / ".canon/articles/src/shared.md"
    reads = 0
    while any(p.is_alive() for p in procs) or reads == 0:
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            continue
        a = parse(data, "src/shared")
        assert not a.problems
        assert (a.capsule, a.body) in versions
        reads += 1
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    a = parse(file.read_bytes(), "src/shared")
    assert (a.capsule, a.body) in versions
    leftovers = [n for n in os.listdir(file.parent) if n != "shared.md"]
    assert leftovers == []


def _writer_loop(project: Path, fd: int) -> None:
    store = Store(project)
    versions = _versions(3)
    i = 0
    while True:
        capsule, body = versions[i % 3]
        store.write("src/crash.ts", capsule=capsule, body=body)
        os.write(fd, b".")
        i += 1


def test_spec_12_sigkill_mid_write(project: Path) -> None:
    """SPEC §6/§12: SIGKILL a writer at random moments (200 trials): the article always parses
    and equals one of the versions; leftover temp files are never taken for articles."""
    versions = set(_versions(3))
    file = project / ".canon/articles/src/crash.md"
    rng = random.Random(1234)
    trials = 200
    for _ in range(trials):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: write forever until killed
            try:
                os.close(r)
                _writer_loop(project, w)
            finally:
                os._exit(0)
        os.close(w)
        assert os.read(r, 1) == b"."  # at least one write has landed: the loop is running
        deadline = time.perf_counter() + rng.uniform(0, 0.004)
        while time.perf_counter() < deadline:
            pass
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
        a = parse(file.read_bytes(), "src/crash")
        assert not a.problems
        assert (a.capsule, a.body) in versions
    torn = [n for n in os.listdir(file.parent) if n.endswith(".tmp")]
    assert all(re.fullmatch(r"\.crash\.md\.canon-[0-9a-z]{8}\.tmp", n) for n in torn), torn
    print(f"{trials} kills, {len(torn)} interrupted mid-write (temp files left behind)")
    store = Store(project)
    assert store.addresses() == ["src/crash"]


def test_spec_12_abandoned_temp_files_are_swept(project: Path) -> None:
    """SPEC §12 nothing is lost and nothing piles up: a killed writer's temp file (never an
    article) is removed by the next listing once it is old enough to belong to no live writer;
    a fresh one (a writer in flight) stays, and so does every file the tool did not name
    (`.<name>.canon-<random>.tmp` is the tool's; `.ideas.md.draft.tmp` is the user's)."""
    from canon_ls.core.storage.fsio import ABANDONED_S

    store = Store(project)
    store.write("src/a.ts", capsule="A.")
    folder = project / ".canon/articles/src"
    old = folder / ".a.md.canon-k3j2h1a9.tmp"
    fresh = folder / ".a.md.canon-z9y8x7w6.tmp"
    users = [
        folder / ".notes.tmp",
        folder / ".ideas.md.draft.tmp",
        folder / ".a.md.k3j2h1.tmp",
        folder / ".a.md.canon-draft.tmp",
        folder / "a.md.canon-k3j2h1a9.tmp",
    ]
    for path in (old, fresh, *users):
        path.write_text("half a write")
    past = time.time() - ABANDONED_S - 60
    for path in (old, *users):
        os.utime(path, (past, past))
    again = Store(project)
    assert again.addresses() == ["src/a"]
    assert not old.exists()
    assert fresh.exists()
    assert all(path.exists() for path in users), [p.name for p in users if not p.exists()]


def _journal_child(project: Path, fd: int, body: str) -> None:
    store = Store(project)
    os.write(fd, b".")  # the entry is about to be written
    store.journal(body, slug="big", source="cli")
    os.write(fd, b"!")


def _fork_journal(project: Path, body: str) -> tuple[int, int]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            _journal_child(project, w, body)
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"."
    return pid, r


def test_spec_12_killed_journal_writer_leaves_no_partial_entry(project: Path) -> None:
    """SPEC §6 journal, §12: an entry appears whole or not at all. A writer is SIGKILLed at 40
    points spread over the time one 3 MB entry takes to write (so kills land mid-write);
    every entry a reader lists afterwards is complete."""
    body = "".join(f"line {i:07d} of a large entry\n" for i in range(110_000))
    start = time.perf_counter()
    pid, r = _fork_journal(project, body)  # calibrate: one uninterrupted write
    assert os.read(r, 1) == b"!"
    duration = time.perf_counter() - start
    os.waitpid(pid, 0)
    os.close(r)
    points = 40
    for i in range(points):
        pid, r = _fork_journal(project, body)
        deadline = time.perf_counter() + duration * (i + 0.5) / points
        while time.perf_counter() < deadline:
            pass
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
    journal = project / ".canon/journal"
    for path in journal.iterdir():
        if path.name.endswith(".md"):
            entry = parse(path.read_bytes(), path.name)
            size = path.stat().st_size
            assert entry.body == body, f"{path.name} is a partial entry ({size} bytes)"
    store = Store(project)
    entries = store.journal_entries()
    assert entries, "the calibration entry landed"
    for entry in entries:
        assert store.journal_body(entry) == body, entry.name
    leftovers = [p.name for p in journal.iterdir() if not p.name.endswith(".md")]
    assert all(re.fullmatch(r"\..+\.md\.canon-[0-9a-z]{8}\.tmp", n) for n in leftovers)
    print(
        f"{points} kills over {duration * 1000:.0f} ms: {len(entries)} whole entries, "
        f"{len(leftovers)} temp files left by killed writers"
    )
