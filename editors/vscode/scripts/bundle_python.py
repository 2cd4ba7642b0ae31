"""Fill editors/vscode/bundled/libs with canon_ls and the pure-Python packages its language
server imports, so the .vsix runs `python -m canon_ls` on any Python >= 3.11 with nothing else
installed (the layout of Microsoft's vscode-python-tools-extension-template).

The server needs the project's dependencies except `mcp` (the agent side only) and
`watchfiles` (compiled; the client watches files in VS Code); they are read
from this repository's pyproject.toml, so a new dependency there is bundled without an edit here.
PyYAML's optional C accelerator is dropped (PyYAML falls back to its pure-Python parser), which
keeps the .vsix the same on every platform; any other compiled module is refused.

usage: python3 scripts/bundle_python.py   (Python 3.11 or newer; npm run package runs it)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # editors/vscode
REPO = HERE.parent.parent
LIBS = HERE / "bundled" / "libs"
AGENT_ONLY = {"mcp"}  # imported by the MCP server and hooks, never by the language server
# Compiled, and optional to the server: in VS Code the client reports file events, and without
# watchfiles the server says so once and runs without its own watcher.
NOT_BUNDLED = {"watchfiles"}
# Package data only agents use: the Pi extension's TypeScript is written by `canon init pi`,
# which the editor never runs, so the .vsix does not carry it.
AGENT_DATA = ("canon_ls/agent/pi_extension",)
BINARY = (".so", ".pyd", ".dylib", ".dll")
OPTIONAL_BINARY = re.compile(r"^yaml/_yaml\.")  # PyYAML's libyaml binding; pure fallback exists


def server_requirements() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    keep = []
    for spec in project["dependencies"]:
        name = re.split(r"[<>=!~ ;\[]", spec, maxsplit=1)[0].strip().lower()
        if name not in AGENT_ONLY | NOT_BUNDLED:
            keep.append(spec)
    return keep


def pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(LIBS)]
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore")
    subprocess.run([*cmd, *args], check=True, env=env)


def main() -> int:
    shutil.rmtree(LIBS, ignore_errors=True)
    LIBS.mkdir(parents=True)
    pip(*server_requirements())
    pip("--no-deps", str(REPO))
    shutil.rmtree(LIBS / "bin", ignore_errors=True)  # console scripts pinned to this interpreter
    for data in AGENT_DATA:
        shutil.rmtree(LIBS / data, ignore_errors=True)
    for cache in list(LIBS.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    refused = []
    for path in sorted(LIBS.rglob("*")):
        rel = path.relative_to(LIBS).as_posix()
        if path.suffix in BINARY or ".so." in path.name:
            if OPTIONAL_BINARY.match(rel):
                path.unlink()
            else:
                refused.append(rel)
    if refused:
        print(f"compiled modules would tie the .vsix to one platform: {refused}", file=sys.stderr)
        return 1
    if not (LIBS / "canon_ls" / "__main__.py").is_file():
        print("canon_ls did not land in bundled/libs.", file=sys.stderr)
        return 1
    names = sorted(p.name for p in LIBS.iterdir() if p.is_dir() and not p.name.endswith("-info"))
    print(f"bundled/libs: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
