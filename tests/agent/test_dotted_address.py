"""SPEC §3 "an existing article wins over the extension rule": an argument that is exactly the
address of an existing article names that article; only otherwise is it a path whose one
extension is dropped. `src/core/config.test` (as `map` prints the article made for
`config.test.ts`) reads and writes `config.test.md`, never `config.md` (issue 22 item 1: the
second write used to overwrite the first article). Every interface: the CLI, `canon tool`,
the MCP server, the hooks' reading of a tool call, and a store whose bytes pi-canon wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from canon_ls.core.storage.article import parse
from tests.agent.test_cli import canon, write_article
from tests.agent.test_mcp import server_params, text_of

CONFIG = "src/core/config"
DOTTED = "src/core/config.test"


def capsule_of(project: Path, address: str) -> str:
    data = (project / ".canon" / "articles" / f"{address}.md").read_bytes()
    return parse(data, address).capsule


def pi_canon_store(project: Path) -> None:
    """Two articles in the bytes pi-canon 0.3.0 writes (its serializer: owned keys unquoted
    unless YAML would misread them, `updated`, then the body with one trailing newline)."""
    write_article(
        project, CONFIG, "---\ncapsule: Loads layered config.\nupdated: 2026-11-20\n---\n# Config\n"
    )
    write_article(
        project,
        DOTTED,
        "---\ncapsule: Tests for the config loader.\nupdated: 2026-11-21\n---\n# Config tests\n",
    )


def test_cli_write_of_a_dotted_address_never_overwrites_its_parent(project: Path) -> None:
    assert canon("write", CONFIG, "--capsule", "A", cwd=project).code == 0
    wrote = canon("write", DOTTED, "--capsule", "B", cwd=project)
    assert wrote.code == 0, wrote.err
    assert wrote.out.startswith(f"Wrote {CONFIG}."), "no article yet: the path rule applies"
    assert capsule_of(project, CONFIG) == "B"  # the path rule: config.test -> config
    # An article made from the asset config.test.ts sits at the dotted address ...
    assert canon("write", "src/core/config.test.ts", "--capsule", "C", cwd=project).code == 0
    assert capsule_of(project, DOTTED) == "C"
    # ... and that address, as map prints it, now names it for reads and writes alike.
    mapped = canon("map", cwd=project).out
    assert f"{DOTTED}: C" in mapped.splitlines()
    assert canon("write", DOTTED, "--capsule", "D", cwd=project).out.startswith(f"Wrote {DOTTED}.")
    assert (capsule_of(project, CONFIG), capsule_of(project, DOTTED)) == ("B", "D")
    read = canon("read", DOTTED, cwd=project).out
    assert read.splitlines()[0] == DOTTED and "capsule: D" in read
    assert canon("read", CONFIG, cwd=project).out.splitlines()[:2] == [CONFIG, "capsule: B"]


def test_every_printed_address_reads_back_to_the_same_article(project: Path) -> None:
    """map, search, links, history and review print addresses; each reads back to itself."""
    pi_canon_store(project)
    (project / "src" / "core" / "config.test.ts").write_text("test()\n", encoding="utf-8")
    found = canon("search", "loader", cwd=project).out
    assert DOTTED in found, found
    for printed in (DOTTED, CONFIG):
        read = canon("read", printed, cwd=project)
        assert read.out.splitlines()[0] == printed, read.out
    assert canon("read", "src/core/config.test.ts", cwd=project).out.splitlines()[0] == DOTTED
    assert canon("read", "src/core/config.ts", cwd=project).out.splitlines()[0] == CONFIG
    links = canon("links", DOTTED, cwd=project)
    assert DOTTED in links.out.splitlines()[0], links.out
    history = canon("history", DOTTED, cwd=project)
    assert CONFIG + " " not in history.out + history.err, history.out
    assert canon("review", DOTTED, cwd=project).code == 0
    assert "reviewed:" in (project / ".canon/articles/src/core/config.test.md").read_text()
    assert "reviewed:" not in (project / ".canon/articles/src/core/config.md").read_text()
    journal = canon("journal", "Split the loader tests.", "--subject", DOTTED, cwd=project)
    assert journal.code == 0, journal.err
    entry = next((project / ".canon" / "journal").glob("*.md")).read_text()
    assert f"subject: [{DOTTED}]" in entry, entry


def test_tool_json_on_a_pi_canon_store(project: Path) -> None:
    pi_canon_store(project)
    action = {"action": "write", "path": DOTTED, "capsule": "Covers env over file."}
    wrote = canon("tool", json.dumps(action), cwd=project)
    assert wrote.out.startswith(f"Wrote {DOTTED}."), wrote.out
    assert capsule_of(project, CONFIG) == "Loads layered config."
    assert capsule_of(project, DOTTED) == "Covers env over file."
    read = canon("tool", json.dumps({"action": "read", "path": DOTTED}), cwd=project)
    assert read.out.splitlines()[:2] == [DOTTED, "capsule: Covers env over file."]
    mapped = canon("tool", json.dumps({"action": "map", "path": DOTTED}), cwd=project)
    assert mapped.out.strip() == f"{DOTTED}: Covers env over file.", mapped.out


@pytest.mark.timeout(120)
async def test_mcp_reads_and_writes_the_dotted_article(project: Path) -> None:
    pi_canon_store(project)
    async with Client(server_params(project)) as client:
        wrote = await client.call_tool("canon", {"action": "write", "path": DOTTED, "capsule": "X"})
        read = await client.call_tool("canon", {"action": "read", "path": DOTTED})
    assert text_of(wrote).startswith(f"Wrote {DOTTED}.")
    assert text_of(read).splitlines()[:2] == [DOTTED, "capsule: X"]
    assert capsule_of(project, CONFIG) == "Loads layered config."


def test_hooks_read_the_tool_argument_by_the_same_rule(tmp_path: Path) -> None:
    """A `canon` read of `src/core/config.test` withdraws that article's pending line; a touched
    file `src/core/config.test.ts` still resolves by its path (SPEC §3, §11.3)."""
    from tests.agent.hookrun import Hook, context, make_project, payload

    project = make_project(tmp_path / "proj")
    pi_canon_store(project)
    (project / "src/core/config.test.ts").write_text("test()\n", encoding="utf-8")
    claude = Hook("claude-code", tmp_path / "state")
    touched = payload("claude-code", "post_tool_use_read", project)
    touched["tool_input"] = {"file_path": str(project / "src/core/config.test.ts")}
    canon_read = payload("claude-code", "post_tool_use_mcp_canon_read", project)
    canon_read["tool_input"] = {"action": "read", "path": DOTTED}
    assert claude(canon_read) is None
    assert claude(touched) is None, "the full read already delivered config.test"
    other = Hook("claude-code", tmp_path / "state2")
    canon_read["tool_input"] = {"action": "read", "path": CONFIG}
    assert other(canon_read) is None
    assert "- src/core/config.test: Tests for the config loader." in context(other(touched))
