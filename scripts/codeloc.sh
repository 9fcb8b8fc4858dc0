#!/usr/bin/env bash
# Code localization on real commit histories: does the code a task needs
# come first? Runs the codeloc harness (../shared/bench/codeloc) with Mira's
# ranking beside its bm25 and git-grep baselines, on the same cases, and
# prints the summary table (recall@1/5/10, hit@5/10, MRR per repository,
# per split and overall). It fetches nothing: give it the histories.
#
#   MIRA_CODELOC_COBRA=DIR     bare git directory of spf13/cobra    (dev)
#   MIRA_CODELOC_FLASK=DIR     bare git directory of pallets/flask  (dev)
#   MIRA_CODELOC_HELDOUT="CORPUS.jsonl=GIT_DIR ..."
#                              held-out corpora (build_corpus.py) and their
#                              histories; the repository is read from the
#                              corpus; reported as [heldout]
#   MIRA_CODELOC_HARNESS=DIR   the harness (default ../shared/bench/codeloc)
#   MIRA_CODELOC_OUT=DIR       results (default a new directory under /tmp)
#   MIRA_CODELOC_MIRA='TEMPLATE' and MIRA_CODELOC_MIRA_INDEX='TEMPLATE'
#                              the system under test; by default the driver
#                              in scripts/codeloc, which indexes each
#                              checkout into {index_dir} and loads it per
#                              query. To measure the command instead:
#                              MIRA_CODELOC_MIRA='mira-code files --root {root} -k 100 < {query_file}'
#   MIRA_CODELOC_BASELINES="bm25 grep"   baselines run beside it
#   MIRA_CODELOC_LIMIT=N       only the first N cases of each corpus
#   MIRA_RANK_PARAMS=...       ranking weights for ablations (scripts/codeloc)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export GOTOOLCHAIN=${GOTOOLCHAIN:-$(sed -n 's/^toolchain //p' go.mod)}
export CGO_ENABLED=0
harness=${MIRA_CODELOC_HARNESS:-$root/../shared/bench/codeloc}

args=()
[ -n "${MIRA_CODELOC_COBRA:-}" ] && args+=(--corpus "dev:$harness/corpus/cobra.jsonl" --git "spf13/cobra=$MIRA_CODELOC_COBRA")
[ -n "${MIRA_CODELOC_FLASK:-}" ] && args+=(--corpus "dev:$harness/corpus/flask.jsonl" --git "pallets/flask=$MIRA_CODELOC_FLASK")
for pair in ${MIRA_CODELOC_HELDOUT:-}; do
	corpus=${pair%%=*} git_dir=${pair#*=}
	if [ ! -s "$corpus" ] || [ "$corpus" = "$pair" ]; then
		echo "codeloc: MIRA_CODELOC_HELDOUT: $pair: want CORPUS.jsonl=GIT_DIR with a non-empty corpus" >&2
		exit 2
	fi
	repo=$(head -1 "$corpus" | python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["repo"])')
	args+=(--corpus "heldout:$corpus" --git "$repo=$git_dir")
done
if [ ${#args[@]} -eq 0 ]; then
	echo "codeloc: no histories given, nothing measured." >&2
	echo "codeloc: set MIRA_CODELOC_COBRA and MIRA_CODELOC_FLASK to bare git directories of" >&2
	echo "codeloc: spf13/cobra and pallets/flask (and MIRA_CODELOC_HELDOUT for more); see the header of $0." >&2
	exit 0
fi
if [ ! -f "$harness/run.py" ]; then
	echo "codeloc: no harness at $harness (set MIRA_CODELOC_HARNESS)" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mira-codeloc.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${MIRA_CODELOC_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mira-codeloc-out.XXXXXX")}
if [ -z "${MIRA_CODELOC_MIRA:-}" ]; then
	go build -o "$work/codeloc" ./scripts/codeloc
	MIRA_CODELOC_MIRA="$work/codeloc query {root} {index_dir}/model"
	MIRA_CODELOC_MIRA_INDEX=${MIRA_CODELOC_MIRA_INDEX:-"$work/codeloc index {root} {index_dir}/model"}
fi
systems=(--system "mira=$MIRA_CODELOC_MIRA")
[ -n "${MIRA_CODELOC_MIRA_INDEX:-}" ] && systems+=(--index "mira=$MIRA_CODELOC_MIRA_INDEX")
for b in ${MIRA_CODELOC_BASELINES-bm25 grep}; do
	systems+=(--system "$b")
done
[ -n "${MIRA_CODELOC_LIMIT:-}" ] && args+=(--limit "$MIRA_CODELOC_LIMIT")

python3 "$harness/run.py" "${args[@]}" "${systems[@]}" --out "$out" --workdir "$work/checkouts"
echo "codeloc: results in $out" >&2
