"""SPEC §13 `canon settings` through the real CLI: effective values and sources, `set` /
`unset` in the user's settings.json (a temporary XDG_CONFIG_HOME) and, with --project, in the
project's canon.toml; `canon check` reports bad option files as errors."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from tests.agent.test_cli import Run, canon, one_sentence

KEYS = ["root", "mounts", "surface", "resurface", "retrieval", "standout"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".canon" / "articles").mkdir(parents=True)
    return project


@pytest.fixture
def xdg(tmp_path: Path) -> Path:
    return tmp_path / "xdg"


def run(project: Path, xdg: Path, *args: str) -> Run:
    return canon(*args, cwd=project, env={"XDG_CONFIG_HOME": str(xdg)})


def rows(out: str) -> dict[str, tuple[str, str]]:
    """`KEY = VALUE  SOURCE` lines -> {key: (value, source)}, read as the Pi extension reads
    them: the key is the first word, the value runs from `=` to the first two spaces."""
    found = {}
    for line in out.splitlines():
        key = line.split(" ")[0]
        value, source = re.split(r"\s{2,}", line.split("=", 1)[1].strip(), maxsplit=1)
        found[key] = (value, source)
    return found


def test_spec_13_settings_shows_every_key_with_its_source(project: Path, xdg: Path) -> None:
    (project / "canon.toml").write_text('retrieval = "lexical"\nstandout = 2\n', encoding="utf-8")
    (xdg / "canon").mkdir(parents=True)
    (xdg / "canon" / "settings.json").write_text('{"standout": 1.6}', encoding="utf-8")
    (project / "mem").mkdir()
    result = run(project, xdg, "settings", "--root", "mem")
    assert result.code == 0 and result.err == ""
    assert len(result.out.splitlines()) == 6
    shown = rows(result.out)
    assert list(shown) == KEYS
    assert shown["root"] == ('"mem"', "command-line flag")
    assert shown["mounts"] == ("[]", "default")
    assert shown["surface"] == ("true", "default")
    assert shown["retrieval"][0] == '"lexical"' and "canon.toml" in shown["retrieval"][1]
    assert shown["standout"][0] == "1.6" and "settings.json" in shown["standout"][1]


def test_spec_13_settings_json_format(project: Path, xdg: Path) -> None:
    (project / "canon.toml").write_text("surface = false\nbogus = 1\n", encoding="utf-8")
    result = run(project, xdg, "settings", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert list(data["options"]) == KEYS
    assert data["options"]["surface"] == {
        "value": False,
        "source": "project",
        "file": str(project / "canon.toml"),
    }
    assert data["options"]["mounts"] == {"value": [], "source": "default", "file": None}
    assert data["files"]["user"] == str(xdg / "canon" / "settings.json")
    [problem] = data["problems"]
    assert problem["key"] == "bogus" and problem["line"] == 2
    assert problem["file"] == str(project / "canon.toml")


def test_spec_13_file_problems_go_to_stderr_stdout_stays_six_lines(
    project: Path, xdg: Path
) -> None:
    (project / "canon.toml").write_text('retrieval = "fuzzy"\n', encoding="utf-8")
    result = run(project, xdg, "settings")
    assert result.code == 0
    assert rows(result.out)["retrieval"] == ('"none"', "default")  # the default applies
    [warning] = result.err.splitlines()
    assert "canon.toml" in warning and "'retrieval'" in warning and '"lexical"' in warning


def test_spec_13_set_writes_the_user_file(project: Path, xdg: Path) -> None:
    result = run(project, xdg, "settings", "set", "standout", "1.6")
    assert result.code == 0, result.err
    assert "standout = 1.6" in result.out and "settings.json" in result.out
    user = xdg / "canon" / "settings.json"
    assert json.loads(user.read_text(encoding="utf-8")) == {"standout": 1.6}
    assert run(project, xdg, "settings", "set", "surface", "off").code == 0
    assert run(project, xdg, "settings", "set", "retrieval", '"lexical"').code == 0
    assert json.loads(user.read_text(encoding="utf-8")) == {
        "standout": 1.6,
        "surface": False,
        "retrieval": "lexical",
    }
    shown = rows(run(project, xdg, "settings").out)
    assert shown["surface"] == ("false", f"user settings {user}")
    assert not (project / "canon.toml").exists()


def test_spec_13_set_keeps_unknown_keys_of_the_user_file(project: Path, xdg: Path) -> None:
    user = xdg / "canon" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text('{"theirs": 1}\n', encoding="utf-8")
    assert run(project, xdg, "settings", "set", "resurface", "false").code == 0
    assert json.loads(user.read_text(encoding="utf-8")) == {"theirs": 1, "resurface": False}


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("standout", "0.5", ["standout", "at least 1"]),
        ("standout", "high", ["standout", "at least 1"]),
        ("standout", "Infinity", ["standout", "at least 1"]),
        ("retrieval", "fuzzy", ["retrieval", '"lexical"']),
        ("surface", "maybe", ["surface", "true or false"]),
        ("colour", "red", ["colour", "standout"]),
    ],
)
def test_spec_13_bad_value_is_one_sentence_exit_2_nothing_written(
    project: Path, xdg: Path, key: str, value: str, words: list[str]
) -> None:
    sentence = one_sentence(run(project, xdg, "settings", "set", key, value))
    assert all(w in sentence for w in words), sentence
    if key != "colour":
        assert "settings.json" in sentence
    assert not (xdg / "canon" / "settings.json").exists()


def test_spec_13_topology_is_refused_in_the_user_file(project: Path, xdg: Path) -> None:
    sentence = one_sentence(run(project, xdg, "settings", "set", "root", "memory"))
    assert "--project root" in sentence and "canon.toml" in sentence
    assert not (xdg / "canon" / "settings.json").exists()


def test_spec_13_malformed_user_file_is_never_overwritten(project: Path, xdg: Path) -> None:
    user = xdg / "canon" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text('{"standout": ', encoding="utf-8")
    sentence = one_sentence(run(project, xdg, "settings", "set", "standout", "2"))
    assert str(user) in sentence and "not valid JSON" in sentence
    assert user.read_text(encoding="utf-8") == '{"standout": '


TEAM_TOML = """\
# shared by the team
surface = false  # quiet in CI
mounts = [
  "../lake",
]

