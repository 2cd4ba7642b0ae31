"""canon-ls: the `canon` store and CLI, its MCP server and agent hooks, and the language server."""

INSTALL = "pipx install git+https://github.com/canon-ls/canon-ls"
"""The one install command every shipped message names (canon-ls is not on PyPI); the editor
and Pi texts carry the same line, which tests/agent/test_install_text.py holds them to."""
