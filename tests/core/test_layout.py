"""SPEC §2, §8, §13: where the store lives and how the six options resolve
(core/storage/layout.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from canon_ls.core.storage import layout, optionfiles
from canon_ls.core.storage.layout import OptionError, find_project, resolve


def _env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


def _user(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "config" / "canon" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def test_spec_13_defaults(tmp_path: Path) -> None:
    options = resolve(tmp_path, env=_env(tmp_path))
    assert options.values == {
        "root": ".canon",
        "mounts": (),
        "surface": True,
        "resurface": True,
        "retrieval": "none",
        "standout": 1.4,
    }
    assert set(options.sources.values()) == {"default"}
    assert options.problems == []
    assert options.root == tmp_path / ".canon" and not options.lane


def test_spec_13_order_flags_over_user_over_project(tmp_path: Path) -> None:
    """Explicit > user settings.json > project canon.toml > defaults, key by key."""
    toml = tmp_path / "canon.toml"
    toml.write_text('root = "memory"\nretrieval = "lexical"\nstandout = 2\nsurface = false\n')
    user = _user(tmp_path, {"standout": 1.2, "resurface": False})
    options = resolve(tmp_path, {"surface": True}, env=_env(tmp_path))
    assert options.values["root"] == "memory" and options.root == tmp_path / "memory"
    assert options.sources["root"] == str(toml)
    assert options["retrieval"] == "lexical" and options.sources["retrieval"] == str(toml)
    assert options["standout"] == 1.2 and options.sources["standout"] == str(user)
    assert options["resurface"] is False and options.sources["resurface"] == str(user)
    assert options["surface"] is True and options.sources["surface"] == "flag"
    assert options.lane and options.problems == []


@pytest.mark.parametrize(
    ("text", "key", "fix"),
    [
        ("standout = 0.5\n", "standout", "at least 1"),
        ('retrieval = "semantic"\n', "retrieval", '"none" or "lexical"'),
        ('surface = "no"\n', "surface", "true or false"),
        ("colour = 1\n", "colour", "remove it"),
        ('mounts = ["nowhere"]\n', "mounts", "not a directory"),
    ],
)
def test_spec_13_bad_project_value_is_one_sentence_and_the_default_applies(
    tmp_path: Path, text: str, key: str, fix: str
) -> None:
    (tmp_path / "canon.toml").write_text(text + 'root = "kept"\n')
    options = resolve(tmp_path, env=_env(tmp_path))
    [problem] = options.problems
    assert str(tmp_path / "canon.toml") in problem and repr(key) in problem and fix in problem
    assert problem.count(". ") == 0 and problem.endswith(".")
    if key in layout.DEFAULTS:
        assert options[key] == layout.DEFAULTS[key] and options.sources[key] == "default"
    assert options["root"] == "kept"  # the good keys of the same file still apply


def test_spec_13_user_file_holds_behaviour_keys_only(tmp_path: Path) -> None:
    user = _user(tmp_path, {"root": "elsewhere", "mounts": [], "retrieval": "lexical"})
    options = resolve(tmp_path, env=_env(tmp_path))
    assert options["root"] == ".canon" and options["retrieval"] == "lexical"
    assert len(options.problems) == 2
    assert all(str(user) in p and "canon.toml" in p for p in options.problems)


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("canon.toml", "retrieval = \n", "TOML"),
        ("canon.toml", b"\xff\xfe", "TOML"),
        ("settings.json", "{not json", "JSON"),
        ("settings.json", "[1, 2]", "one object"),
    ],
)
def test_spec_13_malformed_file_is_one_sentence(
    tmp_path: Path, name: str, content: str | bytes, kind: str
) -> None:
    path = tmp_path / name if name == "canon.toml" else _user(tmp_path, "")
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    options = resolve(tmp_path, env=_env(tmp_path))
    [problem] = options.problems
    assert str(path) in problem and kind in problem
    assert options.values == layout.DEFAULTS


def test_spec_13_explicit_options_are_checked_strictly(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="standout"):
        resolve(tmp_path, {"standout": 0.9}, env=_env(tmp_path))
    with pytest.raises(OptionError, match="colour"):
        resolve(tmp_path, {"colour": "red"}, env=_env(tmp_path))


def test_spec_8_mounts_relative_to_the_project(tmp_path: Path) -> None:
    (tmp_path / "lake").mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    (project / "canon.toml").write_text('mounts = ["../lake"]\n')
    optionfiles.trust(project, _env(tmp_path))
    options = resolve(project, env=_env(tmp_path))
    assert options.mounts == {"lake": tmp_path / "lake"}


@pytest.mark.parametrize(
    "text",
    [
        'root = "{other}/.canon"\n',
        'root = "~"\n',
        'root = "../other/.canon"\n',
        'mounts = ["../other"]\n',
    ],
)
def test_issue_24_canon_toml_leading_outside_waits_for_trust(tmp_path: Path, text: str) -> None:
    """A cloned repository's canon.toml pointing the store at another project (or home), or
    mounting anything, is ignored with one untrusted-option problem until `canon trust`
    records this file's hash; any later edit of the file needs trusting again."""
    other, project = tmp_path / "other", tmp_path / "proj"
    other.mkdir()
    project.mkdir()
    toml = project / "canon.toml"
    toml.write_text(text.replace("{other}", str(other)))
    env = {**_env(tmp_path), "HOME": str(tmp_path / "home")}
    options = resolve(project, env=env)
    assert options["root"] == ".canon" and options["mounts"] == ()
    assert [(p.code, p.file) for p in options.issues] == [(layout.UNTRUSTED_OPTION, toml)]
    assert "canon trust" in options.problems[0]
    optionfiles.trust(project, env)
    trusted = resolve(project, env=env)
    assert trusted.issues == [] and trusted.sources["root" if "root" in text else "mounts"] == str(
        toml
    )
    toml.write_text(toml.read_text() + "# edited\n")
    assert [p.code for p in resolve(project, env=env).issues] == [layout.UNTRUSTED_OPTION]
    assert optionfiles.revoke(project, env) and not optionfiles.revoke(project, env)


