"""The one way canon runs git (SPEC §9, §12): read-only, and never a program the repository's
configuration names."""

from __future__ import annotations

import contextlib
import io
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

TIMEOUT = 120.0
_POLL = 0.2
AT_ONCE = 2  # git processes one canon process runs at a time (each may hold the index)
SLOTS = "CANON_GIT_SLOTS"  # share(): AT_ONCE lock files, held by each git while it runs
WANT = "CANON_GIT_WANT"  # share(): a lock file each git start waiting for a slot holds shared
_slot_files: list[BinaryIO] = []
_want: list[BinaryIO] = []  # the want file, once share()d
_in_heavy = threading.local()  # on: this thread holds heavy()'s slot
_holders: dict[int, int] = {}  # a slot's descriptor: how many Held of this process hold it
_live: list[tuple[subprocess.Popen[bytes], float]] = []  # started, maybe still running
_live_lock = threading.RLock()  # heavy() holds it while its thread starts git
_SAFE = (
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "log.showSignature=false",
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    "diff.external=",
    "-c",
    "core.pager=cat",
    "-c",
    "submodule.recurse=false",
    "-c",
    "diff.ignoreSubmodules=all",
    "-c",
    "status.submoduleSummary=false",
)
_DIFFING = frozenset({"log", "show", "diff", "diff-index", "diff-files", "diff-tree"})
_HASHING = frozenset({"status", "diff", "diff-index", "diff-files"})
_FIFO_WAITS = frozenset(
    {"wait_for_partner", "fifo_open", "pipe_read", "pipe_wait", "pipe_wait_readable"}
)


def environment() -> dict[str, str]:
    """The environment git runs in: no pager, no prompt, no optional index writes."""
    env = dict(os.environ)
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0")
    return env


def _filters(cwd: Path) -> list[str]:
    """`-c` pairs emptying every filter driver the config defines (their names come from
    `git config`, which itself runs nothing)."""
    out = Job(
        ["git", *_SAFE, "config", "-z", "--name-only", "--get-regexp", r"^filter\."], cwd
    ).output()
    drivers: set[str] = set()
    for key in (out or b"").decode("utf-8", "surrogateescape").split("\0"):
        name, dot, _field = key.removeprefix("filter.").rpartition(".")
        if dot and key.startswith("filter.") and name:
            drivers.add(name)
    pairs: list[str] = []
    for name in sorted(drivers):
        for field, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            pairs += ["-c", f"filter.{name}.{field}={value}"]
    return pairs


def command(cwd: Path, args: Sequence[str]) -> list[str]:
    """The full argv for `git [global options] <subcommand> …` with every guard in place."""
    at = 0  # the subcommand: the first argument that is no global option nor a `-c` value
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] == "-c" else 1
    at = min(at, len(args))
    sub = args[at] if at < len(args) else ""
    argv = ["git", *_SAFE, *args[:at]]
    if sub in _HASHING:
        argv += _filters(cwd)
    argv += list(args[at : at + 1])
    if sub in _DIFFING:
        argv += ["--no-ext-diff", "--no-textconv"]
    argv += list(args[at + 1 :])
    return argv


def run(cwd: Path, *args: str, timeout: float = TIMEOUT) -> bytes | None:
    """Run one read-only git command; its stdout, or None when git is missing, fails, times
    out, blocks on a FIFO, or this is no repository."""
    return start(cwd, *args).output(timeout)


def run_many(cwd: Path, *commands: Sequence[str]) -> list[bytes | None]:
    """Several read-only git commands at once (two cores halve the wait); each output as
    run() gives it. Each writes to its own file, so none waits for the others to be read."""
    jobs = [start(cwd, *args) for args in commands]
    try:
        return [job.output() for job in jobs]
    finally:
        for job in jobs:
            job.close()


