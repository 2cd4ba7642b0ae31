"""A `git` put first on PATH that records, at its start, how many of its kind run (itself
included) and which process started it, holds on a moment so that overlaps show, then runs
the real git. Shared by the tests that bound how many git processes run at once."""

from __future__ import annotations

import shutil
from pathlib import Path


def counting_git(base: Path, hold: float = 0.3) -> tuple[Path, Path]:
    """(the folder to put first on PATH, the log: one `count parent-pid` line per git)."""
    real = shutil.which("git")
    assert real is not None
    bindir, live, log = base / "bin", base / "live", base / "counts"
    bindir.mkdir()
    live.mkdir()
    script = bindir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'touch "{live}/$$"\n'
        f'echo "$(ls "{live}" | wc -l) $PPID" >> "{log}"\n'
        f"sleep {hold}\n"
        f'"{real}" "$@"\n'
        "code=$?\n"
        f'rm -f "{live}/$$"\n'
        "exit $code\n"
    )
    script.chmod(0o755)
    return bindir, log
