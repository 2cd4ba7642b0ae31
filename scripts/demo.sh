#!/usr/bin/env bash
# README's first command: set up, then tour the bundled example store with the real CLI and
# language server. Arguments go to the CLI tour (examples/tour.py): `--graph FILE` keeps the
# graph page as FILE (relative to where you ran this).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bash "$repo/scripts/setup.sh"
export PATH="$repo/.venv/bin:$PATH"
"$repo/.venv/bin/python" "$repo/examples/tour.py" "$@"
if [ -f "$repo/examples/editor_tour.py" ]; then
  "$repo/.venv/bin/python" "$repo/examples/editor_tour.py"
fi
