"""SPEC §12 with real concurrent processes: a multi-article `canon import --write` never writes
back a body it did not read under the store lock, concurrent imports journal each source once,
and concurrent `canon trust` / `--revoke` runs never lose a change (issue 35 #1, #8, #9).

The interleavings are forced, not hoped for: the test holds the store lock itself, starts the
processes, waits until the kernel lists each of them as waiting for that lock (/proc/locks),
and only then lets go. No sleeps.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_cli import TODAY, canon, canon_command

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/locks"), reason="needs Linux's /proc/locks to see lock waiters"
)


def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    full = dict(os.environ, CANON_TODAY=TODAY, **(env or {}))
    full.pop("CANON_DEBUG", None)
    return subprocess.Popen(
        [*canon_command(), *args], cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _waiters(inode: int) -> int:
    """How many processes wait for a flock on the file with this inode."""
    text = Path("/proc/locks").read_text()
    return sum(
        1
        for line in text.splitlines()
        if "->" in line and " FLOCK " in line and line.split()[6].endswith(f":{inode}")
    )


@contextlib.contextmanager
def held(directory: Path) -> Iterator[Callable[[int, list[subprocess.Popen[bytes]]], None]]:
    """Hold the flock canon takes on `directory`; yields wait(n): return once n processes
    wait for it (a condition, polled, with a deadline)."""
    fd = os.open(directory, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    inode = os.fstat(fd).st_ino

    def wait(n: int, procs: list[subprocess.Popen[bytes]]) -> None:
        deadline = time.monotonic() + 60
        while _waiters(inode) < n:
            for proc in procs:
                assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"{n} waiters never showed up"

    try:
        yield wait
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _finish(proc: subprocess.Popen[bytes]) -> str:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def _rules(project: Path, n: int) -> None:
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True)
    (project / "src" / "api").mkdir(parents=True, exist_ok=True)  # the folder the globs cover
    for i in range(n):
        (rules / f"r{i:03}.md").write_text(
            f'---\npaths:\n  - "src/api/**"\n---\nRule {i}: handlers check input {i}.\n'
        )


def _imports(project: Path) -> list[Path]:
    return sorted((project / ".canon" / "journal").glob("*-import-*.md"))


def test_an_edit_made_during_an_import_is_kept(project: Path) -> None:
    """SPEC §12: `canon import --write` re-reads each article under the store lock, so a
    `canon write` acknowledged while it runs is not overwritten by a body planned before."""
    _rules(project, 200)
    assert canon("write", "src/api", "--capsule", "The API.", cwd=project).code == 0
    with held(project / ".canon") as wait:
        importer = start("import", "--write", cwd=project)
        wait(1, [importer])  # it planned and now waits to write its first article
        human = start("write", "src/api", "--body", "HUMAN EDIT", cwd=project)
        wait(2, [importer, human])
    assert _finish(human).strip().startswith("Wrote src/api")
    _finish(importer)
    body = (project / ".canon/articles/src/api.md").read_text("utf-8")
    assert "HUMAN EDIT" in body  # whichever of the two took the lock first
    assert len(_imports(project)) == 200


def test_concurrent_imports_journal_each_source_once(project: Path) -> None:
    """SPEC §12: four imports that all planned before any wrote: each source is journaled
    once and merged into its article once."""
    _rules(project, 11)
    assert canon("write", "src/api", "--capsule", "The API.", cwd=project).code == 0
    with held(project / ".canon") as wait:
        runs = [start("import", "--write", cwd=project) for _ in range(4)]
        wait(4, runs)
    for run in runs:
        _finish(run)
    assert len(_imports(project)) == 11
    body = (project / ".canon/articles/src/api.md").read_text("utf-8")
    assert all(body.count(f"Rule {i}: ") == 1 for i in range(11)), body


TOGGLER = """
import json, os, sys
from canon_ls.agent.cli import main
record, rounds = sys.argv[1], int(sys.argv[2])
key = os.path.realpath(".")
for i in range(rounds):
    revoke = i % 2 == 1
    assert main(["trust", "--revoke"] if revoke else ["trust"]) == 0
    with open(record, encoding="utf-8") as f:
        if (key in json.load(f)) == revoke:
            sys.exit(f"round {i}: the change to {key} was lost")
"""


def test_concurrent_trust_and_revoke_lose_nothing(tmp_path: Path) -> None:
    """SPEC §12: the trust record is read, changed and written under a lock. Three processes,
    each trusting and revoking its own project in turn (40 rounds), race on the one record:
    after each of its commands a process finds its own change there (no other process can
    write back a record read before it)."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), CANON_TODAY=TODAY)
    record = tmp_path / "config" / "canon" / "trusted.json"
    procs = []
    for name in "abc":
        project = tmp_path / name
        (project / "lib").mkdir(parents=True)
        (project / "canon.toml").write_text('mounts = ["lib"]\n')
        command = [sys.executable, "-c", TOGGLER, str(record), "40"]
        procs.append(subprocess.Popen(command, cwd=project, env=env, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    assert json.loads(record.read_text()) == {}
