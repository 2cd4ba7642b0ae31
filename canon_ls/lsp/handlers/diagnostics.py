"""Diagnostics for articles (core findings) and assets (stale governing article), SPEC §10."""

from __future__ import annotations

import time

from lsprotocol import types
from pygls.uris import from_fs_path

from canon_ls.lsp.session import typed
from canon_ls.lsp.session.state import CanonLanguageServer, Folder, Where
from canon_ls.lsp.startup.turns import yield_to_requests
from canon_ls.lsp.wire import convert
from canon_ls.lsp.wire.convert import Text

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
PUSH_SLICE = 0.00025  # seconds of publishing between yields (10 articles took ~3 ms: p99)


def for_uri(ls: CanonLanguageServer, uri: str) -> list[types.Diagnostic]:
    where = ls.where(uri)
    if where is None or where.folder.store is None:
        return []
    if where.kind == "article":
        return for_article(ls, where.folder, where.address, uri)
    if where.kind == "asset":
        return for_asset(ls, where)
    store = where.folder.store
    if where.kind == "store" and store is not None and where.path == store.schema_file:
        return for_article(ls, where.folder, "", uri)
    return []


def for_article(
    ls: CanonLanguageServer, folder: Folder, address: str, uri: str | None = None
) -> list[types.Diagnostic]:
    uri = uri or folder.finding_uri(address)
    text = ls.text_of(uri) or Text("")
    findings = folder.signals.findings.get(address)
    if uri in folder.typing.found:  # open with unsaved text: its findings (SPEC §10)
        found = typed.findings(folder, address, uri, text.source, text.version or 0)
        findings = findings if found is None else found
    if not findings:
        return []
    codec = ls.workspace.position_codec
    return [
        types.Diagnostic(
            range=convert.clamped_span(codec, text, f.line, f.start, f.end),
            message=f.message,
            severity=SEVERITY.get(f.severity, types.DiagnosticSeverity.Information),
            code=f.code,
            source="canon",
        )
        for f in findings
    ]


def for_asset(ls: CanonLanguageServer, where: Where) -> list[types.Diagnostic]:
    settings = where.folder.settings
    severity = settings.asset_diagnostics_severity
    if severity == "off" or not settings.staleness_enabled or not where.folder.signals.stale:
        return []  # nothing stale (or not known yet): no need to resolve, nor to load the store
    store = where.folder.store
    governing = store.governing(where.address) if store is not None else None
    if not governing or governing not in where.folder.signals.stale:
        return []
    text = ls.text_of(from_fs_path(str(where.path)) or "") or Text("")
    evidence = where.folder.signals.evidence.get(governing)
    if evidence is not None:  # SPEC §9.1: the same one line as read, check and the hover
        message = f"governing article {governing} is {evidence.line()}"
    else:  # the short reason until the next pass brings the evidence; it names its subject
        reason = where.folder.signals.stale[governing]
        if reason.startswith(governing + " "):
            message = f"governing article {reason}"
        else:
            message = f"governing article {governing} is stale: {reason}"
    return [
        types.Diagnostic(
            range=types.Range(
                start=convert.TOP.start, end=convert.line_end(ls.workspace.position_codec, text, 0)
            ),
            message=message,
            severity=SEVERITY[severity],
            code="stale-governing",
            source="canon",
            data={"address": governing},
        )
    ]


def publish(ls: CanonLanguageServer, uri: str, diagnostics: list[types.Diagnostic]) -> None:
    """Push one document's diagnostics; empty lists are sent only to clear earlier ones."""
    if not diagnostics and uri not in ls.notifier.published:
        return
    doc = ls.workspace.text_documents.get(uri)
    version = doc.version if doc is not None else None
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )
    if diagnostics:
        ls.notifier.published.add(uri)
    else:
        ls.notifier.published.discard(uri)


async def push_folder(
    ls: CanonLanguageServer, folder: Folder, only: set[str] | None = None
) -> None:
    """Publish the findings of every article of `folder`."""
    live = set()
    resume = time.perf_counter()
    for address in list(folder.signals.findings):
        uri = folder.finding_uri(address)
        live.add(uri)
        if only is None or address in only:
            publish(ls, uri, for_article(ls, folder, address, uri))
        if time.perf_counter() - resume > PUSH_SLICE:
            await yield_to_requests()
            resume = time.perf_counter()
    for uri in list(ls.notifier.published):
        where = None if uri in live else ls.where(uri)
        gone = where is not None and where.folder is folder and where.kind in ("article", "store")
        # (an edit between two turns may have published this one since)
        if gone and where is not None and not folder.signals.findings.get(where.address or ""):
            publish(ls, uri, [])
        if time.perf_counter() - resume > PUSH_SLICE:
            await yield_to_requests()
            resume = time.perf_counter()
    push_open_assets(ls)


def push_open_assets(ls: CanonLanguageServer) -> None:
    for uri in list(ls.workspace.text_documents):
        where = ls.where(uri)
        if where is not None and where.kind == "asset":
            publish(ls, uri, for_asset(ls, where))


# -- pull ------------------------------------------------------------------------------------
def result_id(ls: CanonLanguageServer, uri: str) -> str:
    where = ls.where(uri)
    generation = where.folder.signals.generation if where is not None else 0
    doc = ls.workspace.text_documents.get(uri)
    return f"{generation}.{doc.version if doc is not None else '-'}"


def on_document_diagnostic(
    ls: CanonLanguageServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    rid = result_id(ls, uri)
    if params.previous_result_id == rid:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
    return types.RelatedFullDocumentDiagnosticReport(items=for_uri(ls, uri), result_id=rid)


def on_workspace_diagnostic(
    ls: CanonLanguageServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    previous = {p.uri: p.value for p in params.previous_result_ids or []}
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for folder in list(ls.folders.values()):
        for address in sorted(folder.signals.findings):
            uri = folder.finding_uri(address)
            rid = result_id(ls, uri)
            if previous.get(uri) == rid:
                unchanged = types.WorkspaceUnchangedDocumentDiagnosticReport
                items.append(unchanged(uri=uri, version=None, result_id=rid))
                continue
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri,
                    version=None,
                    items=for_article(ls, folder, address, uri),
                    result_id=rid,
                )
            )
    reported = {item.uri for item in items}
    for uri in previous:  # articles whose findings went away: clear them explicitly
        if uri not in reported:
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, version=None, items=[], result_id=result_id(ls, uri)
                )
            )
    return types.WorkspaceDiagnosticReport(items=items)