[tool.other]
x = 1
"""


def test_spec_13_set_project_writes_canon_toml_keeping_the_rest(project: Path, xdg: Path) -> None:
    (project.parent / "lake").mkdir()
    toml = project / "canon.toml"
    toml.write_text(TEAM_TOML, encoding="utf-8")
    assert run(project, xdg, "settings", "set", "--project", "surface", "true").code == 0
    result = run(project, xdg, "settings", "set", "--project", "retrieval", "lexical")
    assert result.code == 0, result.err
    assert toml.read_text(encoding="utf-8") == TEAM_TOML.replace(
        "surface = false  # quiet in CI", "surface = true  # quiet in CI"
    ).replace('  "../lake",\n]\n', '  "../lake",\n]\nretrieval = "lexical"\n')
    assert not (xdg / "canon" / "settings.json").exists()
    # a value over several lines is not rewritten: nothing is written, the sentence says so
    before = toml.read_text(encoding="utf-8")
    sentence = one_sentence(run(project, xdg, "settings", "set", "--project", "mounts", "../x"))
    assert "not a directory" in sentence
    sentence = one_sentence(
        run(project, xdg, "settings", "set", "--project", "mounts", "../lake", ".canon")
    )
    assert "by hand" in sentence and "mounts" in sentence
    assert toml.read_text(encoding="utf-8") == before


def test_spec_13_set_project_topology_moves_the_store(project: Path, xdg: Path) -> None:
    result = run(project, xdg, "settings", "set", "--project", "root", "memory")
    assert result.code == 0, result.err
    assert (project / "canon.toml").read_text(encoding="utf-8") == 'root = "memory"\n'
    wrote = run(project, xdg, "write", "src/a.py", "--capsule", "A.")
    assert wrote.code == 0, wrote.err
    assert (project / "memory" / "articles" / "src" / "a.md").is_file()


def test_spec_13_set_project_standout_below_one_exit_2(project: Path, xdg: Path) -> None:
    sentence = one_sentence(run(project, xdg, "settings", "set", "--project", "standout", "0.9"))
    assert "standout" in sentence and "canon.toml" in sentence
    assert not (project / "canon.toml").exists()


def test_spec_13_set_says_when_a_higher_layer_wins_and_unset(project: Path, xdg: Path) -> None:
    assert run(project, xdg, "settings", "set", "resurface", "true").code == 0
    result = run(project, xdg, "settings", "set", "--project", "resurface", "false")
    assert result.code == 0
    assert "; your settings.json sets true, which wins." in result.out
    result = run(project, xdg, "settings", "unset", "resurface")
    assert result.code == 0 and "now resurface = false (the project's canon.toml)" in result.out
    assert json.loads((xdg / "canon" / "settings.json").read_text(encoding="utf-8")) == {}
    assert run(project, xdg, "settings", "unset", "--project", "resurface").code == 0
    assert (project / "canon.toml").read_text(encoding="utf-8") == ""


def test_pi_settings_round_trip(project: Path, xdg: Path) -> None:
    """The Pi extension's /canon-settings lists `canon settings`, takes the key and the
    current value of the chosen line as shown, and runs `canon settings set KEY VALUE`."""
    for key, (value, _source) in rows(run(project, xdg, "settings").out).items():
        if key in ("root", "mounts"):
            continue
        result = run(project, xdg, "settings", "set", key, value)
        assert result.code == 0, (key, value, result.err)
    extension = Path("canon_ls/agent/pi_extension/index.ts").read_text(encoding="utf-8")
    assert 'run(["settings", ...words]' in extension
    assert 'settings(["set", key, value.trim()])' in extension


# ---------------------------------------------------------------- canon check


def test_spec_13_check_reports_bad_option_files_as_errors(project: Path, xdg: Path) -> None:
    (project / "canon.toml").write_text("surface = true\nstandout = 0.5\n", encoding="utf-8")
    (xdg / "canon").mkdir(parents=True)
    (xdg / "canon" / "settings.json").write_text('{\n  "root": "x"\n}\n', encoding="utf-8")
    result = run(project, xdg, "check")
    assert result.code == 1, result.out
    lines = result.out.splitlines()
    assert lines[0].startswith("canon.toml:2:1: error: ") and "'standout'" in lines[0]
    assert lines[0].endswith("[bad-option]") and "at least 1" in lines[0]
    user = str(xdg / "canon" / "settings.json")
    assert lines[1].startswith(f"{user}:2:1: error: ") and "'root'" in lines[1]
    assert lines[-1] == "canon check: 2 errors in 0 articles."
    data = json.loads(run(project, xdg, "check", "--format", "json").out)
    assert [(f["file"], f["line"], f["code"], f["severity"]) for f in data] == [
        ("canon.toml", 1, "bad-option", "error"),
        (user, 1, "bad-option", "error"),
    ]
    # the defaults apply meanwhile
    assert rows(run(project, xdg, "settings").out)["standout"] == ("1.4", "default")


def test_spec_13_check_reports_option_files_without_a_store(tmp_path: Path, xdg: Path) -> None:
    project = tmp_path / "bare"
    project.mkdir()
    (project / "canon.toml").write_text("surface = [\n", encoding="utf-8")
    result = run(project, xdg, "check")
    assert result.code == 1
    assert result.out.startswith("canon.toml:") and "not valid TOML" in result.out
    (project / "canon.toml").write_text("surface = true\n", encoding="utf-8")
    assert run(project, xdg, "check").code == 0


def test_spec_13_infinite_standout_in_canon_toml_is_a_problem(project: Path, xdg: Path) -> None:
    (project / "canon.toml").write_text("standout = inf\n", encoding="utf-8")
    result = run(project, xdg, "settings", "--format", "json")
    data = json.loads(result.out)  # valid JSON: no Infinity
    assert data["options"]["standout"]["value"] == 1.4
    assert [p["key"] for p in data["problems"]] == ["standout"]


def test_the_format_doc_example_is_what_canon_settings_prints(tmp_path: Path) -> None:
    """docs/FORMAT.md shows `canon settings` for ~/src/shop with surface in canon.toml and
    retrieval and standout in the user's settings.json: the real output, character for
    character (HOME is a temporary directory, XDG_CONFIG_HOME unset)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "FORMAT.md").read_text("utf-8")
    section = doc[doc.index("### canon settings") :]
    example = re.search(r"```\n(root = .*?)```", section, re.DOTALL)
    assert example is not None
    home = tmp_path / "home"
    shop = home / "src" / "shop"
    (shop / ".canon" / "articles").mkdir(parents=True)
    (shop / "canon.toml").write_text("surface = true\n", encoding="utf-8")
    user = home / ".config" / "canon" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text('{"retrieval": "lexical", "standout": 1.6}', encoding="utf-8")
    result = canon("settings", cwd=shop, env={"HOME": str(home), "XDG_CONFIG_HOME": ""})
    assert result.code == 0, result.err
    assert result.out == example.group(1)


