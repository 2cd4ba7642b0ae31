"""gitrun (SPEC §12): git's output goes to a file of its own, so git never waits for us to
read it, and every guard stays: None on failure, every process reaped. Real git, real files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from counting_git import counting_git

from canon_ls.core.git import gitrun


def _git(repo: Path, *args: str) -> None:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose one file is far more than a pipe holds (64 KB)."""
    root = tmp_path / "proj"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "big.txt").write_bytes(b"0123456789abcde\n" * (1 << 16))  # 1 MiB
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "big")
    return root


def _exited(job: gitrun.Job, within: float) -> bool:
    proc = job._proc
    assert proc is not None
    end = time.monotonic() + within
    while time.monotonic() < end:
        if proc.poll() is not None:
            return True
        time.sleep(0.02)
    return False


def test_git_finishes_a_big_output_with_nobody_reading(repo: Path) -> None:
    """The reader of a pipe needs the GIL, and a busy thread held it: git stalled with its
    pipe full. Into a file, git ends on its own; the output is then read whole."""
    job = gitrun.start(repo, "show", "HEAD:big.txt")
    try:
        assert _exited(job, within=20), "git waited for its output to be read"
        assert job.output() == (repo / "big.txt").read_bytes()
    finally:
        job.close()


def test_many_at_once_each_output_whole(repo: Path) -> None:
    big = (repo / "big.txt").read_bytes()
    outs = gitrun.run_many(repo, ("show", "HEAD:big.txt"), ("rev-parse", "HEAD"), ("nope",))
    assert outs[0] == big and outs[1] and len(outs[1].strip()) == 40 and outs[2] is None


def test_the_output_as_a_file_and_failures_as_none(repo: Path, tmp_path: Path) -> None:
    job = gitrun.start(repo, "show", "HEAD:big.txt")
    file = job.file()
    assert file is not None
    with file:
        assert file.read(16) == b"0123456789abcde\n"
    assert gitrun.start(repo, "show", "HEAD:missing.txt").file() is None
    assert gitrun.run(tmp_path, "rev-parse", "HEAD") is None  # no repository


def test_a_timed_out_or_abandoned_job_is_killed_and_reaped(repo: Path) -> None:
    job = gitrun.start(repo, "show", "HEAD:big.txt")
    proc = job._proc
    assert job.output(timeout=0) in (None, (repo / "big.txt").read_bytes())
    assert proc is not None and proc.returncode is not None
    abandoned = gitrun.start(repo, "log", "-p")
    proc = abandoned._proc
    abandoned.close()
    assert proc is not None and proc.returncode is not None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_job_steps_back_and_a_fifo_still_stops_it(repo: Path) -> None:
    """`step_back` lowers git's CPU priority below the caller's; git blocked opening a
    named pipe is still noticed, killed and answers None."""
    os.mkfifo(repo / ".gitattributes")
    job = gitrun.start(repo, "check-attr", "-a", "big.txt", step_back=3)
    proc = job._proc
    assert proc is not None
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(mine + 3, 19)
    assert job.output(timeout=30) is None
    assert proc.returncode is not None


def test_at_most_two_git_processes_run_at_once(repo: Path, tmp_path: Path) -> None:
    """Issue 40 item 3: seven git processes at once summed 1.7 GB at 500k files; one canon
    process now runs at most two (`canon check`: listings, status and the history pass)."""
    bindir, log = counting_git(tmp_path, hold=0.2)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    (repo / ".canon" / "articles").mkdir(parents=True)
    (repo / ".canon" / "articles" / "big.md").write_text("---\ncapsule: Big.\n---\n# big\n")
    cli = [sys.executable, "-m", "canon_ls.agent.cli", "check"]
    run = subprocess.run(cli, cwd=repo, env={**os.environ, **env}, capture_output=True, text=True)
    assert "Traceback" not in run.stderr, run.stderr
    counts = [int(line.split()[0]) for line in log.read_text().splitlines()]
    assert len(counts) >= 4, counts  # the check did run git
    assert max(counts) <= gitrun.AT_ONCE, counts
