"""SPEC §12: trust covers what a trusted canon.toml points at, not only its bytes. A mount
(or a root) trusted as a directory of the project and later replaced by a link to another
directory (a pull can do it; canon.toml is unchanged) is refused as if untrusted: its articles
are not listed and nothing is written through it, until `canon trust` is run again."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.agent.test_cli import canon


def test_a_trusted_mount_swapped_for_a_link_is_trusted_no_more(tmp_path: Path) -> None:
    project, other = tmp_path / "proj", tmp_path / "other"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    lib = project / "vendor/lib"
    lib.mkdir(parents=True)
    other.mkdir()
    assert canon("write", "api", "--capsule", "Vendored.", cwd=lib, env=env).code == 0
    assert canon("write", "keys", "--capsule", "PRIVATE.", cwd=other, env=env).code == 0
    (project / "canon.toml").write_text('mounts = ["vendor/lib"]\n', encoding="utf-8")
    assert canon("trust", cwd=project, env=env).code == 0
    shown = canon("map", cwd=project, env=env)
    assert "Vendored." in shown.out and shown.err == ""
    shutil.rmtree(lib)
    lib.symlink_to(other)  # the pull: same canon.toml, the mount now leads elsewhere
    shown = canon("map", cwd=project, env=env)
    assert "PRIVATE" not in shown.out
    (line,) = shown.err.splitlines()
    assert "mounts" in line and "canon trust" in line
    canon("write", "lib:newone", "--capsule", "Through the link.", cwd=project, env=env)
    assert not (other / ".canon/articles/newone.md").exists()
    assert canon("trust", cwd=project, env=env).code == 0  # trusting again, knowingly
    assert "PRIVATE" in canon("map", cwd=project, env=env).out


def test_a_trusted_root_swapped_for_a_link_is_trusted_no_more(tmp_path: Path) -> None:
    """The same rule for `root`: one trust digest covers both."""
    project, other = tmp_path / "proj", tmp_path / "other"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    project.mkdir()
    other.mkdir()
    assert canon("write", "keys", "--capsule", "PRIVATE.", cwd=other, env=env).code == 0
    shared = tmp_path / "shared"
    shared.mkdir()
    assert canon("write", "team", "--capsule", "Team.", cwd=shared, env=env).code == 0
    (project / "canon.toml").write_text(f'root = "{shared / ".canon"}"\n', encoding="utf-8")
    assert canon("trust", cwd=project, env=env).code == 0
    assert "Team." in canon("map", cwd=project, env=env).out
    shutil.rmtree(shared / ".canon")
    (shared / ".canon").symlink_to(other / ".canon")
    shown = canon("map", cwd=project, env=env)
    assert "PRIVATE" not in shown.out and "canon trust" in shown.err