def test_spec_13_behaviour_flags_are_the_explicit_layer(project: Path, xdg: Path) -> None:
    (project / "canon.toml").write_text('retrieval = "none"\nstandout = 2\n', encoding="utf-8")
    result = run(project, xdg, "settings", "--retrieval", "lexical", "--surface", "off")
    assert result.code == 0, result.err
    shown = rows(result.out)
    assert shown["retrieval"] == ('"lexical"', "command-line flag")
    assert shown["surface"] == ("false", "command-line flag")
    assert shown["standout"][0] == "2.0" and "canon.toml" in shown["standout"][1]
    sentence = one_sentence(run(project, xdg, "settings", "--standout", "0.5"))
    assert "standout" in sentence and "at least 1" in sentence
    sentence = one_sentence(run(project, xdg, "mcp", "--retrieval", "fuzzy"))
    assert "retrieval" in sentence


@pytest.mark.parametrize("in_project", [False, True])
@pytest.mark.parametrize(
    "change", [["set", "standout", "2"], ["unset", "standout"]], ids=["set", "unset"]
)
def test_spec_12_a_fifo_option_file_is_refused_not_waited_on(
    project: Path, xdg: Path, in_project: bool, change: list[str]
) -> None:
    """Issue 24 item 10: settings.json or canon.toml as a named pipe: `set` and `unset` read
    through the bounded regular-file reader, so they refuse in one sentence instead of
    blocking forever on the open; the pipe stays."""
    fifo = project / "canon.toml" if in_project else xdg / "canon" / "settings.json"
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    flag = ["--project"] if in_project else []
    sentence = one_sentence(run(project, xdg, "settings", change[0], *flag, *change[1:]))
    assert str(fifo) in sentence and "not a regular file" in sentence
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_issue_24_set_names_what_keeps_a_project_value_from_applying(
    project: Path, xdg: Path, tmp_path: Path
) -> None:
    """Never "your the default sets …, which wins": mounts written to canon.toml wait for
    `canon trust`, and the sentence says so."""
    (tmp_path / "lake").mkdir()
    result = run(project, xdg, "settings", "set", "--project", "mounts", "../lake")
    assert result.code == 0, result.err
    assert result.out.strip().endswith("; it applies once you run `canon trust` here.")
    assert "your the" not in result.out


@pytest.mark.parametrize("value", ["-inf", "-1e3", "-0.5", "nan"])
def test_issue_24_a_negative_or_odd_number_is_a_value_not_a_flag(
    project: Path, xdg: Path, value: str
) -> None:
    sentence = one_sentence(run(project, xdg, "settings", "set", "standout", value))
    assert "must be a number of at least 1" in sentence, sentence
