"""SPEC §3, §6.1 item 4: `[[src/core/config.ts]]` names the article `src/core/config` (the
extension dropped as for any path), unless an article `src/core/config.ts` exists; it used to
be reported broken (issue 22 item 6a). Write lints, check, links, graph and `canon mv`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.test_cli import canon, write_article

CONFIG = "---\ncapsule: Loads config.\nupdated: 2026-11-20\n---\n# Config\n"
GUIDE = (
    "---\ncapsule: The guide.\nupdated: 2026-11-20\n---\n# Guide\n\nSee [[src/core/config.ts]].\n"
)


def test_a_path_link_names_the_article_of_that_path(project: Path) -> None:
    write_article(project, "src/core/config", CONFIG)
    body = "# Notes\n\nSee [[src/core/config.py]] and [[src/core/config.md]]; [[src/nope.ts]].\n"
    wrote = canon("write", "docs/notes", "--capsule", "Notes.", "--body", body, cwd=project)
    broken = [line for line in wrote.out.splitlines() if line.startswith("Broken wikilink")]
    assert broken == ["Broken wikilink [[src/nope.ts]]: no article src/nope exists."], wrote.out
    write_article(project, "docs/guide", GUIDE)
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    assert [r["address"] for r in rows if r["code"] == "broken-link"] == ["docs/notes"], rows
    links = canon("links", "src/core/config", cwd=project).out
    assert "docs/guide" in links and "docs/notes" in links, links
    outbound = canon("links", "docs/guide", cwd=project).out
    assert "src/core/config" in outbound and "no such article" not in outbound, outbound


def test_an_article_of_the_exact_address_wins(project: Path) -> None:
    write_article(project, "src/core/config", CONFIG)
    write_article(project, "src/core/config.ts", CONFIG.replace("Loads config.", "Odd one."))
    write_article(project, "docs/guide", GUIDE)
    assert "docs/guide" not in canon("links", "src/core/config", cwd=project).out
    assert "docs/guide" in canon("links", "src/core/config.ts", cwd=project).out


def test_graph_and_mv_follow_a_path_link(project: Path, tmp_path: Path) -> None:
    write_article(project, "src/core/config", CONFIG)
    write_article(project, "docs/guide", GUIDE)
    out = tmp_path / "graph.html"
    assert canon("graph", "--out", str(out), cwd=project).code == 0
    html = out.read_text()
    assert '"target": "a:src/core/config", "kind": "link"' in html.replace('":"', '": "').replace(
        '","', '", "'
    ), "a link edge to the article, not a broken one"
    moved = canon("mv", "src/core/config", "src/core/settings", cwd=project)
    assert moved.code == 0, moved.err
    guide = (project / ".canon/articles/docs/guide.md").read_text()
    assert "[[src/core/settings]]" in guide, guide
