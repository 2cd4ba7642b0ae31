"""SPEC §12: one bad instruction file never blocks `canon import`. A glob into `.git/` is
skipped with a sentence, in the dry run and in `--write` alike; a glob whose directory name no
file system takes (300 characters) and a 10,000-character glob name no folder, so each becomes
a rule article that keeps its globs (`applies`), never a path written from them; everything
else is imported, and running it again changes nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.agent.test_cli import canon

BAD = {
    "hooks": ".git/hooks/**",
    "long": "a" * 300 + "/**",
    "huge": "a/" * 5000 + "b.ts",
}


def test_bad_rule_files_are_skipped_and_the_rest_imports(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    rules = tmp_path / ".github/instructions"
    rules.mkdir(parents=True)
    for name, glob in BAD.items():
        text = f'---\napplyTo: "{glob}"\n---\nThe {name} rule.\n'
        (rules / f"{name}.instructions.md").write_text(text)
    (tmp_path / "AGENTS.md").write_text("Run the tests before you push.\n")
    (tmp_path / "src").mkdir()
    (rules / "src.instructions.md").write_text('---\napplyTo: "src/**"\n---\nSource rule.\n')
    dry = canon("import", cwd=tmp_path)
    assert dry.code == 0 and "unexpected" not in dry.err, dry.err
    skipped = [line for line in dry.out.splitlines() if ": skipped, " in line]
    assert [line.split(":")[0] for line in skipped] == [
        ".github/instructions/hooks.instructions.md"
    ]
    assert all(len(line) < 300 for line in skipped)
    wrote = canon("import", "--write", cwd=tmp_path)
    assert wrote.code == 0 and "unexpected" not in wrote.err, wrote.err
    assert [line for line in wrote.out.splitlines() if ": skipped, " in line] == skipped
    articles = tmp_path / ".canon/articles"
    assert sorted(p.relative_to(articles).as_posix() for p in articles.rglob("*.md")) == [
        "rules/agents.md",
        "rules/huge.md",
        "rules/long.md",
        "src.md",
    ]
    again = canon("import", "--write", cwd=tmp_path)
    assert again.code == 0 and "0 articles created, 0 merged, 4 unchanged" in again.out
