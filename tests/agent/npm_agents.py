"""Install pinned coding-agent CLIs from npm once, into a cache outside the repository.

CI on a fresh machine runs the same code: when the binary is missing, `npm install --prefix
<cache> <package>@<version>` fetches it. npm may refuse the wrappers' postinstall scripts
(allowScripts); the platform packages' native binaries run directly, so that does not matter.
A failed install fails the test loudly (never a skip). CI can install ahead of the tests with
`python tests/agent/npm_agents.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.332", "@anthropic-ai/claude-code-*/claude")
CODEX = ("@openai/codex", "0.171.0", "@openai/codex-*/vendor/*/bin/codex")


def cache_root() -> Path:
    return Path(os.environ.get("CANON_NPM_CACHE") or os.path.expanduser("~/.cache/canon-tests"))


def install(package: str, version: str, binary_glob: str) -> Path:
    """The native binary of `package@version`, installing it into the cache when missing."""
    prefix = cache_root() / f"{package.rsplit('/', 1)[-1]}-{version}"
    found = sorted(prefix.glob(f"node_modules/{binary_glob}"))
    if not found:
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"npm is not installed; it is needed to install {package}@{version}.")
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             f"{package}@{version}"],
            capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        found = sorted(prefix.glob(f"node_modules/{binary_glob}"))
        if done.returncode != 0 or not found:
            pytest.fail(
                f"npm install of {package}@{version} failed (exit {done.returncode}); "
                f"the agent_cli tests need it:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            )
    return found[0]


def checked(binary: Path, version: str) -> Path:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=120)
    assert version in done.stdout, done.stdout + done.stderr
    return binary


if __name__ == "__main__":  # pre-install for CI: python tests/agent/npm_agents.py
    for spec in (CLAUDE_CODE, CODEX):
        print(checked(install(*spec), spec[1]))
