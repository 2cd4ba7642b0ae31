"""SPEC §13 in the language server: the client's `workspace/configuration` (section `canon`)
is the explicit layer over the user's settings.json and the project's canon.toml; a bad key in
those files is a warning message; `canon.settings` shows each value and its source; a changed
canon.toml is followed without a restart. The real server process, a temporary
XDG_CONFIG_HOME, one client profile (VS Code)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import SERVER_COMMAND, SERVER_ENV, article, build_workspace, poll, write
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


class Editor:
    def __init__(self, client: LanguageClient, root: Path, xdg: Path) -> None:
        self.client, self.root, self.xdg = client, root, xdg

    async def command(self, name: str, argument: dict[str, Any] | None = None) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[argument or {}])
        )

    async def settings(self) -> dict[str, str]:
        text = await self.command("canon.settings")
        rows = {}
        for line in str(text).splitlines():
            if " = " in line and not line.startswith("warning:"):
                key, rest = line.split(" = ", 1)
                rows[key] = " ".join(rest.split())
        return rows

    def messages(self) -> list[str]:
        return [m.message for m in self.client.messages]

    async def until(self, check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
        def failure() -> str:
            logs = [m.message for m in self.client.log_messages][-10:]
            return f"timed out waiting for {what}; log: {logs}"

        return await poll(check, timeout, failure, every=0.05)


@pytest.fixture
def xdg(tmp_path: Path) -> Path:
    return tmp_path / "xdg"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    write(root, "memory/articles/src/app.md", article("Moved store app.", "2026-11-01", "# app\n"))
    return root


@pytest.fixture
def canon_settings() -> dict[str, Any]:
    return {}


@pytest.fixture
def option_files() -> tuple[str | None, str | None]:
    """(canon.toml, settings.json) written before the server starts; None: no such file."""
    return None, None


@pytest.fixture
def init_options() -> dict[str, Any] | None:
    return None


@pytest.fixture
async def editor(
    workspace: Path,
    xdg: Path,
    canon_settings: dict[str, Any],
    option_files: tuple[str | None, str | None],
    init_options: dict[str, Any] | None,
) -> AsyncIterator[Editor]:
    toml, user = option_files
    if toml is not None:
        project_file(workspace, toml)
    if user is not None:
        user_file(xdg, user)
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, server_env={**SERVER_ENV, "XDG_CONFIG_HOME": str(xdg)}
    )
    client = await config.start(None)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(client: LanguageClient, params: types.RegistrationParams) -> None:
        return None  # file events come from the test (didChangeWatchedFiles)

    client.set_configuration(canon_settings, section="canon")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="proj")],
            initialization_options=init_options,
        )
    )
    try:
        yield Editor(client, workspace, xdg)
    finally:
        await client.shutdown_session()


def project_file(workspace: Path, text: str) -> None:
    (workspace / "canon.toml").write_text(text, encoding="utf-8")


def user_file(xdg: Path, text: str) -> None:
    (xdg / "canon").mkdir(parents=True, exist_ok=True)
    (xdg / "canon" / "settings.json").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("canon_settings", "option_files"),
    [
        (
            {"standout": 3, "root": "memory", "surface": None},
            ('root = ".canon"\nstandout = 2\nresurface = false\n', '{"surface": false}'),
        )
    ],
)
async def test_spec_13_workspace_configuration_wins_over_canon_toml(
    editor: Editor, workspace: Path
) -> None:
    """Written before the server starts: canon.toml says root .canon, standout 2 and
    resurface false; settings.json says surface false; the editor says root memory and
    standout 3 and leaves surface unset (null)."""

    async def configured() -> dict[str, str] | None:
        rows = await editor.settings()
        return rows if rows.get("root", "").endswith("editor settings") else None

    rows = await editor.until(configured, "the editor's settings applied")
    assert rows["standout"] == "3.0 editor settings"
    assert rows["root"] == '"memory" editor settings'
    assert rows["resurface"].startswith("false project file") and "canon.toml" in rows["resurface"]
    assert rows["surface"].startswith("false user settings")
    assert rows["retrieval"] == '"none" default'
    mapped = await editor.command("canon.map")
    assert "src/app: Moved store app." in str(mapped)  # the store the editor chose


@pytest.mark.parametrize("option_files", [('retrieval = "fuzzy"\n', '{"root": "elsewhere"}')])
async def test_spec_13_bad_option_files_are_warning_messages(
    editor: Editor, workspace: Path, xdg: Path
) -> None:
    def both() -> bool:
        messages = editor.messages()
        toml = [m for m in messages if str(workspace / "canon.toml") in m and "'retrieval'" in m]
        user = [m for m in messages if str(xdg / "canon" / "settings.json") in m and "'root'" in m]
        return bool(toml and user)

    await editor.until(both, "a message per bad option file")
    rows = await editor.settings()
    assert rows["retrieval"] == '"none" default'  # the default applies meanwhile
    assert rows["root"] == '".canon" default'
    text = str(await editor.command("canon.settings"))
    assert text.count("warning: ") == 2


@pytest.mark.parametrize("canon_settings", [{"standout": 0.5, "retrieval": "lexical"}])
async def test_spec_13_bad_editor_value_is_a_message_and_ignored(editor: Editor) -> None:
    await editor.until(
        lambda: any("canon.standout" in m and "at least 1" in m for m in editor.messages()),
        "the standout message",
    )

    async def configured() -> dict[str, str] | None:
        rows = await editor.settings()
        return rows if rows.get("retrieval", "").endswith("editor settings") else None

    rows = await editor.until(configured, "the editor's settings applied")
    assert rows["standout"] == "1.4 default"
    assert rows["retrieval"] == '"lexical" editor settings'


async def test_spec_13_a_changed_canon_toml_is_followed(editor: Editor, workspace: Path) -> None:
    rows = await editor.until(editor.settings, "canon.settings")
    assert rows["root"] == '".canon" default'
    project_file(workspace, 'root = "memory"\nsurface = false\n')
    editor.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(workspace / "canon.toml").as_uri(), type=types.FileChangeType.Created
                )
            ]
        )
    )

    async def moved() -> bool:
        return "Moved store app." in str(await editor.command("canon.map"))

    await editor.until(moved, "the store canon.toml names")
    rows = await editor.settings()
    assert rows["surface"].startswith("false project file")
    project_file(workspace, "surface = [\n")  # broken: one message, the defaults apply
    editor.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(workspace / "canon.toml").as_uri(), type=types.FileChangeType.Changed
                )
            ]
        )
    )
    await editor.until(
        lambda: any("not valid TOML" in m for m in editor.messages()), "the TOML message"
    )
    assert "Moved store app." not in str(await editor.command("canon.map"))


@pytest.mark.parametrize("option_files", [(None, "{}")])
async def test_spec_13_a_changed_user_settings_file_is_followed(editor: Editor, xdg: Path) -> None:
    """settings.json lives outside the workspace: no client event names it; the server's own
    watcher (its directory, when it exists) does."""
    rows = await editor.until(editor.settings, "canon.settings")
    await editor.until(
        lambda: any("watches the project folders" in m.message for m in editor.client.log_messages),
        "the watcher started",
    )
    assert rows["standout"] == "1.4 default"
    user_file(xdg, '{"standout": 2, "surface": "loud"}')

    async def followed() -> dict[str, str] | None:
        rows = await editor.settings()
        return rows if rows["standout"].startswith("2.0 user settings") else None

    await editor.until(followed, "the new settings.json")
    await editor.until(
        lambda: any("'surface'" in m and "settings.json" in m for m in editor.messages()),
        "the message about surface",
    )


@pytest.mark.parametrize(
    ("init_options", "canon_settings", "option_files"),
    [({"untrustedWorkspace": True}, {"untrustedWorkspace": False}, ('root = "memory"\n', None))],
)
async def test_untrusted_workspace_canon_toml_cannot_move_the_store(
    editor: Editor, workspace: Path
) -> None:
    """VS Code's restricted mode keeps a workspace from choosing root and mounts in its
    settings; the project's canon.toml cannot choose them either until it is trusted (a
    workspace setting cannot undo that)."""
    await editor.until(
        lambda: any(
            str(workspace / "canon.toml") in m and "trust this workspace" in m
            for m in editor.messages()
        ),
        "the message naming canon.toml",
    )
    mapped = str(await editor.command("canon.map"))
    assert "Moved store app." not in mapped and "src/core/config: Loads" in mapped
    rows = await editor.settings()
    assert rows["root"] == '".canon" editor settings'


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """Another project's store beside the workspace, which a canon.toml points at."""
    other = tmp_path / "elsewhere"
    write(other, ".canon/articles/src/app.md", article("PRIVATE elsewhere app.", "2026-11-01", ""))
    return other


@pytest.mark.parametrize(
    ("init_options", "option_files", "followed"),
    [
        (None, ('root = "../elsewhere/.canon"\n', None), False),
        ({"untrustedWorkspace": False}, ('root = "../elsewhere/.canon"\n', None), True),
    ],
    ids=["no-client-trust", "vscode-trusted"],
)
async def test_issue_24_canon_toml_leading_outside_follows_trust(
    elsewhere: Path, editor: Editor, workspace: Path, followed: bool
) -> None:
    """A client that says nothing of trust (Neovim) follows the user's `canon trust` record:
    without it the project's own store is served and one warning names canon.toml and the
    command. A trusted VS Code workspace vouches for the file itself."""
    mapped = str(await editor.command("canon.map"))
    assert ("PRIVATE elsewhere app." in mapped) is followed, mapped
    if not followed:
        await editor.until(
            lambda: any(
                str(workspace / "canon.toml") in m and "canon trust" in m for m in editor.messages()
            ),
            "the message naming canon.toml and `canon trust`",
        )
        assert "src/core/config: Loads" in mapped
    else:
        assert not any("canon trust" in m for m in editor.messages())
