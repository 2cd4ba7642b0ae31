"""`canon init` on hostile layouts (SPEC §12, issue 9 item 5): it writes only real files
inside the directory it configures, never through a symbolic link (any component), never
copies the contents of a file it would replace, and never opens anything but a regular file.

A generator plants, at every path `canon init` writes for each target (directories and files
alike), a symlink to a directory or file outside, a symlink to something inside, a dangling
symlink, and for files a FIFO and a directory. Each layout runs the real `canon init` and
checks: exit 1 with one sentence naming the path, nothing outside changed, the planted thing
untouched, no file of the project holding the outside secret, nothing written at all.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hookrun import canon_command

SECRET = "token = 'SECRET-5d0c'\n"
PLUGIN_FILES = [
    ".claude-plugin/marketplace.json",
    "plugins/canon/.claude-plugin/plugin.json",
    "plugins/canon/hooks/hooks.json",
    "plugins/canon/.mcp.json",
    "plugins/canon/README.md",
    ".agents/plugins/marketplace.json",
    "plugins/canon-codex/.codex-plugin/plugin.json",
    "plugins/canon-codex/hooks/hooks.json",
    "plugins/canon-codex/README.md",
]
WRITTEN = {  # target -> files it writes, relative to the directory it configures
    "claude-code": [".claude/settings.json", ".mcp.json"],
    "codex": [".codex/hooks.json", ".codex/config.toml"],
    "claude-plugin": PLUGIN_FILES,
    "pi": [".pi/extensions/canon/index.ts"],
}
DIR_KINDS = ["link-outside-dir", "link-inside-dir", "link-dangling"]
FILE_KINDS = ["link-outside-file", "link-inside-file", "link-dangling", "fifo", "directory"]


def positions(target: str) -> Iterator[tuple[str, bool]]:
    """Every directory and file on the way to what `target` writes: (path, is_file)."""
    seen: set[str] = set()
    for rel in WRITTEN[target]:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in seen:
                seen.add(parent)
                yield parent, False
        yield rel, True


def layouts() -> Iterator[tuple[str, str, str]]:
    for target in WRITTEN:
        for rel, is_file in positions(target):
            for kind in FILE_KINDS if is_file else DIR_KINDS:
                yield target, rel, kind


def plant(root: Path, rel: str, kind: str, outside: Path) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link-outside-dir":
        path.symlink_to(outside)
    elif kind == "link-outside-file":
        path.symlink_to(outside / "secret.toml")
    elif kind == "link-inside-dir":
        (root / "elsewhere-inside").mkdir(exist_ok=True)
        path.symlink_to(root / "elsewhere-inside")
    elif kind == "link-inside-file":
        (root / "notes.txt").write_text("inside\n")
        path.symlink_to(root / "notes.txt")
    elif kind == "link-dangling":
        path.symlink_to(outside / "does-not-exist" / "x")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()


def state(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under root, without following links: kind and content or link target."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_fifo():
                out[rel] = ("fifo", b"")
            elif path.is_dir():
                out[rel] = ("dir", b"")
            else:
                out[rel] = ("file", path.read_bytes())
    return out


def run_init(target: str, project: Path) -> subprocess.CompletedProcess[str]:
    args = ["init", target] + (["market"] if target == "claude-plugin" else [])
    return subprocess.run(
        [*canon_command(), *args], cwd=project, capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize(
    ("target", "rel", "kind"), list(layouts()), ids=[" ".join(c) for c in layouts()]
)
def test_init_refuses_a_hostile_layout(tmp_path: Path, target: str, rel: str, kind: str) -> None:
    """SPEC §12: nothing written outside, through a link, or over a special file."""
    project, outside = tmp_path / "proj", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.toml").write_text(SECRET)
    (outside / "settings.json").write_text('{"theirs": true}\n')
    root = project / "market" if target == "claude-plugin" else project
    root.mkdir(exist_ok=True)
    plant(root, rel, kind, outside)
    before_inside, before_outside = state(project), state(outside)
    done = run_init(target, project)
    assert state(outside) == before_outside, "something outside the project changed"
    assert state(project) == before_inside, "something was written despite the refusal"
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and rel in lines[0], done.stdout
    assert "Traceback" not in done.stderr


def test_claude_directory_linked_elsewhere_is_refused(tmp_path: Path) -> None:
    """The issue's first reproduction: `.claude -> elsewhere`."""
    project, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / ".claude").symlink_to(elsewhere)
    done = run_init("claude-code", project)
    assert done.returncode == 1
    assert ".claude is a symbolic link" in done.stdout
    assert list(elsewhere.iterdir()) == []
    assert not (project / ".mcp.json").exists()


def test_codex_config_linked_to_a_secret_is_neither_replaced_nor_copied(tmp_path: Path) -> None:
    """The issue's second reproduction: `.codex/config.toml -> outside file` was replaced by a
    regular file holding the outside file's contents (a secret copied into the repository)."""
    project, outside = tmp_path / "proj", tmp_path / "outside"
    (project / ".codex").mkdir(parents=True)
    outside.mkdir()
    (outside / "config.toml").write_text(SECRET)
    (project / ".codex" / "config.toml").symlink_to(outside / "config.toml")
    done = run_init("codex", project)
    assert done.returncode == 1
    assert (project / ".codex" / "config.toml").is_symlink()
    assert (outside / "config.toml").read_text() == SECRET
    copies = [p for p in project.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any("SECRET" in p.read_text() for p in copies)


def test_a_real_layout_still_works_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """The refusal is only for links and special files: real directories (present or not)
    are written as before, and no temp file is left beside what was written."""
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('model = "o3"\n')
    for target in WRITTEN:
        done = run_init(target, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / ".codex" / "config.toml").read_text().startswith('model = "o3"\n')
    assert not [p for p in tmp_path.rglob("*.tmp")]
