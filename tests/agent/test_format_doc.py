"""docs/FORMAT.md says what the code does: its examples and tables, checked against core and
the real `canon` CLI (SPEC §2 layout, §3 addresses, §5 articles, §6 journal, §7 schema.json,
§9 assets, §11.1 check and exit codes, §13 options)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from stale_repo import build
from test_cli import TODAY, canon

from canon_ls.core import reach
from canon_ls.core.checking import schema
from canon_ls.core.checking.assets import DEFAULT_IGNORES
from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage import article, layout, optionfiles
from canon_ls.core.storage.address import normalise
from canon_ls.core.storage.yaml_subset import needs_quotes

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "FORMAT.md").read_text(encoding="utf-8")
CORE = ROOT / "canon_ls" / "core" / "checking"


def section(title: str) -> str:
    """The text under `## title`, up to the next `## ` heading."""
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end > 0 else len(DOC)]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.DOTALL)


def table(text: str, after: str = "") -> list[list[str]]:
    """Rows of the first Markdown table at or after `after`, cells stripped, header dropped."""
    start = text.index(after) if after else 0
    start = text.rfind("\n", 0, start) + 1  # the line holding `after`
    lines = text[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows[2:]


def code(cell: str) -> str:
    match = re.fullmatch(r"`(.*)`", cell)
    assert match, cell
    return match.group(1)


# -- addresses ----------------------------------------------------------------------------


def test_address_tables_are_what_normalise_says() -> None:
    text = section("Addresses and resolution")
    plain = table(text)
    assert len(plain) == 11
    for path, address in plain:
        assert normalise(code(path)) == code(address), path
    project, mounts = Path("/home/me/shop"), {"lake": Path("/data/lake")}
    placed = table(text, "With the project at")
    assert len(placed) == 4
    for path, address in placed:
        assert normalise(code(path), project, mounts) == code(address), path
    assert normalise("文档/设计.md") == "文档/设计" and "`文档/设计.md` → `文档/设计`" in text


# -- articles -----------------------------------------------------------------------------


def test_the_article_example_parses_as_described() -> None:
    (example,) = blocks(section("Articles"), "markdown")
    parsed = article.parse(example.encode(), "src/core/config")
    assert parsed.problems == ()
    assert parsed.capsule == "Loads layered config; env beats file; secrets never land here."
    assert (parsed.updated, parsed.reviewed, parsed.stale_after) == (
        "2026-08-11",
        "2026-09-02",
        "2027-01-01",
    )
    assert parsed.tags == ("config", "startup") and parsed.title == "src/core/config"
    assert [link.target for link in wikilinks(parsed.body)] == ["src/core/secrets"]


def test_the_front_matter_table_names_every_key_the_tool_reads() -> None:
    keys = {code(row[0]) for row in table(section("Articles"), "### Front matter keys")}
    assert keys == {"capsule", "updated", "scope", "reviewed", "stale_after", "tags"} | {
        "applies",
        "always",
    }
    assert set(article.OWNED) <= keys
    # `applies` and `always` as the table says: globs (one string too), `!` leaves out
    rule = reach.reach_of({"applies": "**/*.tsx", "always": "false"})
    assert rule is not None and reach.applies_to(rule, "a/b.tsx")
    rule = reach.reach_of({"applies": ["src", "!src/gen/**"]})
    assert rule is not None and reach.applies_to(rule, "src/x.py")
    assert not reach.applies_to(rule, "src/gen/y.py")
    assert article.tags_of("#a, b c") == ("a", "b", "c")  # "commas or spaces; '#' dropped"
    for value in ("yes", "2026-01-01", "Note: this"):  # "written in quotes"
        assert needs_quotes(value), value
        assert f"`{value}`" in section("Articles")


# -- schema.json --------------------------------------------------------------------------


def test_the_default_schema_is_the_one_written() -> None:
    default, strict = blocks(section("schema.json"), "json")
    assert default == schema.default_text()
    assert json.loads(default) == schema.DEFAULT


def test_the_strict_example_uses_every_key_and_parses() -> None:
    text = section("schema.json")
    _, strict = blocks(text, "json")
    parsed = schema.parse(strict)
    assert parsed.error == ""
    assert parsed.rules["capsule"] == schema.Rule(
        True, 20, 400, "One line: what it is and what must stay true."
    )
    assert parsed.rules["title"].required and parsed.rules["body"].max_chars == 6000
    assert parsed.relations == schema.Relations(
        refs_required=False,
        refs_min_count=1,
        refs_hint="Link the parent article.",
        orphan_warn=True,
        children_listed=True,
    )
    rule_keys = {code(row[0]) for row in table(text, "Rules per field")}
    assert rule_keys == {"required", "min_chars", "max_chars", "hint"}
    assert set(schema.Rule.__dataclass_fields__) == rule_keys
    relation_keys = {code(row[0]) for row in table(text, "Relations between articles")}
    assert relation_keys == {
        "refs.required",
        "refs.min_count",
        "refs.hint",
        "orphan.warn",
        "children.listed",
    }
    assert len(schema.Relations.__dataclass_fields__) == len(relation_keys)
    assert set(schema.FIELDS) == {"capsule", "title", "body"}
    for name in schema.FIELDS:
        assert f"`{name}`" in text


def test_a_required_rule_refuses_with_its_hint_exit_1(tmp_path: Path) -> None:
    _, strict = blocks(section("schema.json"), "json")
    assert canon("init", cwd=tmp_path).code == 0
    (tmp_path / ".canon" / "schema.json").write_text(strict, encoding="utf-8")
    run = canon("write", "src/app.py", "--body", "# src/app\n\nText.", cwd=tmp_path)
    assert run.code == 1
    assert "One line: what it is and what must stay true." in run.out
    assert not (tmp_path / ".canon/articles/src/app.md").exists()


# -- the journal --------------------------------------------------------------------------


def test_the_journal_example_is_what_canon_journal_writes(tmp_path: Path) -> None:
    text = section("The journal")
    (command,) = blocks(text, "sh")
    (entry,) = blocks(text, "markdown")
    name = re.search(r"writes `\.canon/journal/([^`]+)`", text).group(1)  # type: ignore[union-attr]
    argv = shlex.split(command.strip())
    assert argv[0] == "canon"
    run = canon(*argv[1:], cwd=tmp_path)
    assert run.code == 0, run.err
    assert TODAY == "2026-11-29"
    written = (tmp_path / ".canon" / "journal" / name).read_text("utf-8")
    instant = re.compile(r"^logged: \S+$", re.M)
    assert instant.sub("logged: <instant>", written) == instant.sub("logged: <instant>", entry)
    assert re.search(r"^logged: 2026-11-29T\d\d:\d\d:\d\d\.\d{3}Z$", entry, re.M)
    keys = {code(row[0]) for row in table(text, "| key |")}
    assert keys == {"subject", "logged", "harness", "session"}


# -- assets -------------------------------------------------------------------------------


def test_the_default_ignores_listed_are_cores() -> None:
    text = section("Orphans and staleness")
    sentence = text[text.index("also leaves out") : text.index("(in git")]
    assert set(re.findall(r"`([^`]+)`", sentence)) == set(DEFAULT_IGNORES)


def test_the_evidence_example_is_the_form_read_prints(tmp_path: Path) -> None:
    (example,) = blocks(section("Orphans and staleness"), "")
    repo = build(tmp_path / "proj")
    run = canon("read", "src/feed/fetch.py", cwd=repo.root)
    real = example.strip().replace("3f2a9c1", repo.hashes["Retry on 429"])
    assert real in run.out.splitlines()


# -- settings -----------------------------------------------------------------------------


def test_the_options_table_is_layouts(tmp_path: Path) -> None:
    rows = table(section("Settings: canon.toml and settings.json"), "| option |")
    assert [code(r[0]) for r in rows] == list(layout.OPTION_KEYS)
    for key, _value, default, allowed, _meaning in rows:
        key = code(key)
        assert code(default) == layout.show(layout.DEFAULTS[key]), key
        assert allowed == ("`canon.toml`" if key in layout.TOPOLOGY_KEYS else "both"), key


def test_the_settings_examples_resolve_without_problems(tmp_path: Path) -> None:
    text = section("Settings: canon.toml and settings.json")
    (toml,) = blocks(text, "toml")
    (user,) = blocks(text, "json")
    project = tmp_path / "shop"
    project.mkdir()
    (tmp_path / "shared-data").mkdir()
    (project / "canon.toml").write_text(toml, encoding="utf-8")
    config = tmp_path / "config"
    (config / "canon").mkdir(parents=True)
    (config / "canon" / "settings.json").write_text(user, encoding="utf-8")
    env = {"XDG_CONFIG_HOME": str(config)}
    held = layout.resolve(project, env=env).issues  # mounts wait for `canon trust`
    assert [p.code for p in held] == [layout.UNTRUSTED_OPTION]
    optionfiles.trust(project, env)
    options = layout.resolve(project, env=env)
    assert options.problems == []
    assert options["retrieval"] == "lexical" and options["mounts"] == ("../shared-data",)
    assert options["resurface"] is False and options["standout"] == 1.6
    assert options.sources["standout"].endswith("settings.json")
    assert layout.settings_file({"XDG_CONFIG_HOME": str(config)}) == (
        config / "canon" / "settings.json"
    )


# -- canon check and exit codes ------------------------------------------------------------


def test_the_check_example_lines_are_the_demos(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import tour

    demo = tour.prepare(tmp_path)
    real = canon("check", cwd=demo).out.splitlines()
    (example,) = blocks(section("canon check output"), "")
    shown = [line for line in example.splitlines() if line != "…"]
    assert shown and all(line in real for line in shown), real


def test_the_check_codes_table_is_every_code_core_reports() -> None:
    rows = table(section("canon check output"), "| code |")
    documented = {code(r[0]) for r in rows}
    source = (CORE / "check.py").read_text("utf-8") + (CORE / "lint.py").read_text("utf-8")
    produced = set(re.findall(r'Finding\(\s*[^,()]+,\s*"([a-z-]+)"', source))
    for chosen in re.findall(r'code = "([a-z-]+)"(?: if [^\n]* else "([a-z-]+)")?', source):
        produced |= {c for c in chosen if c}
    from canon_ls.formats.rule_export import STATES  # generated rule files (canon export)

    option_codes = {layout.BAD_OPTION, layout.UNTRUSTED_OPTION}  # canon.toml / settings.json
    assert documented == produced | option_codes | {f"export-{state}" for state in STATES}


@pytest.mark.parametrize(
    ("args", "setup", "expected"),
    [
        (("read", "src/none.py"), None, 0),
        (("write", "src/a.py", "--body", "x"), "required", 1),
        (("check",), "malformed", 1),
        (("read", "--bogus"), None, 2),
    ],
)
def test_exit_codes_as_documented(
    tmp_path: Path, args: tuple[str, ...], setup: str | None, expected: int
) -> None:
    rows = {r[0]: r[1] for r in table(section("Exit codes"))}
    assert set(rows) == {"0", "1", "2", "130"}
    canon("init", cwd=tmp_path)
    schema_file = tmp_path / ".canon" / "schema.json"
    if setup == "required":
        schema_file.write_text('{"article": {"capsule": {"required": true}}}', "utf-8")
    if setup == "malformed":
        schema_file.write_text("{not json", "utf-8")
    assert canon(*args, cwd=tmp_path).code == expected


def test_the_environment_variables_exist() -> None:
    """Every variable the reference lists is read by the code, and the table is the one the
    reference means (it names those canon can least do without)."""
    names = [code(r[0]).split("=")[0] for r in table(section("Environment variables"))]
    assert {"CANON_TODAY", "CANON_NO_CACHE", "XDG_CACHE_HOME", "CANON_DEBUG"} <= set(names), names
    source = "".join(p.read_text("utf-8") for p in (ROOT / "canon_ls").rglob("*.py"))
    for name in names:
        assert f'"{name}"' in source, name


def test_the_readme_links_the_reference() -> None:
    assert "docs/FORMAT.md" in (ROOT / "README.md").read_text("utf-8")
    assert "SPEC" not in DOC and "§" not in DOC
