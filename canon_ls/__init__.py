"""canon-ls: the `canon` store and CLI, its MCP server and agent hooks, and the language server."""

INSTALL = "pipx install /path/to/a/clone/of/canon-ls"
"""The one install command every shipped message names (canon-ls is not on PyPI); the editor
and Pi texts carry the same line, which tests/agent/test_install_text.py holds them to."""


def version() -> str | None:
    """The installed package's version; None when running from a bare checkout. Read only
    when asked: importlib.metadata costs start-up time the other paths need not pay."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("canon-ls")
    except PackageNotFoundError:
        return None
