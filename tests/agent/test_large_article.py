"""SPEC §12: an article's links cost linear time. A 3.7 MB article of 140k broken links (a
hostile pull request) is checked by `canon check` in seconds; placed link by link from the
start of the body it took minutes, past this test's timeout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.agent.test_cli import canon, write_article

LINKS = 140_000


def test_check_of_an_article_full_of_broken_links(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    body = "".join(f"see [[missing/link{i}]]\n" for i in range(LINKS))
    write_article(tmp_path, "src/big", f"---\ncapsule: Big.\n---\n# Big\n\n{body}")
    run = canon("check", cwd=tmp_path)
    lines = run.out.splitlines()
    assert f"{LINKS + 1} warnings" in lines[-1], lines[-1]  # and one: the body is long
    last = f".canon/articles/src/big.md:{LINKS + 5}:5: warning: Broken wikilink "
    assert lines[-2].startswith(f"{last}[[missing/link{LINKS - 1}]]"), lines[-2]
