"""Open a project's Store with its resolved options (SPEC §2, §8, §13)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from canon_ls.core.storage.layout import OPTION_KEYS, OptionError, Options, find_project, resolve
from canon_ls.core.storage.store import BadInput, Store

__all__ = ["OPTION_KEYS", "OptionError", "find_project", "open_store"]


def open_store(
    project: Path,
    options: Mapping[str, Any] | None = None,
    *,
    explicit_source: str = "flag",
    trust: bool | None = None,
) -> Store:
    """A Store for `project` with SPEC §13's options: `options` (explicit) over settings.json,
    canon.toml and defaults, kept in `store.options`. Creates nothing on disk."""
    resolved: Options = resolve(
        Path(project), options, explicit_source=explicit_source, trust=trust
    )
    try:
        store = Store(resolved.project, root=resolved["root"], mounts=resolved["mounts"] or ())
    except BadInput as exc:
        raise OptionError(str(exc)) from None
    store.options = resolved
    return store
