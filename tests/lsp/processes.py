"""Real processes read through /proc (Linux): what a server started, and whether it lives."""

from __future__ import annotations

from pathlib import Path


def stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(root: int) -> dict[int, str]:
    """Every living process below `root`, by pid, with its start time (so a pid reused later
    is not taken for the same process)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat(int(entry.name))) is not None:
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            if (fields := stat(child)) is not None and fields[0] != "Z":
                found[child] = fields[19]  # field 22: start time
                todo.append(child)
    return found


def alive(pid: int, started: str) -> bool:
    fields = stat(pid)
    return fields is not None and fields[0] != "Z" and fields[19] == started


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