@pytest.mark.parametrize("root", ["docs/.canon", "memory", ".canon"])
def test_issue_24_root_inside_the_project_needs_no_trust(tmp_path: Path, root: str) -> None:
    (tmp_path / "canon.toml").write_text(f'root = "{root}"\n')
    options = resolve(tmp_path, env=_env(tmp_path))
    assert options.issues == [] and options["root"] == root


def test_issue_24_explicit_root_and_a_vouching_client_need_no_record(tmp_path: Path) -> None:
    (tmp_path / "canon.toml").write_text('root = "/elsewhere/.canon"\n')
    assert resolve(tmp_path, {"root": "mine"}, env=_env(tmp_path)).issues == []
    vouched = resolve(tmp_path, env=_env(tmp_path), trust=True)
    assert vouched.issues == [] and vouched["root"] == "/elsewhere/.canon"


def test_spec_2_find_project_by_store_or_project_file(tmp_path: Path) -> None:
    """A project whose store moved with `root` is found by its canon.toml."""
    (tmp_path / "a/src").mkdir(parents=True)
    (tmp_path / "a/canon.toml").write_text('root = "memory"\n')
    assert find_project(tmp_path / "a/src") == tmp_path / "a"
    (tmp_path / "a/src/.canon").mkdir()
    assert find_project(tmp_path / "a/src") == tmp_path / "a/src"


def test_parse_text_for_command_lines() -> None:
    assert layout.parse_text("surface", "off") is False
    assert layout.parse_text("standout", "1.5") == 1.5
    assert layout.parse_text("standout", "x") == "x"  # left for check() to refuse
    assert layout.parse_text("retrieval", "lexical") == "lexical"


def test_layout_is_cheap_to_import() -> None:
    """The hook process of every tool call imports it: standard library only, no tomllib
    until a canon.toml exists."""
    probe = (
        "import sys; import canon_ls.core.storage.layout as l; "
        "print(sorted(m for m in sys.modules if m.startswith(('canon_ls', 'yaml', 'tomllib'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    want = ["canon_ls", "canon_ls.core", "canon_ls.core.storage", "canon_ls.core.storage.layout"]
    assert out.stdout.strip() == str(want)


def test_spec_12_canon_toml_leading_outside_is_not_read(tmp_path: Path) -> None:
    """A committed symlink must not pull options (or their key names) from outside."""
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('secret_key_name = 1\nroot = "/etc"\n')
    project = tmp_path / "proj"
    project.mkdir()
    (project / "canon.toml").symlink_to(outside)
    options = resolve(project, env=_env(tmp_path))
    [problem] = options.problems
    assert "outside the project" in problem and "secret_key_name" not in problem
    assert options.values == layout.DEFAULTS


def test_spec_12_option_files_that_are_not_regular_never_block(tmp_path: Path) -> None:
    """A FIFO at canon.toml or settings.json is one sentence, never a hang."""
    import os

    os.mkfifo(tmp_path / "canon.toml")
    user = _user(tmp_path, "")
    user.unlink()
    os.mkfifo(user)
    options = resolve(tmp_path, env=_env(tmp_path))
    assert len(options.problems) == 2
    assert all("not a regular file" in p for p in options.problems)
    assert options.values == layout.DEFAULTS


def test_spec_12_huge_option_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "canon.toml").write_text("# pad\n" * 300_000)
    [problem] = resolve(tmp_path, env=_env(tmp_path)).problems
    assert "larger than" in problem


def test_issue_24_a_root_or_mount_past_the_path_limit_is_a_bad_value(tmp_path: Path) -> None:
    """A 5,000-character `root` (or mount) failed every command with "unexpected OSError";
    it is a bad value naming the file, the key and the fix, and the default applies."""
    toml = tmp_path / "canon.toml"
    toml.write_text(f'root = "{"a" * 5000}"\nmounts = ["{"b/" * 2100}"]\n')
    options = resolve(tmp_path, env=_env(tmp_path))
    assert options["root"] == ".canon" and options["mounts"] == ()
    assert [p.key for p in options.issues] == ["root", "mounts"]
    assert all(str(toml) in p and "longer than" in p and "fix" in p for p in options.problems)
    status = subprocess.run(
        [sys.executable, "-m", "canon_ls.agent.cli", "status"],
        cwd=tmp_path, env={**os.environ, **_env(tmp_path)}, capture_output=True, text=True,
    )  # fmt: skip
    assert status.returncode == 0 and "OSError" not in status.stderr, status.stderr
    with pytest.raises(OptionError, match="longer than"):
        resolve(tmp_path, {"root": "x" * 300}, env=_env(tmp_path))
