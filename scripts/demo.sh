#!/usr/bin/env bash
# README's first command: set up, then tour the bundled example store with the real CLI and language server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python examples/tour.py
if [ -f examples/editor_tour.py ]; then
  .venv/bin/python examples/editor_tour.py
fi
