"""How the server starts its helper processes (whole-store check, search worker, history).

They run with the project as working directory, so `python -m` would put the project first on
`sys.path` and a repository carrying its own `canon_ls/` package would run as code (SPEC §12).
`-P` keeps the working directory off `sys.path`; PYTHONPATH still works (the VS Code bundle).
"""

from __future__ import annotations

import sys


def python_module(module: str, *args: str) -> list[str]:
    """argv running `module` of this installation in a child Python."""
    return [sys.executable, "-P", "-m", module, *args]
