#!/usr/bin/env bash
# Creates .venv (if missing) and installs canon-ls into it, editable, with the extras named.
# Usage: scripts/setup.sh [EXTRAS]   e.g. scripts/setup.sh test
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
spec="."
[ -n "$extras" ] && spec=".[$extras]"
.venv/bin/python -m pip install -q -e "$spec" 2> >(grep -v -E "^WARNING: Location .* is ignored" >&2)
