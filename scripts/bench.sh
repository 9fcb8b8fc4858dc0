#!/usr/bin/env bash
# make bench: retrieval quality on LoCoMo (dev split) and whole-process
# timings beside the tools a user would reach for instead (ripgrep, SQLite
# FTS5, git), on generated stores of 10k and 100k entries.
#
#   SIZES="10000 100000"   store sizes to time (default both)
#   RUNS=10                hyperfine runs per command
#   SERVED_RUNS=200        runs of the recalls answered by a watcher, and of
#                          the recalls through mira-mcp (stores under 100k)
#   LOCOMO=../shared/bench/locomo
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH=$root/bin:$PATH
# The toolchain go.mod names, also when this script runs outside make.
export GOTOOLCHAIN=${GOTOOLCHAIN:-$(sed -n 's/^toolchain //p' go.mod)}
SIZES=${SIZES-"10000 100000"}
RUNS=${RUNS:-10}
SERVED_RUNS=${SERVED_RUNS:-200}
LOCOMO=${LOCOMO:-$root/../shared/bench/locomo}
work=$(mktemp -d "${TMPDIR:-/tmp}/mira-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export MIRA_PROJECT=bench GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost

need() {
	command -v "$1" >/dev/null && return
	echo "installing $2 with apt" >&2
	if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
	else sudo apt-get update -qq && sudo apt-get install -y -qq "$2" >/dev/null; fi
}
need rg ripgrep
need sqlite3 sqlite3
need hyperfine hyperfine

echo "# machine: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%dT%H:%MZ)"

# --- LoCoMo (dev): one memory per turn, questions scoped to their conversation.
if [ -d "$LOCOMO/dev" ]; then
	echo
	echo "## LoCoMo dev: turn retrieval (score.py)"
	export MIRA_HOME=$work/locomo
	python3 scripts/locomo.py records "$LOCOMO/dev" > "$work/locomo-records.jsonl"
	t0=$(date +%s.%N)
	mira-remember --jsonl < "$work/locomo-records.jsonl" > "$work/locomo-stored.jsonl"
	t1=$(date +%s.%N)
	python3 scripts/locomo.py questions "$LOCOMO/dev" "$work/locomo-stored.jsonl" > "$work/locomo-questions.jsonl"
	echo "imported $(wc -l < "$work/locomo-stored.jsonl") turns in $(python3 -c "print(round($t1-$t0,2))") s (one commit)"
	# Fit the built-in embedder on the whole import. Wait first until the
	# files are older than the 2 s in which a fresh file is re-read (and
	# re-embedded on its own) at every check, so runs are repeatable.
	sleep 3
	mira-index rebuild >/dev/null
	for mode in lexical vector hybrid; do
		echo
		echo "### --mode $mode (mira-recall --eval: every stage)"
		mira-recall --mode $mode --eval "$work/locomo-questions.jsonl" --eval-results "$work/locomo-ranked-$mode.jsonl" -k 10 --output text
		python3 scripts/locomo.py results "$work/locomo-stored.jsonl" "$work/locomo-ranked-$mode.jsonl" > "$work/locomo-results-$mode.jsonl"
		echo "score.py, --mode $mode:"
		python3 "$LOCOMO/score.py" "$LOCOMO/dev/questions.jsonl" "$work/locomo-results-$mode.jsonl" | sed '$d'
	done
else
	echo "LoCoMo data not found at $LOCOMO; skipping" >&2
fi

# --- Whole-process timings on generated stores.
go build -o "$work/mcpbench" ./scripts/mcpbench
p50() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; print(' '.join('%.1f' % (x['median']*1000) for x in r))" "$1"; }
row() { # label, json, baseline label
	read -r a b <<<"$(p50 "$2")"
	printf '| %s | %s ms | %s ms | %s |\n' "$1" "$a" "$b" "$(python3 -c "print('%.2f' % ($a/$b))")"
}
for n in $SIZES; do
	d=$work/gen$n
	mkdir -p "$d"
	python3 scripts/gen.py "$n" "$d"
	export MIRA_HOME=$d/home
	echo
	echo "## $n entries"
	t0=$(date +%s.%N)
	mira-remember --jsonl < "$d/records.jsonl" > /dev/null
	t1=$(date +%s.%N)
	echo "import: $(python3 -c "print(round($t1-$t0,2))") s for $n entries in one commit"
	t0=$(date +%s.%N); mira-index rebuild >/dev/null; t1=$(date +%s.%N)
	echo "first full rebuild (BM25 + fitting the built-in embedder + embedding): $(python3 -c "print(round($t1-$t0,2))") s"
	sqlite3 "$d/fts.db" < "$d/fts.sql"
	q=$(head -1 "$d/queries.txt")
	w1=${q%% *}
	# Each word as an FTS5 string ("v1.5" is no bareword), ORed like
	# mira-recall's query; the quotes are escaped for hyperfine's splitting.
	fq=$(echo "$q" | sed 's/^/\\"/; s/ /\\" OR \\"/g; s/$/\\"/')
	runs=$RUNS; [ "$n" -ge 100000 ] && runs=$(( RUNS < 5 ? RUNS : 5 ))
	h="hyperfine -N --style none --warmup 2 --runs $runs"
	$h --export-json "$d/recall.json" "mira-recall -k 10 '$q'" \
		"sqlite3 $d/fts.db \"SELECT id FROM m WHERE m MATCH '$fq' ORDER BY bm25(m) LIMIT 10\"" >/dev/null
	$h --export-json "$d/recall-modes.json" "mira-recall -k 10 '$q'" "mira-recall --mode lexical -k 10 '$q'" >/dev/null
	$h --export-json "$d/recall-rg.json" "mira-recall -k 10 '$q'" "rg -l -i -w $w1 $MIRA_HOME/entries" >/dev/null
	# The same recalls answered by a running watcher (mira-index watch).
	mira-index watch & wpid=$!
	for _ in $(seq 600); do [ -S "$MIRA_HOME/.index/recall.sock" ] && break; sleep 0.1; done
	# These take milliseconds, where a few runs are mostly noise.
	hs="hyperfine -N --style none --warmup 10 --runs $SERVED_RUNS"
	$hs --export-json "$d/served.json" "mira-recall -k 10 '$q'" \
		"sqlite3 $d/fts.db \"SELECT id FROM m WHERE m MATCH '$fq' ORDER BY bm25(m) LIMIT 10\"" >/dev/null
	$hs --export-json "$d/served-modes.json" "mira-recall -k 10 '$q'" "mira-recall --mode lexical -k 10 '$q'" >/dev/null
	# Every generated query, not only the first: each runs 10 times beside
	# its FTS5 query; the row is the median of all those runs.
	i=0
	while read -r qq; do
		i=$((i + 1))
		fqq=$(echo "$qq" | sed 's/^/\\"/; s/ /\\" OR \\"/g; s/$/\\"/')
		hyperfine -N --style none --warmup 1 --runs 10 --export-json "$d/served-q$i.json" "mira-recall -k 10 '$qq'" \
			"sqlite3 $d/fts.db \"SELECT id FROM m WHERE m MATCH '$fqq' ORDER BY bm25(m) LIMIT 10\"" </dev/null >/dev/null
	done < "$d/queries.txt"
	python3 -c "import json,sys,statistics as s; t=[[],[]]
for f in sys.argv[2:]:
    for k,r in enumerate(json.load(open(f))['results']): t[k]+=r['times']
json.dump({'results':[{'median':s.median(x)} for x in t]},open(sys.argv[1],'w'))" "$d/served-all.json" "$d"/served-q*.json
	kill -INT $wpid; wait $wpid || true
	# The same queries through mira-mcp: one server kept running, as an MCP
	# host keeps it, each call timed from request to result.
	mcpline=
	if [ "$n" -lt 100000 ]; then
		nq=$(wc -l < "$d/queries.txt")
		mcpline=$("$work/mcpbench" -bin "$root/bin/mira-mcp" -home "$MIRA_HOME" -k 10 \
			-rounds $(( (SERVED_RUNS + nq - 1) / nq )) "$d/queries.txt")
	fi
	git -C "$MIRA_HOME" config user.name bench; git -C "$MIRA_HOME" config user.email bench@localhost
	$h --export-json "$d/remember.json" \
		"sh -c 'mira-remember \"bench note \$(date +%s%N)\" >/dev/null'" \
		"sh -c 'mkdir -p $MIRA_HOME/other; f=$MIRA_HOME/other/bench-\$(date +%s%N).md; echo x > \$f && git -C $MIRA_HOME add \$f && git -C $MIRA_HOME commit -q -m bench'" >/dev/null
	# Bring the index up to date, then wait out the 2 s window in which a
	# just-written file is re-read on every check (its time stamp cannot
	# yet tell a later same-size rewrite apart), so this times no change.
	mira-index update; sleep 3
	$h --export-json "$d/fresh.json" "mira-index update" "git -C $MIRA_HOME status --porcelain" >/dev/null
	hyperfine -N --style none --warmup 0 --runs 3 --export-json "$d/rebuild.json" "mira-index rebuild" \
		"sh -c 'rm -f $d/fts2.db; sqlite3 $d/fts2.db < $d/fts.sql'" >/dev/null
	echo
	echo "| $n entries (p50) | mira | other | ratio |"
	echo "|---|---|---|---|"
	row "recall vs sqlite3 FTS5 query" "$d/recall.json"
	row "recall answered by mira-index watch vs sqlite3 FTS5 query" "$d/served.json"
	row "the same, each of the $(wc -l < "$d/queries.txt") generated queries (median of all runs)" "$d/served-all.json"
	row "recall answered by mira-index watch, hybrid vs --mode lexical" "$d/served-modes.json"
	row "recall vs rg -l -w" "$d/recall-rg.json"
	row "recall hybrid vs --mode lexical" "$d/recall-modes.json"
	row "remember 1 entry vs git add+commit" "$d/remember.json"
	row "no-change freshness (mira-index update) vs git status" "$d/fresh.json"
	row "index rebuild vs FTS5 table load" "$d/rebuild.json"
	if [ -n "$mcpline" ]; then
		echo
		echo "$mcpline"
		# The CLI's, from the served runs above: every generated query, a
		# process per call, answered by mira-index watch.
		python3 -c "import json,sys,statistics as s
t=sorted(x*1000 for f in sys.argv[2:] for x in json.load(open(f))['results'][0]['times'])
q=s.quantiles(t,n=10,method='inclusive')
print('mira-recall -k 10 (a process per call, answered by mira-index watch): p50 %.2f ms, p90 %.2f ms, mean %.2f ms, n=%d; one process without a watcher, first query: p50 %.2f ms'
      % (s.median(t), q[8], s.mean(t), len(t), json.load(open(sys.argv[1]))['results'][0]['median']*1000))" "$d/recall.json" "$d"/served-q*.json
	fi
done

# --- The built-in embedder alone: texts embedded per second on all cores,
# and fitting a model on 100,000 texts (Go benchmarks, embed/bench_test.go).
echo
echo "## built-in embedder (go test -bench, ~30-word texts)"
go test ./embed -run '^$' -bench 'EmbedHashing|EmbedModel|EmbedSequence|Fit100k' -benchtime 3x |
	grep -E '^Benchmark' | sed 's/^/    /'

# --- mira-context: planning 1,000 candidates of a few KB into an 8k budget,
# beside merely counting their tokens once with the same tokenizer.
echo
echo "## mira-context: 1,000 candidates of ~3 KB, 8k budget"
go build -o "$work/tokcount" ./scripts/tokcount
python3 scripts/gen.py candidates 1000 > "$work/cands.jsonl"
echo "input: $(wc -c < "$work/cands.jsonl") bytes"
hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$work/ctx-heavy.json" \
	"sh -c 'mira-context --no-store --mode heavy --budget 8000 < $work/cands.jsonl'" \
	"sh -c '$work/tokcount < $work/cands.jsonl'" >/dev/null
hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$work/ctx-light.json" \
	"sh -c 'mira-context --no-store --mode light --budget 8000 < $work/cands.jsonl'" \
	"sh -c '$work/tokcount < $work/cands.jsonl'" >/dev/null
echo
echo "| 1,000 candidates (p50) | mira-context | tokenize once | ratio |"
echo "|---|---|---|---|"
row "plan, heavy mode (full bodies) vs counting every text" "$work/ctx-heavy.json"
row "plan, light mode (cards) vs counting every text" "$work/ctx-light.json"

# --- mira-proxy under load: 50 conversations × 5 turns, half streamed,
# against a local fake upstream, on a store of 10k entries; every turn
# stored exactly once, the store clean, and the time the proxy adds over
# calling the upstream directly (cmd/internal/proxy/load_test.go).
echo
echo "## mira-proxy: 50 conversations × 5 turns on 10k entries"
MIRA_PROXY_LOAD=${MIRA_PROXY_LOAD:-50,5,10000} go test -count=1 -run '^TestLoad$' -v ./cmd/internal/proxy/ | sed -n 's/^ *load_test.go:[0-9]*: //p'
