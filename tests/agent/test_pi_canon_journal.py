"""SPEC §6 journal: entries in the shape pi-canon 0.3.0 writes and reads, both shapes read.

pi-canon finds an entry's subjects and instant with two line rules over the entry's text and
nothing else: the first `subject:` line's value, outer brackets dropped, split on commas
outside double quotes (a double-quoted item is a JSON string), empty items dropped; the first
`logged:` line's value, else the file name's first ten characters. Its read lists the names of
the entries naming the article, ordered by that instant (then by the `-n` collision number),
newest three first, then "and N earlier". `PiReader` below restates those facts; it is how
these tests know that pi-canon's read of `a.py` lists an entry canon wrote. Fixture entries
are written byte for byte in pi-canon's shape (`subject: [a, b]`, `logged: <ISO instant>`,
`harness: <agent>`, `session`), as its own tool writes them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_cli import TODAY, canon

from canon_ls.core import tool
from canon_ls.core.storage.store import Store

INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


class PiReader:
    """pi-canon's journal index, from the facts of its format (see the module docstring)."""

    def __init__(self, journal: Path) -> None:
        self.rows = []
        for file in sorted(journal.glob("*.md")):
            text = file.read_text("utf-8")
            logged = re.search(r"^logged:\s*(.*)$", text, re.M)
            subject = re.search(r"^subject:\s*(.*)$", text, re.M)
            instant = (logged.group(1).strip() if logged else "") or file.name[:10]
            self.rows.append(
                (file.name, instant, self.subjects(subject.group(1) if subject else ""))
            )

    @staticmethod
    def subjects(raw: str) -> list[str]:
        inner = re.sub(r"^\[|\]$", "", raw.strip())
        out = []
        for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|([^,]+)', inner):
            value = json.loads(f'"{m.group(1)}"') if m.group(1) is not None else m.group(2).strip()
            if value:
                out.append(value)
        return out

    def mentions(self, address: str) -> list[str]:
        """Oldest first, as pi-canon's index orders them."""

        def seq(name: str) -> int:
            m = re.search(r"-(\d+)\.md$", name)
            return int(m.group(1)) if m else 1

        rows = [r for r in self.rows if address in r[2]]
        return [r[0] for r in sorted(rows, key=lambda r: (r[1], seq(r[0])))]


def pi_entry(journal: Path, name: str, subjects: list[str], logged: str, body: str) -> None:
    """An entry as pi-canon's journal action writes it (its bytes)."""
    journal.mkdir(parents=True, exist_ok=True)
    quoted = [json.dumps(s) if re.search(r"[:#\[\]{}\"'`,&*!|>%@\\]", s) else s for s in subjects]
    head = f"subject: [{', '.join(quoted)}]\n" if subjects else ""
    text = f"---\n{head}logged: {logged}\nharness: pi\nsession: pi-7\n---\n{body}\n"
    (journal / name).write_text(text, "utf-8")


def test_spec_6_journal_cli_entry_is_listed_by_pi_canons_read(tmp_path: Path) -> None:
    """SPEC §6 journal: after `canon journal "Chose X." --subject a.py`, pi-canon's read of
    a.py lists the entry; the front matter is pi-canon's, key for key."""
    (tmp_path / "a.py").write_text("x = 1\n", "utf-8")
    assert canon("write", "a.py", "--capsule", "The a module.", cwd=tmp_path).code == 0
    run = canon("journal", "Chose X.", "--subject", "a.py", cwd=tmp_path)
    assert run.code == 0, run.err
    journal = tmp_path / ".canon" / "journal"
    (entry,) = journal.iterdir()
    text = entry.read_text("utf-8")
    head, body = text.split("---\n")[1:3]
    lines = head.splitlines()
    assert lines[0] == "subject: [a]"
    assert lines[1].startswith("logged: ") and INSTANT.fullmatch(lines[1][8:]), lines
    assert lines[1][8:18] == TODAY == entry.name[:10]
    assert lines[2:] == ["harness: cli"]
    assert body == "Chose X.\n"
    assert PiReader(journal).mentions("a") == [entry.name]


