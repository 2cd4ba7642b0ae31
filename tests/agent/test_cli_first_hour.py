"""Issue 41, what a new user tripped on in their first hour with the CLI: a typo in a folder
(SPEC §6.1 item 5, §9 orphans), `canon mv` and its heading, the day words and the journal in
`canon history --since-updated` (§9.1, §9.2), and where a bad front matter is reported."""

from __future__ import annotations

import calendar
import json
import os
import subprocess
from pathlib import Path

from test_cli import canon, write_article

UTC = {"TZ": "UTC"}
ORPHAN = "Orphan: no file or directory maps to"


def files(project: Path, *paths: str) -> None:
    for rel in paths:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("X = 1\n", encoding="utf-8")


def test_spec_6_1_5_a_typo_in_a_folder_is_an_orphan_like_one_in_a_file_name(
    project: Path,
) -> None:
    """`scr/invoicer/tax.py` beside `src/`: the write asks the orphan question and `canon
    check` reports it, as for a typo in the file name; a topic folder (`decisions/`) that
    resembles no folder stays silent."""
    files(project, "src/invoicer/tax.py")
    assert canon("write", "src/invoicer/tax.py", "--capsule", "Tax.", cwd=project).code == 0
    typo = canon("write", "scr/invoicer/tax.py", "--capsule", "Tax rules.", cwd=project)
    assert typo.code == 0 and f"{ORPHAN} scr/invoicer/tax." in typo.out, typo.out
    name = canon("write", "src/invoicer/txa.py", "--capsule", "Tax.", cwd=project)
    assert f"{ORPHAN} src/invoicer/txa." in name.out  # the file-name typo, as before
    topic = canon("write", "decisions/auth", "--capsule", "Sessions, not JWT.", cwd=project)
    assert ORPHAN not in topic.out
    found = json.loads(canon("check", "--format", "json", cwd=project).out)
    orphans = sorted(f["address"] for f in found if f["code"] == "orphan")
    assert orphans == ["scr/invoicer/tax", "src/invoicer/txa"]


def test_mv_renames_the_heading_and_warns_of_an_orphan(project: Path) -> None:
    """`canon mv` rewrites a `# <old address>` heading (a heading in other words stays) and
    says when nothing maps to the new address yet."""
    files(project, "src/invoicer/csv_export.py", "src/invoicer/report.py")
    body = "# src/invoicer/csv_export\n\nWrites CSV.\n"
    write_article(project, "src/invoicer/csv_export", f"---\ncapsule: CSV.\n---\n{body}")
    write_article(project, "src/invoicer/report", "---\ncapsule: R.\n---\n# The report\n")
    run = canon("mv", "src/invoicer/csv_export", "src/invoicer/csv", cwd=project)
    assert run.code == 0, run.err
    assert run.out.splitlines()[1:] == [
        "No file or directory maps to src/invoicer/csv yet: until one does, the article is "
        "an orphan."
    ]
    moved = (project / ".canon/articles/src/invoicer/csv.md").read_text("utf-8")
    assert moved == "---\ncapsule: CSV.\n---\n# src/invoicer/csv\n\nWrites CSV.\n"
    files(project, "src/invoicer/summary.py")
    run = canon("mv", "src/invoicer/report", "src/invoicer/summary.py", cwd=project)
    assert run.out.splitlines() == [
        "Moved src/invoicer/report to src/invoicer/summary; no article links to it."
    ]
    kept = (project / ".canon/articles/src/invoicer/summary.md").read_text("utf-8")
    assert kept.endswith("# The report\n")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_spec_9_1_a_change_the_same_day_says_today_not_in_0_days(project: Path) -> None:
    """An uncommitted change on the reference day itself: `today since updated …`."""
    files(project, "src/x.py")
    git(project, "init", "-q")
    canon("write", "src/x.py", "--capsule", "Loads x.", cwd=project)
    (project / "src/x.py").write_text("X = 2\n", encoding="utf-8")
    read = canon("read", "src/x.py", cwd=project).out
    (stale,) = [line for line in read.splitlines() if line.startswith("stale:")]
    assert stale == (
        "stale: 1 file changed today since updated 2026-11-29: src/x.py"
    ) or stale.startswith("stale: 1 file changed uncommitted today since updated 2026-11-29")
    assert "0 days" not in read
    history = canon("history", "src/x.py", cwd=project).out
    assert "the article's reference date (today)" in history and "0 days" not in history


def test_spec_9_2_history_since_updated_and_read_agree_on_the_journal(project: Path) -> None:
    """An entry journaled after the write, the same day: `canon read` lists it and so does
    `canon history --since-updated`; one of an earlier day is named as such, never "no
    entry names"."""
    files(project, "src/x.py")
    canon("write", "src/x.py", "--capsule", "Loads x.", cwd=project)
    start = calendar.timegm((2026, 11, 29, 0, 0, 1))  # written at the day's start (no git:
    os.utime(project / ".canon/articles/src/x.md", (start, start))  # its mtime is its change)
    canon("journal", "Chose to load x lazily.", "--subject", "src/x", cwd=project)
    (entry,) = (project / ".canon/journal").iterdir()
    assert entry.name in canon("read", "src/x.py", cwd=project).out
    since = canon("history", "src/x.py", "--since-updated", cwd=project, env=UTC).out
    assert f"journal 2026-11-29 {entry.name}" in since, since
    run = canon("history", "src/x.py", "--since-updated", "--format", "json", cwd=project, env=UTC)
    data = json.loads(run.out)
    assert [e["name"] for e in data["journal"]] == [entry.name]
    old = entry.with_name("2026-11-01-older.md")
    old.write_text("---\nsubject: [src/x]\n---\nOlder.\n", encoding="utf-8")
    entry.unlink()
    since = canon("history", "src/x.py", "--since-updated", cwd=project).out
    assert since.splitlines()[-1] == ("journal: 1 entry names src/x, none since updated 2026-11-29")


def test_bad_front_matter_is_reported_at_its_line_in_the_file(project: Path) -> None:
    """YAML's own place counts from inside the block; the finding is placed and worded in
    the article file's lines (the `---` line is line 1)."""
    write_article(
        project, "x", "---\ncapsule: ok\nupdated: 2026-01-01\ntags: [unclosed\n---\n# x\n"
    )
    out = canon("check", cwd=project).out
    (line,) = [x for x in out.splitlines() if "[malformed-front-matter]" in x]
    assert line.startswith(".canon/articles/x.md:4:7: error: Malformed front matter: "), line
    assert "(line 4, column 7)" in line and "unicode string" not in line
    found = json.loads(canon("check", "--format", "json", cwd=project).out)
    (bad,) = [f for f in found if f["code"] == "malformed-front-matter"]
    assert (bad["line"], bad["start"]) == (3, 6)


def test_spec_6_search_finds_other_forms_of_an_english_word(project: Path) -> None:
    """`canon search rounding` finds the capsule that says "rounded" (stems); Chinese still
    matches by bigrams."""
    files(project, "src/tax.py", "src/csv.py")
    canon(
        "write",
        "src/tax.py",
        "--capsule",
        "Totals are rounded half up; 税率 per line.",
        cwd=project,
    )
    canon("write", "src/csv.py", "--capsule", "Writes the export.", cwd=project)
    found = canon("search", "rounding", cwd=project).out
    assert "src/tax" in found and "src/csv" not in found, found
    assert "src/tax" in canon("search", "税率", cwd=project).out
