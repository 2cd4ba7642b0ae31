#!/usr/bin/env bash
# README's second command: set up everything the suite needs on a fresh machine, then run all of it.
# Exits non-zero on any failure (pytest's exit 5, "no tests collected", included).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/setup.sh test
if [ -f scripts/install_editor_deps.sh ]; then
  bash scripts/install_editor_deps.sh
fi
export PATH="$PWD/.venv/bin:$PATH"
echo "== setup took $(( $(date +%s) - start )) s"
echo "== ruff check";  ruff check .
echo "== ruff format"; ruff format --check .
echo "== mypy";        mypy canon_ls
echo "== pytest"
status=0
python -m pytest -q -ra "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
fi
echo "== total $(( $(date +%s) - start )) s"
exit "$status"