def start(cwd: Path, *args: str, step_back: int = 0) -> Job:
    """Start one read-only git command (every guard of command() kept); its Job gives the output."""
    job = Job(command(cwd, args), cwd)
    if step_back and job._proc is not None:
        with contextlib.suppress(OSError, AttributeError):  # not on every platform
            pid = job._proc.pid
            os.setpriority(
                os.PRIO_PROCESS, pid, min(os.getpriority(os.PRIO_PROCESS, 0) + step_back, 19)
            )
    return job


def share() -> None:
    """Make AT_ONCE hold across this process and every child it starts from now on (the language
    server: its check child and history commands run git too; at 500k files each may hold
    ~180 MB). Each slot is an unnamed file the children reach through /proc (Linux)."""
    if sys.platform.startswith("linux") and SLOTS not in os.environ:
        with contextlib.suppress(OSError):
            files = [tempfile.TemporaryFile() for _ in range(AT_ONCE + 1)]  # noqa: SIM115
            fds = [f"/proc/{os.getpid()}/fd/{f.fileno()}" for f in files]
            _slot_files[:], _want[:] = files[:-1], files[-1:]
            os.environ[SLOTS], os.environ[WANT] = os.pathsep.join(fds[:-1]), fds[-1]


class Held:
    """The slots of share() taken by this process as each comes free (`take`, again until it
    answers True): meanwhile no git of the process tree starts. The language server holds
    them while its search worker lives (that worker beside a check's git or store was the
    tree's peak, issue 40 item 3); it runs git only in its children, which may wait."""

    def __init__(self) -> None:
        self._held: set[int] = set()

    def take(self) -> bool:
        import fcntl  # POSIX; share() makes slots on Linux alone

        for fd in (f.fileno() for f in _slot_files):
            if fd not in self._held:  # another Held of this process (another folder's) has it too
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    self._held.add(fd)
                    _holders[fd] = _holders.get(fd, 0) + 1
        return len(self._held) == len(_slot_files)

    def wanted(self) -> bool:
        """Whether a git start of the tree waits for a slot now."""
        import fcntl

        if not _want:
            return False
        try:  # a lock of its own (another open file): the waiters' shared locks refuse it
            with open(f"/proc/self/fd/{_want[0].fileno()}", "rb") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        return False

    def release(self) -> None:
        import fcntl

        for fd in self._held:
            _holders[fd] -= 1
            if not _holders[fd]:  # the last holder of this process lets it go
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
        self._held.clear()


def _slot() -> int | None:
    """A descriptor of a shared slot locked now (git inherits it: the lock goes when git
    exits), -1 while every slot is held, None without shared slots."""
    import fcntl  # POSIX; share() sets slots on Linux alone

    for path in filter(None, os.environ.get(SLOTS, "").split(os.pathsep)):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # the process that shared them is gone
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            os.close(fd)
    return -1 if os.environ.get(SLOTS) else None


