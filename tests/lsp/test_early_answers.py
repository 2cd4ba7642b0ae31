"""Issue 15, SPEC §10 hover and §4 resolution: the first hovers and inlay hints of a session
are answered from the article files before the store has read every article, and they are
the answers the loaded store gives."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_harness import (
    FIRST_LINE,
    SERVER_COMMAND,
    SERVER_ENV,
    Session,
    build_workspace,
    folder_params,
    text_of,
    write,
)
from lsp_harness import article as article_text
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from canon_ls.core.storage.disk_view import DiskView
from canon_ls.core.storage.project import open_store


def test_the_disk_view_resolves_as_the_loaded_store(tmp_path: Path):
    root = build_workspace(tmp_path / "proj")
    (root / ".canon" / "articles" / "lib" / "widgets.md").mkdir(parents=True)  # not a file
    store = open_store(root)
    view = DiskView(store)
    addresses = [
        "src/core/config",
        "src/core/util",
        "src/app",
        "src",
        "lib/widgets/widget",
        "lib/widget",
        "lib/keep",
        "docs/readme",
        "nowhere/at/all",
        "../outside",
    ]
    answers = {a: (view.governing(a), view.article(a)) for a in addresses}
    names = view.journal_names("src/core/config")
    assert not store.loaded  # nothing above read the whole store
    for address, (governing, article) in answers.items():
        assert governing == store.governing(address), address
        assert article == store.article(address), address
    assert names == store.journal_names("src/core/config") == ["2026-01-02-config.md"]
    assert store.loaded


async def test_the_first_hover_is_the_one_after_the_load(tmp_path: Path):
    """Sent the moment the session starts, hover and inlay answer what they answer once the
    store is loaded and the startup check has run (title, capsule, date, journal, link)."""
    root = build_workspace(tmp_path / "proj")
    uri = (root / "src/core/config.ts").as_uri()
    config = ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV)
    client = await config.start(None)
    try:
        await client.initialize_session(folder_params(root))
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri,
                    language_id="typescript",
                    version=1,
                    text=(root / "src/core/config.ts").read_text(encoding="utf-8"),
                )
            )
        )
        at = FIRST_LINE.index("src/app.ts") + 3

        article = (root / ".canon/articles/src.md").as_uri()
        link = next(
            (i, line.index("[[src/core/config]]") + 4)
            for i, line in enumerate((root / ".canon/articles/src.md").read_text().split("\n"))
            if "[[src/core/config]]" in line
        )

        async def ask() -> tuple[str, str, list[str], list[str], str]:
            own, token, hints, lenses, linked = await asyncio.gather(
                client.text_document_hover_async(
                    types.HoverParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        position=types.Position(line=0, character=3),
                    )
                ),
                client.text_document_hover_async(
                    types.HoverParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        position=types.Position(line=0, character=at),
                    )
                ),
                client.text_document_inlay_hint_async(
                    types.InlayHintParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        range=types.Range(
                            start=types.Position(line=0, character=0),
                            end=types.Position(line=1, character=0),
                        ),
                    )
                ),
                client.text_document_code_lens_async(
                    types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
                ),
                client.text_document_hover_async(  # a wikilink inside an article file
                    types.HoverParams(
                        text_document=types.TextDocumentIdentifier(uri=article),
                        position=types.Position(line=link[0], character=link[1]),
                    )
                ),
            )
            titles = [lens.command.title for lens in lenses or [] if lens.command]
            hints_ = [str(h.label) for h in hints or []]
            return text_of(own), text_of(token), hints_, titles, text_of(linked)

        first = await ask()
        assert "Loads layered config; env beats file." in first[0]
        assert "2026-01-02-config.md" in first[0]
        assert "`src` governs `src/app`" in first[1]
        assert first[2] == ["Loads layered config; env beats file."]
        assert first[3][0] == "canon: src/core/config · updated 2026-01-01 · 1 journal"
        assert "Loads layered config; env beats file." in first[4]
        session = Session(client, root, "visual-studio-code", "utf-16")
        await session.checked()  # the store is loaded by now, and the check has landed
        later = await ask()
        assert "**stale**" in later[0]  # what only the check knows (maybe not yet at first)
        assert (without_stale(later[0]), *later[1:3]) == (without_stale(first[0]), *first[1:3])
        assert later[3][0] == first[3][0]  # the stale lens may come second, once known
        assert without_stale(later[4]) == without_stale(first[4])
    finally:
        await client.shutdown_session()


def without_stale(hover: str) -> str:
    return "\n\n".join(p for p in hover.split("\n\n") if not p.startswith("**stale**"))


def test_opening_a_file_before_the_check_reads_no_article(tmp_path: Path):
    """Issue 15: a document opened before the whole-store check has landed gets its (empty)
    asset diagnostics without the store reading every article: nothing is stale yet."""
    from canon_ls.lsp.handlers import diagnostics
    from canon_ls.lsp.session.state import CanonLanguageServer

    root = build_workspace(tmp_path / "proj")
    ls = CanonLanguageServer()
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.store is not None
    assert diagnostics.for_uri(ls, (root / "src/core/config.ts").as_uri()) == []
    assert not folder.store.loaded


def test_the_first_code_lens_reads_one_article(tmp_path: Path, monkeypatch):
    """Issue 15: an editor asks for code lenses as it opens a file; before the store has
    loaded, the lens comes from the article files (the load itself runs in steps on the
    event loop, held back here so the test can see that the lens did not need it)."""
    from canon_ls.lsp.handlers import lens
    from canon_ls.lsp.session.state import CanonLanguageServer
    from canon_ls.lsp.startup import early

    monkeypatch.setattr(early.Load, "soon", lambda self, journal=False: None)
    root = build_workspace(tmp_path / "proj")
    ls = CanonLanguageServer()
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.store is not None
    params = types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=(root / "src/core/config.ts").as_uri())
    )
    lenses = lens.on_code_lens(ls, params) or []
    assert [x.command.title for x in lenses if x.command] == [
        "canon: src/core/config · updated 2026-01-01 · 1 journal"
    ]
    assert not folder.store.loaded


LOADED = "canon loaded the store of"


async def test_hovers_while_the_store_loads_in_steps(tmp_path: Path):
    """Issue 15: the store loads in small steps on the event loop, so hovers sent one after
    another while it loads are answered between its steps (several before the load is done,
    not all after it), from the article files, and each is the answer of the loaded store."""
    root = build_workspace(tmp_path / "proj")
    for i in range(4000):  # enough articles that loading takes many turns of the loop
        write(
            root,
            f".canon/articles/gen/d{i:04}.md",
            article_text(f"Generated {i}.", "2026-01-01", ""),
        )
    uri = (root / "src/core/config.ts").as_uri()
    config = ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV)
    client = await config.start(None)
    try:
        await client.initialize_session(folder_params(root))

        def loaded_yet() -> bool:
            return any(LOADED in m.message for m in client.log_messages)

        async def hover() -> str:
            return text_of(
                await client.text_document_hover_async(
                    types.HoverParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        position=types.Position(line=0, character=3),
                    )
                )
            )

        async def until_loaded() -> tuple[list[str], list[str]]:
            during, after = [], []
            while not after:  # one hover after the log line says the load is done
                (after if loaded_yet() else during).append(await hover())
            return during, after

        during, after = await asyncio.wait_for(until_loaded(), timeout=120)
        assert len(during) >= 3, "hovers waited for the whole load"
        assert "Loads layered config; env beats file." in after[0]
        assert all(without_stale(text) == without_stale(after[0]) for text in during)
    finally:
        await client.shutdown_session()


def test_the_load_reads_no_journal_and_then_warms_what_references_read(tmp_path: Path):
    """Issue 15: the load itself (what the check's landing awaits) reads no journal entry.
    Issue 40 item 1: once it is done, the folder builds the backlinks index and groups the
    journal by subject in steps, without waiting for the whole-store check to land (seconds at
    10k articles): the first references read 5k entries itself (0.9 s of a 0.94 s answer)."""
    from canon_ls.lsp.session.state import CanonLanguageServer

    root = build_workspace(tmp_path / "proj")
    ls = CanonLanguageServer()
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.store is not None
    assert folder.load is not None
    index = folder.store
    warmed: list[bool] = []

    async def load_then_warm() -> None:
        load = folder.load
        assert load is not None
        task = load.soon()
        assert task is not None
        while not task.done():
            assert index._journal._entries == {}  # the load's steps read no entry
            await asyncio.sleep(0)
        assert folder.warming is not None, "nothing warmed after the load"
        await folder.warming
        warmed.append(True)

    asyncio.run(load_then_warm())
    assert warmed and folder.store.loaded
    assert index._links is not None and index._links.ready
    assert index._journal._entries != {}  # grouped before anything asked
    assert folder.store.journal_names("src/core/config") == ["2026-01-02-config.md"]


def test_an_article_read_from_disk_is_kept_while_its_file_holds(tmp_path: Path, monkeypatch):
    """Issue 15 (hover p99 during the start-up check): until the store loads, hovers resolve
    from the article files, and an article read once is kept for the next request while its
    file's stat key holds (settled); an edit is read again at once."""
    from canon_ls.core.storage import article as art
    from canon_ls.lsp.session.state import CanonLanguageServer, DiskWhere
    from canon_ls.lsp.startup import early

    monkeypatch.setattr(early.Load, "soon", lambda self, journal=False: None)
    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)  # every file settled
    parsed: list[str] = []
    parse = art.parse

    def counting(data, address, *args, **kwargs):
        parsed.append(address)
        return parse(data, address, *args, **kwargs)

    monkeypatch.setattr(art, "parse", counting)
    root = build_workspace(tmp_path / "proj")
    ls = CanonLanguageServer()
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.store is not None
    uri = (root / "src/core/config.ts").as_uri()

    def capsule() -> str:
        where = ls.view(uri)
        assert isinstance(where, DiskWhere)
        article = where.reader.article("src/core/config")
        return article.capsule if article is not None else ""

    assert capsule() == "Loads layered config; env beats file."
    assert capsule() == "Loads layered config; env beats file."
    assert parsed.count("src/core/config") == 1  # kept for the second request
    write(
        root,
        ".canon/articles/src/core/config.md",
        article_text("Edited on disk.", "2026-01-01", "# Config\n"),
    )
    assert capsule() == "Edited on disk."
    assert parsed.count("src/core/config") == 2
    assert not folder.store.loaded


