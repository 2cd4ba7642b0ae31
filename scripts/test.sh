#!/usr/bin/env bash
# README's second command: set up everything the suite needs on a fresh machine, then run all of it.
#
#   bash scripts/test.sh               # everything (CI runs this, as root)
#   bash scripts/test.sh --quick       # only the venv: ruff, mypy, pytest without editors/agent CLIs
#   bash scripts/test.sh [PYTEST ARGS] # e.g. tests/core -k journal
#
# Without root, editor tests whose tools cannot be installed are left out, each with its reason
# (scripts/install_editor_deps.sh lists them); everything else runs. Exits non-zero on any
# failure (pytest's exit 5, "no tests collected", included).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
quick=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--quick" ]; then quick=1; else args+=("$arg"); fi
done
bash scripts/setup.sh test
cache=${CANON_EDITOR_CACHE:-$PWD/.cache/editors}
select=()
if [ "$quick" -eq 1 ]; then
  echo "== --quick: the real-editor and agent-CLI tests are left out"
  select=(-m "not editor and not agent_cli")
elif ! bash scripts/install_editor_deps.sh; then
  if [ -n "${CI:-}" ]; then
    echo "the editor tools could not be set up (output above)" >&2
    exit 1
  fi
  echo "== the editor tools could not be set up (output above): tests/editors are left out"
  select=(-m "not editor")
elif [ -s "$cache/unavailable" ]; then
  while IFS=$'\t' read -r test reason; do
    echo "== left out: $test ($reason)"
    select+=(--deselect "$test")
  done <"$cache/unavailable"
fi
# The agent-CLI tests install Claude Code and Codex with npm: the installer's Node serves when
# the machine has none.
export PATH="$PWD/.venv/bin:$PATH:$cache/bin"
if [ "$quick" -eq 0 ]; then
  # Fetched here, each named as it comes, so an unreachable registry shows in 30 s, not minutes.
  echo "== agent CLIs (Claude Code, Codex, Copilot, Pi) from npm, once, into ${CANON_NPM_CACHE:-~/.cache/canon-tests}"
  if ! python tests/agent/npm_agents.py; then
    if [ -n "${CI:-}" ]; then
      echo "the agent CLIs could not be installed (output above)" >&2
      exit 1
    fi
    echo "== left out: the agent-CLI tests (the agent CLIs could not be installed: output above)"
    if [ "${select[0]:-}" = "-m" ]; then
      select[1]="${select[1]} and not agent_cli"
    else
      select+=(-m "not agent_cli")
    fi
  fi
fi
echo "== setup took $(( $(date +%s) - start )) s"
echo "== ruff check";  ruff check .
echo "== ruff format"; ruff format --check .
echo "== mypy";        mypy canon_ls
echo "== pytest"
status=0
python -m pytest -q -ra ${select[@]+"${select[@]}"} ${args[@]+"${args[@]}"} || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
fi
echo "== total $(( $(date +%s) - start )) s"
exit "$status"
