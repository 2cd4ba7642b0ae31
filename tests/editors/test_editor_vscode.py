"""VS Code for real: the .vsix that `npm run package` builds (the extension bundled by esbuild,
the server and its pure-Python libraries under bundled/libs) installed into code-server on a
PATH with python3 but no `canon-ls`, driven by headless Chromium through playwright-core
(SPEC §10). Plus the .vsix's contents and the extension's own unit tests (`node --test`, mocked
`vscode`: server resolution, SPEC §12 workspace trust, the `canon.resolve` answer)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest
from editor_support import CACHE, REPO, need, node_bin, tool_env, venv_bin

pytestmark = pytest.mark.editor

EXT = REPO / "editors" / "vscode"
E2E = Path(__file__).parent / "vscode" / "e2e.js"
USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "editor.hover.delay": 100,
    "editor.inlayHints.enabled": "on",
    "editor.minimap.enabled": False,
    "chat.disableAIFeatures": True,
}


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 300) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


@pytest.fixture(scope="module")
def compiled() -> str:
    """`tsc -p .` in editors/vscode (node_modules from `npm ci`, done by the installer)."""
    node = need(node_bin(), "node")
    need(EXT / "node_modules" / "typescript", "editors/vscode/node_modules (npm ci)")
    run([node, "node_modules/typescript/bin/tsc", "-p", "."], cwd=EXT)
    return node


def test_vscode_unit_tests_server_resolution(compiled: str) -> None:
    """Server resolution order (setting -> bundled server on Python >= 3.11 -> canon-ls on PATH),
    SPEC §12 (machine-scoped server path, untrusted workspaces, relative paths against the
    workspace folder) and activation with a mocked `vscode`: `node --test` in editors/vscode."""
    tests = sorted(str(p.relative_to(EXT)) for p in (EXT / "test").glob("*.test.js"))
    out = run([compiled, "--test", "--test-reporter=tap", *tests], cwd=EXT)
    assert "# fail 0" in out and "# pass 20" in out, out


def js_env() -> dict[str, str]:
    """npm and node from the installer's cache; python3 is this venv's (pip fills bundled/libs)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(venv_bin()), str(CACHE / "bin"), env.get("PATH", "")])
    return env


@pytest.fixture(scope="module")
def vsix(compiled: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`npm run package`, the one step the docs give: tsc, esbuild, bundled/libs, vsce."""
    need(CACHE / "bin" / "npm", "npm")
    out = tmp_path_factory.mktemp("vsix") / "canon-ls.vsix"
    run([str(CACHE / "bin" / "npm"), "run", "package", "--", "--out", str(out)], EXT, js_env())
    return out


def test_vsix_ships_the_bundled_server_and_no_node_modules(vsix: Path) -> None:
    """The .vsix carries canon_ls and the pure-Python packages its server imports under
    bundled/libs, one bundled dist/extension.js, and nothing from node_modules or the sources."""
    names = zipfile.ZipFile(vsix).namelist()
    libs = "extension/bundled/libs/"
    for wanted in [
        "canon_ls/__main__.py",
        "canon_ls/lsp/server.py",
        "pygls/__init__.py",
        "lsprotocol/types.py",
        "cattrs/__init__.py",
        "attrs/__init__.py",
        "yaml/__init__.py",
        "typing_extensions.py",
    ]:
        assert libs + wanted in names, wanted
    assert "extension/dist/extension.js" in names
    assert "extension/package.json" in names and "extension/LICENSE.txt" in names
    unwanted = [
        n
        for n in names
        if "node_modules/" in n
        or n.startswith(("extension/src/", "extension/out/", "extension/test/"))
        or "__pycache__" in n
        or n.endswith((".so", ".pyd", ".ts", ".map"))
        or "/mcp/" in n
    ]
    assert unwanted == []
    manifest = json.loads(zipfile.ZipFile(vsix).read("extension/package.json"))
    assert manifest["main"] == "./dist/extension.js"


def user_path(tmp_path: Path) -> str:
    """A PATH as on a machine with Python but without canon-ls: python3 (this venv's base
    interpreter, which has no canon_ls), node for code-server, and the system's directories."""
    pybin = tmp_path / "pybin"
    pybin.mkdir()
    (pybin / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    path = os.pathsep.join([str(pybin), str(CACHE / "bin"), "/usr/bin", "/bin"])
    assert shutil.which("canon-ls", path=path) is None, "canon-ls must not be on this PATH"
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop code-server and everything it started (extension hosts, canon-ls) by process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):  # stragglers (file watchers) in the group
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "code-server exited during start-up"
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)  # poll: code-server has no readiness event
    raise AssertionError("code-server did not answer /healthz within 60 s")


