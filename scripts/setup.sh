#!/usr/bin/env bash
# Creates .venv (if missing) and installs canon-ls into it, editable, with the extras named.
# Usage: scripts/setup.sh [EXTRAS]   e.g. scripts/setup.sh test
# A .venv that does not run Python 3.11 or newer (broken, or made by an older Python) is
# rebuilt; PYTHON=/path/to/python3.12 picks the interpreter that builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"
supported() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
if [ -e .venv ] && ! supported .venv/bin/python; then
  echo "== .venv does not run Python 3.11 or newer (broken, or made by an older Python): rebuilding it"
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  if ! supported "$python"; then
    echo "canon-ls needs Python 3.11 or newer, and $python is not one (or is missing); run again with PYTHON=/path/to/python3.11 or newer." >&2
    exit 2
  fi
  "$python" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
spec="."
[ -n "$extras" ] && spec=".[$extras]"
.venv/bin/python -m pip install -q -e "$spec" 2> >(grep -v -E "^WARNING: Location .* is ignored" >&2)
# An editable install leaves the sources uncompiled, and where PYTHONDONTWRITEBYTECODE is set
# (common in containers) every start of canon-ls, the CLI or a hook compiled them again: a
# tenth of a second before the editor's first answer. Compiled once here, they are read.
.venv/bin/python -m compileall -q canon_ls >/dev/null