class Job:
    """One git process started now. Its stdout goes to an unnamed temporary file, never a pipe: git
    then never waits for us."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self._started = time.monotonic()
        self._out: BinaryIO | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._ok: bool | None = None
        self._piped: bytes | None = None  # the output when it came through a pipe
        try:
            self._out = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 (closed by close())
        except OSError:  # no temporary directory: a pipe, read as git writes it
            self._out = None
        try:
            with _admitted(self._out is not None) as slot:
                self._proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=environment(),
                    stdin=subprocess.DEVNULL,
                    stdout=self._out if self._out is not None else subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    pass_fds=() if slot is None else (slot,),
                )
                _live.append((self._proc, self._started))
        except OSError:
            self.close()

    def wait(self, timeout: float = TIMEOUT) -> bool:
        """Whether git exited with 0 within `timeout` seconds of its start. A process that
        outlives that, or sleeps opening or reading a named pipe, is killed (False)."""
        if self._ok is not None or self._proc is None:
            return bool(self._ok)
        proc = self._proc
        while True:
            step = min(_POLL, max(0.01, self._started + timeout - time.monotonic()))
            try:
                if self._out is None:
                    self._piped, _ = proc.communicate(timeout=step)
                else:
                    _wait_exit(proc, step)
                break
            except subprocess.TimeoutExpired:
                late = time.monotonic() - self._started >= timeout
                if late or _blocked_on_fifo(proc.pid):
                    proc.kill()
                    proc.communicate()
                    self._ok = False
                    return False
        self._ok = proc.returncode == 0
        return self._ok

    def file(self, timeout: float = TIMEOUT) -> BinaryIO | None:
        """The output as a file at its start (the caller closes it), or None on failure."""
        try:
            if not self.wait(timeout):
                return None
            if self._out is None:
                return io.BytesIO(self._piped or b"")
            out, self._out = self._out, None
            out.seek(0)
            return out
        finally:
            self.close()

    def output(self, timeout: float = TIMEOUT) -> bytes | None:
        """The whole output, or None on failure."""
        out = self.file(timeout)
        if out is None:
            return None
        with out:
            return out.read()  # sized from the file's length: one buffer, never a second

    def close(self) -> None:
        """Kill git if it still runs, reap it and drop the output (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.communicate()
        if self._out is not None:
            self._out.close()
            self._out = None


def _wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """proc.wait(timeout), woken the moment git exits by a pidfd (Linux): Popen's own timed
    wait polls with sleeps growing to 50 ms, up to doubling a 20 ms git call's wait."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3+: Popen's polling
        proc.wait(timeout=timeout)
        return
    exited = select.select([fd], [], [], timeout)[0]
    os.close(fd)
    if not exited:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    proc.wait()


@contextlib.contextmanager
def _admitted(wait: bool) -> Iterator[int | None]:
    """Hold a git start while `AT_ONCE` others run, here or in the process tree that share()d
    its slots (seven summed 1.7 GB at 500k files); yields the slot git keeps. One blocked or
    past its timeout is killed meanwhile; a piped job (`wait` False) is never held."""
    want: int | None = None  # a waiting start's shared lock on the want file (Held.wanted)
    while True:
        with _live_lock:
            now = time.monotonic()
            for proc, started in list(_live):
                if proc.poll() is not None:
                    _live.remove((proc, started))
                elif now - started >= TIMEOUT or _blocked_on_fifo(proc.pid):
                    with contextlib.suppress(OSError):
                        proc.kill()
            wait = wait and not getattr(_in_heavy, "on", False)
            slot = (_slot() if len(_live) < AT_ONCE else -1) if wait else None
            if slot != -1:
                if want is not None and want >= 0:
                    os.close(want)
                try:
                    yield slot
                finally:
                    if slot is not None and slot >= 0:
                        os.close(slot)  # git holds it now
                return
        if want is None:
            want = _wanting()
        time.sleep(0.005)


@contextlib.contextmanager
def heavy() -> Iterator[None]:
    """Hold a slot for work as heavy as a git (a check's loaded store): the server's search
    worker neither starts nor stays beside it. The git this thread starts meanwhile runs in
    that slot (waiting for another, the server may hold, would wait on the worker); no other
    thread of the process starts git meanwhile."""
    with _admitted(True):
        _in_heavy.on = True
        try:
            yield
        finally:
            _in_heavy.on = False


def _wanting() -> int:
    """A shared lock on the want file of share(), -1 without one."""
    import fcntl

    try:
        fd = os.open(os.environ[WANT], os.O_RDONLY | os.O_CLOEXEC)
    except (KeyError, OSError):
        return -1
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def _blocked_on_fifo(pid: int) -> bool:
    """Whether the process sleeps opening or reading a named pipe (Linux; else the timeout acts)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        with open(f"/proc/{pid}/wchan", encoding="ascii", errors="replace") as fh:
            return fh.read().strip() in _FIFO_WAITS
    except OSError:
        return False
