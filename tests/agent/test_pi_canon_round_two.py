"""One store with pi-canon 0.3.0, round two (issue 36 items 2-5, 7, 8), through the real CLI.

SPEC §7: schema.json keys canon does not know, or values of the wrong type, are named on every
write, read, `check` and `status` and ignored alone (the other rules hold, as pi-canon holds
them); a required rule the write did not touch warns instead of refusing. SPEC §5: the title is
the first line of the body when it is a `#` heading, indented or after a tab as pi-canon reads
it. SPEC §6 journal: `canon check --fix` gives an entry of canon's older block-list shape the
one-line subject pi-canon's index reads. SPEC §9: a gitignored file on disk is an asset."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agent.test_cli import canon, write_article

UNKNOWN = {
    "article": {"capsule": {"required": True, "maxchars": 10}, "summary": {"required": True}},
    "relations": {"backlinks": {"warn": True}},
}


def schema(project: Path, data: object) -> None:
    (project / ".canon").mkdir(exist_ok=True)
    (project / ".canon/schema.json").write_text(json.dumps(data))


def test_unknown_schema_keys_are_named_on_write_read_check_and_status(project: Path) -> None:
    schema(project, UNKNOWN)
    names = ('"article.capsule.maxchars"', '"article.summary"', '"relations.backlinks"')
    refused = canon("write", "src/core/config.py", "--body", "# Config", cwd=project)
    assert refused.code != 0 and "requires a capsule" in refused.out + refused.err  # rule holds
    w = canon("write", "src/core/config.py", "--capsule", "Config.", "--body", "# C", cwd=project)
    r = canon("read", "src/core/config.py", cwd=project)
    check = canon("check", cwd=project)
    for out in (w.out, r.out, check.out):
        assert all(name in out for name in names), out
    status = canon("status", cwd=project).out
    assert "schema ok, 3 of its keys ignored" in status, status
    as_json = json.loads(canon("status", "--format", "json", cwd=project).out)
    assert len(as_json["schema_ignored"]) == 3 and as_json["schema"] == "ok", as_json


def test_one_wrong_typed_value_disables_only_its_own_rule(project: Path) -> None:
    schema(
        project,
        {"article": {"capsule": {"required": True}, "body": {"max_chars": "20000"}}},
    )
    refused = canon("write", "src/core/config.py", "--body", "# Config", cwd=project)
    assert refused.code != 0 and "requires a capsule" in refused.out + refused.err, refused
    assert not (project / ".canon/articles/src/core/config.md").exists()
    w = canon("write", "src/core/config.py", "--capsule", "C.", "--body", "# C", cwd=project)
    assert w.code == 0 and '"article.body.max_chars" must be an integer' in w.out, w.out
    assert "malformed" not in canon("status", cwd=project).out


def test_a_required_rule_the_write_did_not_touch_warns(project: Path) -> None:
    write_article(project, "src/core/config", "---\ncapsule: Old.\n---\nNo heading here.\n")
    schema(project, {"article": {"title": {"required": True, "hint": "Name the asset."}}})
    w = canon("write", "src/core/config.py", "--capsule", "New.", cwd=project)
    assert w.code == 0, w.out + w.err
    assert "requires a title" in w.out and "Name the asset." in w.out, w.out
    text = (project / ".canon/articles/src/core/config.md").read_text()
    assert "capsule: New." in text
    refused = canon("write", "src/core/config.py", "--body", "Still none.", cwd=project)
    assert refused.code != 0 and "requires a title" in refused.out + refused.err


@pytest.mark.parametrize("heading", ["   # Config", "#\tConfig", "#  Config"])
def test_a_title_pi_canon_accepts_is_a_title(project: Path, heading: str) -> None:
    schema(project, {"article": {"title": {"required": True}}})
    w = canon("write", "src/core/config.py", "--capsule", "C.", "--body", heading, cwd=project)
    assert w.code == 0 and "requires a title" not in w.out, w.out + w.err


OLD_ENTRY = (
    "---\ndate: 2026-01-02\nsubject:\n  - src/core/config\n  - lake:prices\nsource: cli\n"
    "---\nChose layered config.\n"
)


def test_check_fix_gives_old_journal_entries_the_subject_line_pi_canon_reads(
    project: Path,
) -> None:
    write_article(project, "src/core/config", "---\ncapsule: C.\n---\n# Config\n")
    journal = project / ".canon/journal"
    journal.mkdir(parents=True)
    (journal / "2026-01-02-chose.md").write_text(OLD_ENTRY)
    (journal / "2026-01-03-crlf.md").write_bytes(OLD_ENTRY.replace("\n", "\r\n").encode())
    fixed = canon("check", "--fix", cwd=project)
    assert "Fixed journal/2026-01-02-chose.md" in fixed.err, fixed.err
    assert (journal / "2026-01-02-chose.md").read_text() == OLD_ENTRY.replace(
        "subject:\n  - src/core/config\n  - lake:prices\n",
        'subject: [src/core/config,"lake:prices"]\n',
    )
    assert (
        b'subject: [src/core/config,"lake:prices"]\r\nsource: cli\r\n'
        in (journal / "2026-01-03-crlf.md").read_bytes()
    )
    links = canon("read", "src/core/config.py", cwd=project).out
    assert "2026-01-02-chose.md" in links and "2026-01-03-crlf.md" in links, links
    assert "Fixed" not in canon("check", "--fix", cwd=project).err  # nothing left to mend


def test_an_article_for_a_gitignored_file_is_not_an_orphan(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("config/*.local.ts\n")
    (project / "config").mkdir()
    (project / "config/app.local.ts").write_text("x\n")
    (project / "config/app.ts").write_text("y\n")
    for path in ("config/app.local.ts", "config/app.ts"):
        w = canon("write", path, "--capsule", "Config.", "--body", "# Config", cwd=project)
        assert w.code == 0 and "orphan" not in w.out.lower(), w.out
    assert "orphan" not in canon("read", "config/app.local.ts", cwd=project).out.lower()
    assert ", 0 orphans," in canon("status", cwd=project).out
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    assert not [r for r in rows if r["code"] == "orphan"], rows
