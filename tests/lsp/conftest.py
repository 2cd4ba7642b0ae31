"""pytest-lsp fixtures: the real server process, three client profiles (SPEC §10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import PROFILES, SERVER_COMMAND, SERVER_ENV, Session, build_workspace, capabilities
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return build_workspace(tmp_path / "proj")


@pytest.fixture
def canon_settings() -> dict[str, Any]:
    """`workspace/configuration` section `canon`; override in a test module to change it."""
    return {}


@pytest_lsp.fixture(
    params=PROFILES,
    config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV),
)
async def client(
    request, lsp_client: LanguageClient, workspace: Path, canon_settings: dict[str, Any]
):
    lsp_client.inlay_refreshes = 0  # type: ignore[attr-defined]
    lsp_client.lens_refreshes = 0  # type: ignore[attr-defined]
    lsp_client.applied_edits = []  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def on_inlay_refresh(client: LanguageClient, params: None) -> None:
        client.inlay_refreshes += 1  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_lens_refresh(client: LanguageClient, params: None) -> None:
        client.lens_refreshes += 1  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations = list(params.registrations)  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(
        client: LanguageClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        client.applied_edits.append(params.edit)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp_client.set_configuration(canon_settings, section="canon")
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(request.param),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="proj")],
        )
    )
    lsp_client.canon_profile = request.param  # type: ignore[attr-defined]
    lsp_client.canon_encoding = str(result.capabilities.position_encoding or "utf-16")  # type: ignore[attr-defined]
    lsp_client.canon_result = result  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def s(client: LanguageClient, workspace: Path) -> Session:
    """The started client with the workspace and the negotiated encoding."""
    return Session(client, workspace, client.canon_profile, client.canon_encoding)  # type: ignore[attr-defined]
