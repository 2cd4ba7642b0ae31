"""Install pinned coding-agent CLIs from npm once, into a cache outside the repository.

CI on a fresh machine runs the same code: when the binary is missing, `npm install --prefix
<cache> <package>@<version>` fetches it. npm may refuse the wrappers' postinstall scripts
(allowScripts); the platform packages' native binaries run directly, so that does not matter.
A failed install fails the test loudly (never a skip). CI can install ahead of the tests with
`python tests/agent/npm_agents.py`.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.332", "@anthropic-ai/claude-code-*/claude")
CODEX = ("@openai/codex", "0.171.0", "@openai/codex-*/vendor/*/bin/codex")
# GitHub Copilot CLI: runs against any Anthropic-style API with COPILOT_PROVIDER_* (no GitHub
# login) and COPILOT_OFFLINE=true; it reads `.github/instructions/*.instructions.md`.
COPILOT_CLI = ("@github/copilot", "1.0.102", "@github/copilot-*/copilot")
# Pi is a Node program needing Node >= 22.19; the machine's Node may be older, so a pinned Node
# comes from npm too (the `node-<os>-<cpu>` packages ship the official binary).
PI = (
    "@earendil-works/pi-coding-agent",
    "1.6.0",
    "@earendil-works/pi-coding-agent/dist/bundle/cli.js",
)
PI_NODE = "22.23.5"


PING_TIMEOUT = 30  # seconds for the registry to answer before anything is fetched
INSTALL_TIMEOUT = int(os.environ.get("CANON_NPM_TIMEOUT") or 600)  # seconds per install


def cache_root() -> Path:
    return Path(os.environ.get("CANON_NPM_CACHE") or os.path.expanduser("~/.cache/canon-tests"))


def install(package: str, version: str, binary_glob: str, *extra: str) -> Path:
    """The native binary of `package@version`, installing it into the cache when missing;
    `extra` packages (`name@version`) are installed beside it."""
    prefix = cache_root() / f"{package.rsplit('/', 1)[-1]}-{version}"
    found = sorted(prefix.glob(f"node_modules/{binary_glob}"))
    if not found:
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"npm is not installed; it is needed to install {package}@{version}.")
        _reachable(npm, f"{package}@{version}")
        print(f"fetching {package}@{version} {' '.join(extra)} from npm into {prefix} "
              f"(up to {INSTALL_TIMEOUT} s)", file=sys.stderr, flush=True)  # fmt: skip
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                 f"{package}@{version}", *extra],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            pytest.fail(f"npm install of {package}@{version} took over {INSTALL_TIMEOUT} s.")
        found = sorted(prefix.glob(f"node_modules/{binary_glob}"))
        if done.returncode != 0 or not found:
            pytest.fail(
                f"npm install of {package}@{version} failed (exit {done.returncode}); "
                f"the agent_cli tests need it:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            )
    return found[0]


def _reachable(npm: str, wanted: str) -> None:
    """Fail within PING_TIMEOUT seconds, saying so, when the npm registry does not answer
    (an unreachable registry otherwise keeps `npm install` waiting for many minutes)."""
    try:
        done = subprocess.run([npm, "ping"], capture_output=True, text=True, timeout=PING_TIMEOUT)
        ok, why = done.returncode == 0, (done.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        ok, why = False, f"no answer in {PING_TIMEOUT} s"
    if not ok:
        pytest.fail(f"the npm registry is unreachable ({why}); {wanted} cannot be fetched.")


def checked(binary: Path, version: str) -> Path:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=120)
    assert version in done.stdout, done.stdout + done.stderr
    return binary


def pi_command() -> list[str]:
    """`pi` as [node, cli.js]: the pinned Pi and the pinned Node it runs on."""
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    node_package = f"node-{'win' if sys.platform == 'win32' else sys.platform}-{cpu}"
    cli = install(*PI, f"{node_package}@{PI_NODE}")
    node = cli.parents[4] / node_package / "bin" / "node"
    if not node.exists():
        pytest.fail(
            f"{node_package}@{PI_NODE} is missing in {cli.parents[4]}; delete it to reinstall."
        )
    command = [str(node), str(cli)]
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=120)
    assert PI[1] in done.stdout + done.stderr, done.stdout + done.stderr
    return command


if __name__ == "__main__":  # pre-install (scripts/test.sh, CI): python tests/agent/npm_agents.py
    try:
        for spec in (CLAUDE_CODE, CODEX, COPILOT_CLI):
            print(checked(install(*spec), spec[1]))
        print(" ".join(pi_command()))
    except pytest.fail.Exception as exc:
        print(exc.msg, file=sys.stderr)
        sys.exit(1)
