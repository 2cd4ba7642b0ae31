"""SPEC §10 diagnostics: whole store at startup (progress), articles and assets, push or pull."""

from __future__ import annotations

from lsp_harness import Session
from lsprotocol import types

WIDGET = ".canon/articles/lib/widget.md"
CONFIG = ".canon/articles/src/core/config.md"


async def test_whole_store_diagnostics_at_startup_with_progress(s: Session):
    """SPEC §10 diagnostics: published for the whole store at startup with work-done progress."""
    await s.checked()
    begins = [
        r
        for reports in s.client.progress_reports.values()
        for r in reports
        if isinstance(r, types.WorkDoneProgressBegin)
    ]
    assert any("checking" in b.title for b in begins)
    diags = await s.until(lambda: s.diagnostics(WIDGET), what="widget diagnostics")
    codes = {d.code for d in diags}
    assert {"orphan", "broken-link"} <= codes
    broken = next(d for d in diags if d.code == "broken-link")
    line = (s.root / WIDGET).read_text().split("\n")[broken.range.start.line]
    start = line.index("[[missing/thing]]")
    assert broken.range.start.character == s.col(line, start)
    stale = await s.until(lambda: s.diagnostics(CONFIG), what="config diagnostics")
    assert any(d.code == "stale" for d in stale)
    if s.pulls:
        assert s.client.diagnostics == {}, "a pull client must not also get pushed diagnostics"


async def test_asset_of_stale_article_gets_hint_on_line_one(s: Session):
    """SPEC §10 diagnostics on assets: default Hint severity, line 1, names the article."""
    await s.checked()
    s.open("src/core/config.ts")
    diags = await s.until(lambda: s.diagnostics("src/core/config.ts"), what="asset diagnostic")
    assert len(diags) == 1
    assert diags[0].severity == types.DiagnosticSeverity.Hint
    assert diags[0].range.start.line == 0
    assert diags[0].message.startswith("governing article src/core/config is stale")
    s.open("src/app.ts")
    assert await s.diagnostics("src/app.ts") == []


async def test_workspace_diagnostic_pull_reports_articles(s: Session):
    """SPEC §10: workspace/diagnostic for pull clients lists every article with findings."""
    if not s.pulls:
        return
    await s.checked()
    report = await s.client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    uris = {item.uri for item in report.items}
    assert s.uri(WIDGET) in uris and s.uri(CONFIG) in uris
