#!/usr/bin/env bash
# Runs Mira end to end on the built-in offline defaults: a fresh store in a
# temporary MIRA_HOME, a small sample imported in one commit, a few recalls,
# and the store's git history.
set -euo pipefail
cd "$(dirname "$0")/.."
# MIRA_DEMO_BIN= (empty) takes the commands from PATH instead of bin/.
bin=${MIRA_DEMO_BIN-$PWD/bin}
# A store the demo makes is removed when it exits, however it exits; one
# given in MIRA_HOME is the caller's and stays.
# The first recall starts a server for the store (mira-index watch
# --on-demand); it stops by itself within seconds of the store's removal.
cleanup() {
  if [ -n "${demo_home:-}" ]; then rm -rf "$demo_home"; fi
}
trap cleanup EXIT
if [ -z "${MIRA_HOME:-}" ]; then
  demo_home=$(mktemp -d "${TMPDIR:-/tmp}/mira-demo.XXXXXX")
  export MIRA_HOME=$demo_home
fi
if [ -n "$bin" ]; then export PATH=$bin:$PATH; fi
export MIRA_PROJECT=demo
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

echo "store: $MIRA_HOME${demo_home:+ (removed when the demo ends)}"
step "mira-remember --jsonl < scripts/sample/memories.jsonl"
mira-remember --jsonl --output text < scripts/sample/memories.jsonl | grep -E '^[0-9A-Z]{26}' || true
step 'mira-remember --kind decision --tag db "Use pgx, not database/sql, for PostgreSQL access"'
mira-remember --kind decision --tag db "Use pgx, not database/sql, for PostgreSQL access" --output text
step "mira-recall 'which login endpoint' -k 3"
mira-recall 'which login endpoint' -k 3 --output text
step "mira-recall postgresql --kind decision --explain"
mira-recall postgresql --kind decision --explain --output text
step "mira-recall auth -k 2   # piped: JSONL"
mira-recall auth -k 2 | cat
step "mira-recall 'auth tokens' -k 3 | mira-context --meter   # the block a prompt gets"
mira-recall 'auth tokens' -k 3 | mira-context --meter --query 'auth tokens'
step "git -C \$MIRA_HOME log --oneline"
git -C "$MIRA_HOME" log --oneline
step "git -C \$MIRA_HOME status --short"
git -C "$MIRA_HOME" status --short
echo "(clean)"
step "mira-index status"
mira-index status --output text
step "mira-recall 'which login endpoint' -k 1   # answered by the server the first recall started"
mira-recall 'which login endpoint' -k 1 --output text