def test_spec_6_journal_subjects_pi_canon_quotes_read_back(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC §6 journal: an address pi-canon would quote (a comma, a colon) is quoted the same
    way, and a quoted item after the first follows its comma directly (pi-canon's reader
    takes `, "a,b"` for a plain item), so its reader and ours split the list alike;
    `session` follows `harness`."""
    monkeypatch.setenv("CANON_TODAY", TODAY)
    r = tool.run(
        Store(project),
        {"action": "journal", "body": "Both.", "subject": ["src/x", "docs/a,b.md"], "slug": "q"},
        source="claude-code",
        session="s-9",
    )
    assert r.code == 0, r.text
    journal = project / ".canon" / "journal"
    text = (journal / f"{TODAY}-q.md").read_text("utf-8")
    assert text.startswith('---\nsubject: [src/x,"docs/a,b"]\nlogged: ')
    assert text.endswith("\nharness: claude-code\nsession: s-9\n---\nBoth.\n")
    assert PiReader(journal).mentions("docs/a,b") == [f"{TODAY}-q.md"]
    assert Store(project).journal_names("docs/a,b") == [f"{TODAY}-q.md"]
    (entry,) = Store(project).journal_entries()
    assert (entry.source, entry.session, entry.subject) == (
        "claude-code",
        "s-9",
        ("src/x", "docs/a,b"),
    )


def _pi_store(project: Path) -> Path:
    """A store pi-canon wrote: an article for a.py and four entries about it (one quoted
    subject, YAML-odd plain items, a `-2` collision logged before its first)."""
    (project / "a.py").write_text("x = 1\n", "utf-8")
    articles = project / ".canon" / "articles"
    articles.mkdir(parents=True)
    (articles / "a.md").write_text(
        "---\ncapsule: The a module.\nupdated: 2026-11-20\n---\n# a\n", "utf-8"
    )
    journal = project / ".canon" / "journal"
    pi_entry(journal, "2026-11-20-first.md", ["a"], "2026-11-20T09:00:00.000Z", "First pelican.")
    pi_entry(
        journal, "2026-11-21-dup-2.md", ["a", "yes"], "2026-11-21T08:00:00.000Z", "Early heron."
    )
    pi_entry(journal, "2026-11-21-dup.md", ["a"], "2026-11-21T10:00:00.000Z", "Late heron.")
    pi_entry(
        journal,
        "2026-11-22-odd.md",
        ["a", "lake:prices"],
        "2026-11-22T07:30:00.000Z",
        "Odd gannet.",
    )
    return journal


def test_spec_6_journal_pi_canon_entries_read_everywhere(project: Path) -> None:
    """SPEC §6 journal: entries in pi-canon's bytes are listed by read (newest three by their
    recorded instant, then "and N earlier"), search --journal, links and history."""
    journal = _pi_store(project)
    newest = ["2026-11-22-odd.md", "2026-11-21-dup.md", "2026-11-21-dup-2.md"]
    assert PiReader(journal).mentions("a")[::-1][:3] == newest
    read = canon("read", "a.py", cwd=project)
    assert read.code == 0, read.err
    assert f"journal: {', '.join(newest)} and 1 earlier" in read.out
    found = canon("search", "heron", "--journal", cwd=project).out
    assert "2026-11-21-dup.md" in found and "2026-11-21-dup-2.md" in found, found
    assert "subject: a, yes" in found, found
    links = canon("links", "a.py", cwd=project).out
    assert "4 journal entries" in links, links
    assert links.index("2026-11-21-dup.md") < links.index("2026-11-21-dup-2.md")
    history = canon("history", "a.py", cwd=project).out
    assert "journal 2026-11-22 2026-11-22-odd.md" in history, history
    assert Store(project).journal_names("lake:prices") == ["2026-11-22-odd.md"]


@pytest.mark.parametrize("count", [1, 3])
def test_spec_6_read_index_has_no_earlier_tail_up_to_three(project: Path, count: int) -> None:
    """SPEC §6.1 item 8: "and N earlier" only when more than three entries name the article."""
    journal = _pi_store(project)
    for name in sorted(journal.iterdir())[count:]:
        name.unlink()
    read = canon("read", "a.py", cwd=project).out
    assert "earlier" not in read and "journal: 20" in read, read


def test_spec_6_journal_older_shape_still_read(project: Path) -> None:
    """SPEC §6 journal: an entry in the older shape (date, block-list subject, source) stays
    readable next to the new one."""
    journal = _pi_store(project)
    (journal / "2026-11-23-old.md").write_text(
        "---\ndate: 2026-11-23\nsubject:\n  - a\nsource: codex\n---\nOld osprey.\n", "utf-8"
    )
    store = Store(project)
    assert store.journal_names("a")[0] == "2026-11-23-old.md"
    old = next(e for e in store.journal_entries() if e.name == "2026-11-23-old.md")
    assert (old.date, old.source, old.subject) == ("2026-11-23", "codex", ("a",))


def test_spec_6_journal_collisions_order_by_number_not_file_time(project: Path) -> None:
    """Hand-written entries of one day without `logged` (pi-canon's older ones): `x-2.md` is
    newer than `x.md` whatever a checkout made of their file times, as pi-canon orders them."""
    import os

    journal = project / ".canon" / "journal"
    journal.mkdir(parents=True)
    for name, when in (("2026-11-20-x.md", 2), ("2026-11-20-x-2.md", 1)):
        (journal / name).write_text(f"---\nsubject: [a]\n---\n{name}\n", "utf-8")
        os.utime(journal / name, ns=(when * 10**18, when * 10**18))
    assert Store(project).journal_names("a") == ["2026-11-20-x-2.md", "2026-11-20-x.md"]
    assert PiReader(journal).mentions("a")[::-1] == ["2026-11-20-x-2.md", "2026-11-20-x.md"]


def test_spec_6_journal_front_matter_yaml_refuses_is_read_as_pi_canon_reads_it(
    project: Path,
) -> None:
    """pi-canon leaves `- x` unquoted in a subject list (YAML refuses the whole block); its
    reader takes the line as written, and so does canon's."""
    journal = project / ".canon" / "journal"
    journal.mkdir(parents=True)
    (journal / "2026-11-20-odd.md").write_text(
        "---\nsubject: [a, - x]\nlogged: 2026-11-20T09:00:00.000Z\nharness: pi\n---\nOdd.\n",
        "utf-8",
    )
    (entry,) = Store(project).journal_entries()
    assert (entry.subject, entry.source, entry.date) == (("a", "- x"), "pi", "2026-11-20")
    assert PiReader(journal).mentions("- x") == ["2026-11-20-odd.md"]


def test_spec_6_journal_a_subject_named_twice_counts_once(project: Path) -> None:
    """pi-canon writes a subject list as given, so `a.py` and `a` make `subject: [a, a]`; its
    read lists that entry once, and so do canon's read, links and search."""
    journal = _pi_store(project)
    pi_entry(journal, "2026-11-23-twice.md", ["a", "a"], "2026-11-23T07:00:00.000Z", "Two egrets.")
    read = canon("read", "a.py", cwd=project).out
    assert "journal: 2026-11-23-twice.md, 2026-11-22-odd.md, 2026-11-21-dup.md and 2" in read
    assert "5 journal entries" in canon("links", "a.py", cwd=project).out
    found = canon("search", "egrets", "--journal", cwd=project).out
    assert "subject: a)" in found, found


def test_spec_6_an_entrys_day_is_its_logged_instants_not_its_file_names(project: Path) -> None:
    """Issue 43 row 3 (SPEC §6 journal): an entry whose file name's day differs from its
    `logged` day (written at 23:59 in UTC-8, or renamed by hand) has one day in every
    reader, the recorded instant's, and is ordered by that instant, as pi-canon orders it."""
    (project / "a.py").write_text("x = 1\n", "utf-8")
    (project / ".canon" / "articles").mkdir(parents=True)
    (project / ".canon" / "articles" / "a.md").write_text("---\ncapsule: A.\n---\n# a\n", "utf-8")
    journal = project / ".canon" / "journal"
    pi_entry(journal, "2026-11-30-renamed.md", ["a"], "2026-11-27T23:59:00.000Z", "Late kestrel.")
    pi_entry(journal, "2026-11-28-plain.md", ["a"], "2026-11-28T08:00:00.000Z", "Early kestrel.")
    assert PiReader(journal).mentions("a") == ["2026-11-30-renamed.md", "2026-11-28-plain.md"]
    read = canon("read", "a.py", cwd=project)
    assert "journal: 2026-11-28-plain.md, 2026-11-30-renamed.md" in read.out, read.out
    history = canon("history", "a.py", cwd=project).out
    assert "journal 2026-11-27 2026-11-30-renamed.md" in history, history
    assert history.index("2026-11-28-plain.md") < history.index("2026-11-30-renamed.md")
    found = canon("search", "kestrel", "--journal", cwd=project).out
    assert "journal/2026-11-30-renamed.md (2026-11-27;" in found, found
    assert "2026-11-30;" not in found, found
