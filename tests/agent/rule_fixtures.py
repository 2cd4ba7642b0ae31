"""Fixture repositories holding other agents' path-scoped instruction files, written by hand
from each host's documentation (the keys and value shapes each host reads):

- Claude Code: `.claude/rules/**/*.md`, front matter `paths:` (a YAML list of globs); no
  `paths` means the rule loads always.
- Cursor: `.cursor/rules/*.mdc`, front matter `description`, `globs` (comma-separated string or
  list), `alwaysApply` (boolean).
- GitHub Copilot: `.github/instructions/*.instructions.md`, front matter `applyTo` (one string,
  globs separated by commas).
- Kiro: `.kiro/steering/*.md`, front matter `inclusion: always|fileMatch|manual|auto`, with
  `fileMatchPattern` for fileMatch; no front matter means always.
- AGENTS.md / CLAUDE.md / GEMINI.md: plain Markdown, one per directory.
- `.github/copilot-instructions.md` (Copilot, repository-wide) and `.cursorrules` (Cursor's
  older single file): plain text for the whole project.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

# Each format: (file, its text, the address it becomes, scope, the capsule, a line of its body)
FORMATS: dict[str, tuple[str, str, str, str, str, str]] = {
    "claude-rules": (
        ".claude/rules/api.md",
        '---\npaths:\n  - "src/api/**"\n---\n'
        "# API handlers\n\nEvery handler must validate its input with zod.\n",
        "src/api",
        "asset",
        "Every handler must validate its input with zod.",
        "# API handlers",
    ),
    "claude-rules-always": (
        ".claude/rules/style/naming.md",
        "# Naming\n\nFiles are kebab-case.\n",
        "rules/style/naming",
        "rule",
        "Files are kebab-case.",
        "Files are kebab-case.",
    ),
    "cursor": (
        ".cursor/rules/web.mdc",
        "---\ndescription: React components in src/web; hooks never fetch.\n"
        "globs: src/web/**,src/web/**/*\nalwaysApply: false\n---\n"
        "Use function components only.\n",
        "src/web",
        "asset",
        "React components in src/web; hooks never fetch.",
        "Use function components only.",
    ),
    "cursor-always": (
        ".cursor/rules/commits.mdc",
        "---\ndescription: Commit messages\nglobs:\nalwaysApply: true\n---\n"
        "Write commit subjects in the imperative.\n",
        "rules/commits",
        "rule",
        "Commit messages",
        "Write commit subjects in the imperative.",
    ),
    "copilot": (
        ".github/instructions/typescript.instructions.md",
        '---\napplyTo: "**/*.ts,**/*.{tsx,mts}"\n---\nPrefer `unknown` over `any`.\n',
        "rules/typescript",
        "rule",
        "Prefer `unknown` over `any`.",
        "Prefer `unknown` over `any`.",
    ),
    "kiro": (
        ".kiro/steering/db.md",
        '---\ninclusion: fileMatch\nfileMatchPattern: "src/db/**"\n---\n'
        "# Migrations\n\nMigrations are append-only; never edit a released one.\n",
        "src/db",
        "asset",
        "Migrations are append-only; never edit a released one.",
        "never edit a released one",
    ),
    "kiro-manual": (
        ".kiro/steering/release.md",
        "---\ninclusion: manual\n---\nTag releases from main only.\n",
        "rules/release",
        "rule",
        "Tag releases from main only.",
        "Tag releases from main only.",
    ),
    "agents-md": (
        "packages/web/AGENTS.md",
        "# Web package\n\nBuild with vite; never import from packages/api directly.\n",
        "packages/web",
        "asset",
        "Build with vite; never import from packages/api directly.",
        "never import from packages/api",
    ),
    "claude-md": (
        "src/db/CLAUDE.md",
        "Run `pnpm db:test` after touching a query.\n",
        "src/db",
        "asset",
        "Run `pnpm db:test` after touching a query.",
        "pnpm db:test",
    ),
    "gemini-md": (
        "tools/GEMINI.md",
        "Scripts here are POSIX sh, not bash.\n",
        "tools",
        "asset",
        "Scripts here are POSIX sh, not bash.",
        "POSIX sh",
    ),
    "copilot-instructions": (
        ".github/copilot-instructions.md",
        "# Repository\n\nAll public functions carry JSDoc.\n",
        "rules/copilot",
        "rule",
        "All public functions carry JSDoc.",
        "JSDoc",
    ),
    "cursorrules": (
        ".cursorrules",
        "Answer in British English.\n",
        "rules/cursorrules",
        "rule",
        "Answer in British English.",
        "British English",
    ),
    "root-agents-md": (
        "AGENTS.md",
        "# Project\n\nRun the tests with `pnpm test` before every commit.\n",
        "rules/agents",
        "rule",
        "Run the tests with `pnpm test` before every commit.",
        "pnpm test",
    ),
}

ASSETS = (
    "src/api/users.ts",
    "src/api/schema.json",
    "src/web/app.tsx",
    "src/db/001-init.sql",
    "packages/web/index.ts",
    "tools/release.sh",
)


def make_project(root: Path, formats: list[str] | None = None, git: bool = True) -> Path:
    """A project with the asset files and the instruction files of `formats` (all by default)."""
    for relpath in ASSETS:
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    for name in formats if formats is not None else list(FORMATS):
        relpath, text = FORMATS[name][:2]
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root
