"""Memory of a process tree over time: each process's peak (VmHWM) and the tree's summed RSS.

A language server here is several processes (the server, the whole-store check child and its
`git`, the search worker), some short-lived. A sampler thread walks the tree every
`interval` seconds with psutil and reads each process's `/proc/<pid>/status` (Linux), so a
child that exits still counts with the last peak seen before it went.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any

import psutil


@dataclass
class Seen:
    role: str
    cmd: str = ""  # the command line it was seen with: a new one means it ran exec
    hwm_mb: float = 0.0  # the kernel's high-water mark of the resident set
    rss_mb: float = 0.0  # the largest resident set this sampler saw
    anon_mb: float = 0.0  # the largest anonymous part of it (not mapped files such as git's packs)


@dataclass
class TreeMemory:
    """Start it with the server's pid; `stop()` returns the figures (MB)."""

    pid: int
    interval: float = 0.1
    procs: dict[tuple[int, float], Seen] = field(default_factory=dict)
    peak_total_mb: float = 0.0  # the largest sum of current RSS over the tree at one sample
    peak_ours_mb: float = 0.0  # the same without git's processes (git's memory is git's own)
    # The tree's proportional set (Pss, smaps_rollup) at one sample: a page shared by several
    # processes (two git mapping the same pack index, Python's own libraries) counts once in
    # all, where the RSS sum counts it in each; and its anonymous memory alone (no mapped files)
    peak_pss_mb: float = 0.0
    peak_anon_mb: float = 0.0
    git_at_once: int = 0  # the most git processes seen in the tree at one sample
    at_peak: dict[str, float] = field(default_factory=dict)  # each role's RSS at peak_total_mb
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> TreeMemory:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.pid)
            while not self._stop.is_set():
                self.sample(root)
                self._stop.wait(self.interval)

    def sample(self, root: psutil.Process) -> None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        total = ours = pss = anon_total = 0.0
        gits = 0
        now: dict[str, float] = {}
        for proc in tree:
            try:
                key = (proc.pid, proc.create_time())
                seen = self.procs.get(key)
                cmd = _cmdline(proc)
                if not cmd:
                    # exited and not yet reaped (a zombie: no command line, no memory left);
                    # what was seen of it while it ran stays its figure
                    continue
                if seen is None or seen.cmd != cmd:
                    # new, or it has run exec since: a child seen between (v)fork and exec
                    # showed the server's pages, which are not its own
                    seen = self.procs[key] = Seen(role_of(proc, self.pid, cmd), cmd)
                hwm, rss, anon = _status(proc.pid)
            except (psutil.Error, OSError):
                continue
            seen.hwm_mb = max(seen.hwm_mb, hwm)
            seen.rss_mb = max(seen.rss_mb, rss)
            seen.anon_mb = max(seen.anon_mb, anon)
            total += rss
            anon_total += anon
            pss += _pss(proc.pid)
            now[seen.role] = now.get(seen.role, 0.0) + rss
            if seen.role != "git":
                ours += rss
            else:
                gits += 1
        self.git_at_once = max(self.git_at_once, gits)
        if total > self.peak_total_mb:
            self.peak_total_mb, self.at_peak = total, now
        self.peak_ours_mb = max(self.peak_ours_mb, ours)
        self.peak_pss_mb = max(self.peak_pss_mb, pss)
        self.peak_anon_mb = max(self.peak_anon_mb, anon_total)

    def stop(self) -> dict[str, Any]:
        """{'hwm_sum_mb', 'peak_total_mb', 'by_role': {role: summed VmHWM}, 'processes'}."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        by_role: dict[str, float] = {}
        anon_by_role: dict[str, float] = {}
        counts: dict[str, int] = {}
        for seen in self.procs.values():
            by_role[seen.role] = by_role.get(seen.role, 0.0) + seen.hwm_mb
            anon_by_role[seen.role] = anon_by_role.get(seen.role, 0.0) + seen.anon_mb
            counts[seen.role] = counts.get(seen.role, 0) + 1
        return {
            "hwm_sum_mb": sum(by_role.values()),
            "peak_total_mb": self.peak_total_mb,
            "peak_ours_mb": self.peak_ours_mb,
            "peak_pss_mb": self.peak_pss_mb,
            "peak_anon_mb": self.peak_anon_mb,
            "git_at_once": self.git_at_once,
            "at_peak": self.at_peak,
            "by_role": by_role,
            "anon_by_role": anon_by_role,  # sampled, so a short peak between samples is missed
            "counts": counts,
        }


def _cmdline(proc: psutil.Process) -> str:
    """The command line, '' for a zombie; a process we may not read is named by its name."""
    try:
        return " ".join(proc.cmdline())
    except psutil.ZombieProcess:
        return ""
    except psutil.AccessDenied:
        return proc.name()


def role_of(proc: psutil.Process, server_pid: int, text: str | None = None) -> str:
    """What a process of the tree is, from its command line."""
    if proc.pid == server_pid:
        return "server"
    if text is None:
        try:
            text = " ".join(proc.cmdline())
        except psutil.Error:
            return "?"
    for module, role in (
        ("canon_ls.lsp.helpers.background", "check"),
        ("canon_ls.lsp.helpers.searcher", "search"),
        ("canon_ls.lsp.helpers.fswatch", "watcher"),
        ("canon_ls", "canon child"),
    ):
        if module in text:
            return role
    name = text.split(" ", 1)[0].rsplit("/", 1)[-1] if text else "?"
    return "git" if name == "git" else name


def _pss(pid: int) -> float:
    """The process's proportional set size in MB (0 where smaps_rollup is not to be read)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _status(pid: int) -> tuple[float, float, float]:
    """(VmHWM, VmRSS, RssAnon) in MB."""
    hwm = rss = anon = 0.0
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("RssAnon:"):
                anon = int(line.split()[1]) / 1024
    return hwm, rss, anon


def describe(memory: dict[str, Any]) -> str:
    """One line: the summed peaks, the largest simultaneous total, and each role's peak."""
    roles = ", ".join(
        f"{role} {mb:.0f}" + (f" ({memory['counts'][role]}×)" if memory["counts"][role] > 1 else "")
        for role, mb in sorted(memory["by_role"].items(), key=lambda kv: -kv[1])
    )
    anon = ", ".join(
        f"{role} {mb:.0f}"
        for role, mb in sorted(memory.get("anon_by_role", {}).items(), key=lambda kv: -kv[1])
    )
    at_peak = ", ".join(f"{r} {mb:.0f}" for r, mb in memory.get("at_peak", {}).items())
    return (
        f"{memory['hwm_sum_mb']:.0f} MB summed peaks; {memory['peak_total_mb']:.0f} MB at once "
        f"({memory.get('peak_ours_mb', 0.0):.0f} MB without git; "
        f"proportional {memory.get('peak_pss_mb', 0.0):.0f}, anonymous "
        f"{memory.get('peak_anon_mb', 0.0):.0f} MB at once; "
        f"{memory.get('git_at_once', 0)} git at once) "
        f"at most [{roles}]; anonymous (not mapped files) at most [{anon}]; "
        f"at the peak [{at_peak}]"
    )
