"""Typed settings from `workspace/configuration` (section `canon`) and initializationOptions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core.storage import layout

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

SEVERITIES = ("error", "warning", "information", "hint", "off")


@dataclass(frozen=True)
class Settings:
    root: str | None = None
    mounts: tuple[str, ...] = ()
    inlay_hints_enabled: bool = True
    inlay_hints_max_length: int = 80
    inlay_hints_imports: bool = False  # a hint after each import naming a governed module
    code_lens_enabled: bool = True
    staleness_enabled: bool = True
    asset_diagnostics_severity: str = "hint"
    poll_interval: float = 0.5  # seconds; the own watcher when the client offers none
    behaviour: tuple[tuple[str, Any], ...] = ()  # surface, resurface, retrieval, standout set
    # The client says the workspace is not trusted (VS Code's restricted mode), in the
    # initializationOptions only: the project's canon.toml may not choose root or mounts.
    untrusted: bool = False
    # The client says the workspace is trusted (VS Code's workspace trust), in the
    # initializationOptions only: canon.toml's root and mounts apply without `canon trust`.
    trusted_client: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def store_options(self) -> dict[str, Any]:
        """The options `core.project.open_store` understands."""
        if self.untrusted:
            return {"root": self.root or layout.STORE_DIR, "mounts": list(self.mounts)}
        options = {"root": self.root, "mounts": list(self.mounts)}
        return {key: value for key, value in options.items() if value}

    def open_store(self, project: Path) -> Store:
        """The project's store as the editor opens it."""
        from canon_ls.core.storage.project import open_store

        trust = self.trusted_client or None
        return open_store(project, self.store_options(), explicit_source="editor", trust=trust)

    def options(self) -> dict[str, Any]:
        """All six options the client set: the explicit layer of SPEC §13."""
        return {**self.store_options(), **dict(self.behaviour)}


_KNOWN = {"root", "mounts", "inlayHints", "codeLens", "staleness", "assetDiagnostics"}
_KNOWN |= {"pollInterval", "untrustedWorkspace", *layout.BEHAVIOUR_KEYS}
_KNOWN |= {"server", "trace"}  # client-side keys (how to launch the server, tracing): not ours


def parse(value: object) -> tuple[Settings, list[str]]:
    """Settings from a JSON value, plus one sentence per value that was ignored."""
    errors: list[str] = []
    if value is None:
        return Settings(), errors
    if not isinstance(value, dict):
        kind = type(value).__name__
        return Settings(), [f"canon settings must be an object, got {kind}; using defaults."]
    raw: dict[str, Any] = value
    if isinstance(raw.get("canon"), dict) and not (set(raw) & _KNOWN):
        raw = raw["canon"]  # initializationOptions may nest the section
    values: dict[str, Any] = {}

    root = raw.get("root")
    if root is not None:
        if isinstance(root, str) and root.strip():
            values["root"] = root
        else:
            errors.append("canon.root must be a non-empty string path; using .canon.")
    mounts = raw.get("mounts")
    if mounts is not None:
        if isinstance(mounts, list) and all(isinstance(m, str) and m for m in mounts):
            values["mounts"] = tuple(mounts)
        else:
            errors.append("canon.mounts must be a list of directory paths; using no mounts.")

    inlay = _section(raw, "inlayHints", errors)
    _bool(inlay, "enabled", "canon.inlayHints.enabled", "inlay_hints_enabled", values, errors)
    _bool(inlay, "imports", "canon.inlayHints.imports", "inlay_hints_imports", values, errors)
    max_length = inlay.get("maxLength")
    if max_length is not None:
        if isinstance(max_length, int) and not isinstance(max_length, bool) and max_length >= 8:
            values["inlay_hints_max_length"] = max_length
        else:
            errors.append("canon.inlayHints.maxLength must be an integer of at least 8; using 80.")
    lens = _section(raw, "codeLens", errors)
    _bool(lens, "enabled", "canon.codeLens.enabled", "code_lens_enabled", values, errors)
    stale = _section(raw, "staleness", errors)
    _bool(stale, "enabled", "canon.staleness.enabled", "staleness_enabled", values, errors)
    severity = _section(raw, "assetDiagnostics", errors).get("severity")
    if severity is not None:
        if isinstance(severity, str) and severity.lower() in SEVERITIES:
            values["asset_diagnostics_severity"] = severity.lower()
        else:
            errors.append(
                f"canon.assetDiagnostics.severity must be one of {', '.join(SEVERITIES)}; "
                "using hint."
            )
    poll = raw.get("pollInterval")
    if poll is not None:
        if isinstance(poll, int | float) and not isinstance(poll, bool) and 0.05 <= poll <= 60:
            values["poll_interval"] = float(poll)
        else:
            errors.append("canon.pollInterval must be a number of seconds between 0.05 and 60.")
    if raw.get("untrustedWorkspace") is True:
        values["untrusted"] = True
    elif raw.get("untrustedWorkspace") is False:
        values["trusted_client"] = True
    behaviour = []
    for key in layout.BEHAVIOUR_KEYS:
        if raw.get(key) is None:
            continue  # unset: settings.json, canon.toml or the default decides
        try:
            behaviour.append((key, layout.check(key, raw[key])))
        except layout.OptionError as exc:
            why = str(exc).rstrip(".")
            errors.append(
                f"canon.{key}: {why}; ignored (canon.toml, your settings.json or the default "
                "applies)."
            )
    if behaviour:
        values["behaviour"] = tuple(behaviour)
    unknown = sorted(k for k in raw if k not in _KNOWN)
    if unknown:
        errors.append(f"Unknown canon setting {', '.join(unknown)} ignored.")
    return Settings(**values), errors


def _section(raw: dict[str, Any], key: str, errors: list[str]) -> dict[str, Any]:
    value = raw.get(key)
    if value is not None and not isinstance(value, dict):
        errors.append(f"canon.{key} must be an object; using its defaults.")
        return {}
    return value or {}


def _bool(
    section: dict[str, Any],
    key: str,
    name: str,
    attr: str,
    values: dict[str, Any],
    errors: list[str],
) -> None:
    value = section.get(key)
    if isinstance(value, bool):
        values[attr] = value
    elif value is not None:
        errors.append(f"{name} must be true or false; using the default.")