def test_a_hover_reads_and_queues_what_it_found_to_the_folder(tmp_path: Path):
    """Issue 26 (read requests cannot write): a hover whose article changed on disk answers
    from the new file, but the re-check and the client's notice wait for the folder's owner,
    which takes the change on a later turn of the loop."""
    from canon_ls.lsp.handlers import hover
    from canon_ls.lsp.session import lifecycle
    from canon_ls.lsp.session.state import CanonLanguageServer

    root = build_workspace(tmp_path / "proj")
    ls = CanonLanguageServer()
    lifecycle.create(ls)
    list(  # pygls' own initialize (a generator): the workspace a handler reads documents from
        ls.protocol.lsp_initialize(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri())
        )
    )
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.load is not None
    load = folder.load
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=(root / "src/core/config.ts").as_uri()),
        position=types.Position(line=0, character=3),
    )

    async def scenario() -> None:
        await load.ready()
        write(
            root,
            ".canon/articles/src/core/config.md",
            article_text("Edited on disk.", "2026-01-01", "# Config\n"),
        )
        before = folder.signals.generation
        answer = hover.on_hover(ls, params)
        assert answer is not None and "Edited on disk." in text_of(answer)
        assert folder.signals.generation == before  # nothing re-checked from the read
        assert folder.queued == {"src/core/config"}
        async with asyncio.timeout(10):
            while folder.queued or folder.signals.generation == before:
                await asyncio.sleep(0)

    asyncio.run(scenario())