def test_vscode_extension_in_code_server(
    compiled: str, vsix: Path, workspace: Path, tmp_path: Path
) -> None:
    """SPEC §10 in VS Code, with only the .vsix installed (no canon-ls on PATH): the status bar
    says the bundled server runs, hover shows the capsule, the inlay hint is on line 1, Problems
    counts the orphan article (§6.1 item 5), and the "Create article" quick fix creates the file."""
    shot = tmp_path / "vscode.png"
    drive(compiled, vsix, workspace, tmp_path, [str(shot)], USER_SETTINGS)
    if os.environ.get("CANON_UPDATE_SCREENSHOT") and shot.exists():
        shutil.copyfile(shot, REPO / "docs" / "vscode.png")


def test_vscode_diagnostics_as_you_type(
    compiled: str, vsix: Path, workspace: Path, tmp_path: Path
) -> None:
    """SPEC §10 diagnostics as you type, in VS Code (which pulls them): a broken link typed
    into an article and not saved is in Problems, and leaves it once the line is deleted."""
    settings = {
        **USER_SETTINGS,
        "files.autoSave": "off",
        "editor.autoClosingBrackets": "never",
        "editor.suggestOnTriggerCharacters": False,
        "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
    }
    out = drive(compiled, vsix, workspace, tmp_path, ["", "typing"], settings)
    assert "ok - deleting the link clears it from Problems" in out


def test_vscode_import_hover(compiled: str, vsix: Path, workspace: Path, tmp_path: Path) -> None:
    """SPEC §10 hover on an import in VS Code: the mouse over `feed` in
    `from src.feed import fetch` shows the capsule of the article governing src/feed.py."""
    (workspace / "src" / "main.py").write_text("from src.feed import fetch\n", encoding="utf-8")
    out = drive(compiled, vsix, workspace, tmp_path, ["", "imports"], USER_SETTINGS)
    assert "ok - hover on an import shows the imported module's capsule" in out


def drive(
    compiled: str,
    vsix: Path,
    workspace: Path,
    tmp_path: Path,
    args: list[str],
    settings: dict[str, object],
) -> str:
    """Install the .vsix into a fresh code-server, run e2e.js with `args` against it; its
    output, once every check passed."""
    code_server = need(CACHE / "code-server" / "bin" / "code-server", "code-server")
    playwright = need(CACHE / "pw" / "node_modules" / "playwright-core", "playwright-core")
    need("/usr/bin/chromium", "chromium (apt)")

    home = tmp_path / "home"
    env = tool_env(home)
    env["PATH"] = user_path(tmp_path)
    env["NODE_PATH"] = str(Path(playwright).parent)
    # Keep this PATH for the extension host (which looks for python3 on it): without VSCODE_CLI
    # the server replaces it with a login shell's PATH (/etc/profile's, on Debian).
    env["VSCODE_CLI"] = "1"
    data = tmp_path / "cs"
    (data / "user" / "User").mkdir(parents=True)
    (data / "user" / "User" / "settings.json").write_text(json.dumps(settings))
    common = ["--user-data-dir", str(data / "user"), "--extensions-dir", str(data / "ext")]
    run([code_server, *common, "--install-extension", str(vsix)], cwd=tmp_path, env=env)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (data / "server.log").open("wb")
    server = subprocess.Popen(
        [
            code_server,
            *common,
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--auth",
            "none",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            str(workspace),
        ],
        cwd=workspace,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(url, server)
        proc = subprocess.run(
            [compiled, str(E2E), url, str(workspace), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
        )
    finally:
        stop_group(server)
        log.close()
    out = proc.stdout
    detail = f"\n--- stdout\n{out}\n--- stderr\n{proc.stderr[-2000:]}"
    detail += (
        f"\n--- code-server log (tail)\n{(data / 'server.log').read_text(errors='replace')[-3000:]}"
    )
    for channel in sorted((data / "user" / "logs").glob("**/canon.log")):
        detail += f"\n--- {channel.name} (tail)\n{channel.read_text(errors='replace')[-3000:]}"
    assert proc.returncode == 0 and "0 failed" in out, detail
    return out
