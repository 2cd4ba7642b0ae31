"""Layered configuration: defaults, then feedlet.toml, then FEEDLET_* environment variables."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass(frozen=True)
class Config:
    db_path: Path = Path("feedlet.sqlite3")
    fetch_timeout_s: float = 10.0
    retry_budget: int = 3
    language: str = "en"


def load(path: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    config = Config()
    if path is not None and path.exists():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        config = replace(config, **{k: v for k, v in data.items() if hasattr(config, k)})
    env = os.environ if environ is None else environ
    if "FEEDLET_DB" in env:
        config = replace(config, db_path=Path(env["FEEDLET_DB"]))
    if "FEEDLET_LANG" in env:
        config = replace(config, language=env["FEEDLET_LANG"])
    return config
