"""The six options in the language server (SPEC §13)."""

from __future__ import annotations

from lsprotocol import types

from canon_ls.core.storage import optionview
from canon_ls.core.storage.layout import (
    PROJECT_FILE,
    TOPOLOGY_KEYS,
    project_file,
    resolve,
    settings_file,
)
from canon_ls.lsp.session.state import CanonLanguageServer, Folder


def show_problems(ls: CanonLanguageServer, folder: Folder) -> None:
    """Each new problem of the option files, once, as a warning message."""
    problems = folder.options().problems
    if folder.settings.untrusted:
        plain = resolve(folder.project, trust=True)  # what the file asks for
        chosen = [k for k in TOPOLOGY_KEYS if optionview.source_kind(plain, k) == "project"]
        if chosen:
            problems.append(
                f"{project_file(folder.project)} sets {' and '.join(chosen)}; canon ignores "
                "them until you trust this workspace."
            )
    for problem in problems:
        if problem not in folder.problems_shown:
            folder.problems_shown.add(problem)
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=problem)
            )


def is_option_file(folder: Folder, path: object) -> bool:
    return path in (folder.project / PROJECT_FILE, settings_file())


def reread_all(ls: CanonLanguageServer) -> None:
    """The user's settings.json changed: every folder reads its options again."""
    for folder in list(ls.folders.values()):
        reread_options(ls, folder)


def reread_options(ls: CanonLanguageServer, folder: Folder) -> None:
    """canon.toml or settings.json changed on disk."""
    options = folder.options()
    store = folder.store
    now = store.options if store is not None else None
    folder.problems_shown.intersection_update(options.problems)  # a fixed problem may return
    if now is None or (now["root"], now["mounts"]) != (options["root"], options["mounts"]):
        folder.open()
        if folder.error:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=folder.error)
            )
        if folder.serving:
            folder.check.schedule()
        ls.watcher.update()  # a moved root is watched instead
        ls.notifier.schedule()
    elif store is not None:
        store.options = options
    show_problems(ls, folder)


def settings_text(folder: Folder) -> str:
    """`canon.settings`: the `canon settings` lines for this folder, then its problems."""
    options = folder.options()
    lines = optionview.describe(options)
    lines += [f"warning: {problem}" for problem in options.problems]
    return "\n".join(lines)