def test_the_journal_is_read_once_for_the_early_hovers(tmp_path: Path, monkeypatch):
    """A hover before the load named the article's journal entries by reading every entry
    (40 ms a hover at 500 entries); the headings are now kept while the journal's folder is
    unchanged, and a new entry (a new file: the folder changes) is seen at once."""
    from canon_ls.core.storage import freshness, fsio
    from canon_ls.lsp.startup.early import KeptView, Load

    monkeypatch.setattr(freshness, "RACY_NS", 0)  # the folder counts as settled at once
    root = build_workspace(tmp_path / "proj")
    store = open_store(root)
    load = Load(store, lambda coro, name: coro.close(), lambda: None)  # type: ignore[arg-type,return-value]
    reads = []
    real = fsio.read_regular

    def counted(*args, **kwargs):
        reads.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(fsio, "read_regular", counted)
    first = KeptView(load).journal_names("src/core/config")
    read_once = len(reads)
    assert KeptView(load).journal_names("src/core/config") == first == ["2026-01-02-config.md"]
    assert len(reads) == read_once  # no entry read again
    write(
        root,
        ".canon/journal/2026-01-03-more.md",
        "---\nsubject: src/core/config\n---\nMore.\n",
    )
    assert KeptView(load).journal_names("src/core/config") == [
        "2026-01-03-more.md",
        "2026-01-02-config.md",
    ]
    assert not store.loaded
