#!/usr/bin/env bash
# make bench: retrieval quality on LoCoMo (dev split) and whole-process
# timings beside the tools a user would reach for instead (ripgrep, SQLite
# FTS5, git), on generated stores of 10k and 100k entries.
#
#   SIZES="1000 10000 100000"  store sizes to time (default all three);
#                          SIZES="1000 10000 100000 1000000" adds a million
#                          entries: opt-in, some 9 GB of disk under $TMPDIR
#                          (the store's files, its git objects and index,
#                          the FTS5 databases) and some 15 minutes more
#   BENCH_SVG=docs/bench.svg   where the chart of the timings goes
#   STORES_ONLY=1              only the generated stores (no embedder, context)
#   SIZES="" LOCOMO=/none      everything but the stores and LoCoMo
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
SIZES=${SIZES-"1000 10000 100000"}
RUNS=${RUNS:-10}
SERVED_RUNS=${SERVED_RUNS:-200}
LOCOMO=${LOCOMO:-$root/../shared/bench/locomo}
work=$(mktemp -d "${TMPDIR:-/tmp}/mira-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p docs
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

# --- Whole-process timings on generated stores, beside sqlite3 FTS5 and
# git in the same run. Times are hyperfine medians; peak RSS is the largest
# of three runs under /usr/bin/time (hyperfine gives none). Every row goes
# to $work/rows.tsv, from which scripts/benchchart.py draws the SVG chart.
go build -o "$work/mcpbench" ./scripts/mcpbench
rows=$work/rows.tsv
: > "$rows"
p50() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; print(' '.join('%.2f' % (x['median']*1000) for x in r))" "$1"; }
# quiet CMD...: CMD without its stderr (hyperfine's warnings about a busy
# machine), kept in $work/warnings.
quiet() { "$@" 2>>"$work/warnings"; }
# rss CMD...: the peak resident set of CMD in MB, the largest of 3 runs.
rss() {
	local m=0 k
	for _ in 1 2 3; do
		/usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1 </dev/null || true
		k=$(tail -1 "$work/rss"); [ "$k" -gt "$m" ] 2>/dev/null && m=$k
	done
	python3 -c "print('%.1f' % ($m/1024))"
}
# row SIZE LABEL JSON RSS_A RSS_B: a table row from hyperfine's two results.
row() {
	read -r a b <<<"$(p50 "$3")"
	local r; r=$(python3 -c "print('%.2f' % ($a/$b))")
	printf '| %s | %s ms (%s MB) | %s ms (%s MB) | %s |\n' "$2" "$a" "$4" "$b" "$5" "$r"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$a" "$b" "$4" "$5" >> "$rows"
}
# ratio_row LABEL JSON: a table row of two timings and their ratio, without
# memory (the planning table).
ratio_row() {
	read -r a b <<<"$(p50 "$2")"
	printf '| %s | %s ms | %s ms | %s |\n' "$1" "$a" "$b" "$(python3 -c "print('%.2f' % ($a/$b))")"
}
# once LABEL CMD...: one timed run (ms) and its peak RSS (MB), for the
# steps too long to repeat.
once() {
	local t0 t1
	# What the step before left for the disk is written first, untimed: a
	# million files and their pack were still going out while the next
	# step ran, on the same two cores.
	sync
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$work/rss" "${@:2}" >/dev/null 2>"$work/once.err" </dev/null
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000000 )) $(python3 -c "print('%.1f' % ($(tail -1 "$work/rss")/1024))")"
}
# thrice CMD...: once, three times; the median time and the largest peak RSS.
# A whole-store step here can take a third longer in one run than in the
# next, on the same code; one run of it said more about the machine.
thrice() {
	local times=() rss=0 t r
	for _ in 1 2 3; do
		read -r t r <<<"$(once "$@")"
		times+=("$t")
		rss=$(python3 -c "print(max($rss, $r))")
	done
	echo "$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p) $rss"
}
# fresh_rebuild: one timed mira-index rebuild of $MIRA_HOME's index from
# nothing, the index removed first, untimed.
fresh_rebuild() {
	rm -rf "$MIRA_HOME/.index"
	once rebuild mira-index rebuild
}
# first_index_recall: one timed first recall of $q that starts the server,
# which builds the index, and the server's peak RSS (MB); the server is
# stopped after.
first_index_recall() {
	local t pid
	read -r t _ <<<"$(once import-recall mira-recall -k 10 "$q")"
	pid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pid'])" "$MIRA_HOME/.index/watch")
	echo "$t $(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$pid/status")"
	stop_server
}
# stop_server: ends the server a recall started for $MIRA_HOME, if any.
stop_server() {
	local pid
	pid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pid'])" "$MIRA_HOME/.index/watch" 2>/dev/null) || return 0
	if grep -q -- '--on-demand' "/proc/$pid/cmdline" 2>/dev/null; then
		kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	fi
}
trap 'stop_server 2>/dev/null; rm -rf "$work"' EXIT
for n in $SIZES; do
	d=$work/gen$n
	mkdir -p "$d"
	python3 scripts/gen.py "$n" "$d"
	export MIRA_HOME=$d/home
	echo
	echo "## $n entries"
	# Loading the store: mira-remember --jsonl (one commit) beside loading
	# the same texts into an FTS5 table.
	read -r lt lr <<<"$(once load sh -c "exec mira-remember --jsonl < $d/records.jsonl")"
	read -r st sr <<<"$(once fts sqlite3 "$d/fts.db" ".read $d/fts.sql")"
	q=$(head -1 "$d/queries.txt")
	# The first recall after the import: it starts the server, which
	# builds the index and then answers; its peak RSS is the server's.
	# Beside builds of the same store's index from nothing, the two
	# taken in turn, three times each, and the median of each: run once
	# each, one after the other, the second ran on files the first had
	# just read, and at a million the first reader after a pause took
	# up to twice as long (docs/performance.md). Each starts without an
	# index, whose embedding cache would spare it most of the work; the
	# first recall's first run is the one right after the import.
	its=() bts=() itr=0 br=0
	for k in 1 2 3; do
		[ "$k" -gt 1 ] && rm -rf "$MIRA_HOME/.index"
		read -r t r <<<"$(first_index_recall)"
		its+=("$t"); itr=$(python3 -c "print(max($itr, $r))")
		read -r t r <<<"$(fresh_rebuild)"
		bts+=("$t"); br=$(python3 -c "print(max($br, $r))")
	done
	it=$(printf '%s\n' "${its[@]}" | sort -n | sed -n 2p)
	bt=$(printf '%s\n' "${bts[@]}" | sort -n | sed -n 2p)
	echo "first recalls after the load ${its[*]} ms, rebuilds ${bts[*]} ms" >&2
	read -r s2t s2r <<<"$(thrice fts sh -c "rm -f '$d/fts2.db' && exec sqlite3 '$d/fts2.db' '.read $d/fts.sql'")"
	git -C "$MIRA_HOME" config user.name bench; git -C "$MIRA_HOME" config user.email bench@localhost
	w1=${q%% *}
	# Each word as an FTS5 string ("v1.5" is no bareword), ORed like
	# mira-recall's query, in a file so no quoting stands between.
	echo "SELECT id FROM m WHERE m MATCH '$(echo "$q" | sed "s/^/\"/; s/ /\" OR \"/g; s/\$/\"/")' ORDER BY bm25(m) LIMIT 10;" > "$d/q.sql"
	fts="sqlite3 $d/fts.db '.read $d/q.sql'"
	runs=$RUNS; [ "$n" -ge 100000 ] && runs=$(( RUNS < 5 ? RUNS : 5 ))
	warm=2
	# At a million a recall in its own process or rg takes seconds: three
	# runs after one to warm up.
	[ "$n" -ge 1000000 ] && runs=$(( RUNS < 3 ? RUNS : 3 )) && warm=1
	h="quiet hyperfine -N --style none --warmup $warm --runs $runs"
	hs="quiet hyperfine -N --style none --warmup 10 --runs $SERVED_RUNS"
	sqr=$(rss sqlite3 "$d/fts.db" ".read $d/q.sql")

	# A recall in its own process (no server, MIRA_SERVE=0).
	MIRA_SERVE=0 $h --export-json "$d/cold.json" "mira-recall -k 10 '$q'" "$fts" >/dev/null
	coldr=$(MIRA_SERVE=0 rss mira-recall -k 10 "$q")
	# The first default recall, which starts the server and waits for it.
	read -r ft fr <<<"$(once first mira-recall -k 10 "$q")"
	# The default recall as installed: answered by that server.
	$hs --export-json "$d/recall.json" "mira-recall -k 10 '$q'" "$fts" >/dev/null
	recr=$(rss mira-recall -k 10 "$q")
	$hs --export-json "$d/modes.json" "mira-recall -k 10 '$q'" "mira-recall --mode lexical -k 10 '$q'" >/dev/null
	lexr=$(rss mira-recall --mode lexical -k 10 "$q")
	# Every generated query, each 10 times beside its FTS5 query; the row
	# is the median of all those runs.
	i=0
	while read -r qq; do
		i=$((i + 1))
		echo "SELECT id FROM m WHERE m MATCH '$(echo "$qq" | sed "s/^/\"/; s/ /\" OR \"/g; s/\$/\"/")' ORDER BY bm25(m) LIMIT 10;" > "$d/q$i.sql"
		quiet hyperfine -N --style none --warmup 1 --runs 10 --export-json "$d/served-q$i.json" "mira-recall -k 10 '$qq'" \
			"sqlite3 $d/fts.db '.read $d/q$i.sql'" </dev/null >/dev/null
	done < "$d/queries.txt"
	python3 -c "import json,sys,statistics as s; t=[[],[]]
for f in sys.argv[2:]:
    for k,r in enumerate(json.load(open(f))['results']): t[k]+=r['times']
json.dump({'results':[{'median':s.median(x)} for x in t]},open(sys.argv[1],'w'))" "$d/served-all.json" "$d"/served-q*.json
	srvpid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pid'])" "$MIRA_HOME/.index/watch")
	srvr=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$srvpid/status")
	# What the server holds after those recalls, and once idle: it gives
	# freed memory back a second after its last recall.
	srvbusy=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$srvpid/status")
	sleep 2
	srvidle=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$srvpid/status")
	$h --export-json "$d/rg.json" "mira-recall -k 10 '$q'" "rg -l -i -w $w1 $MIRA_HOME/entries" >/dev/null
	rgr=$(rss rg -l -i -w "$w1" "$MIRA_HOME/entries")
	# Remembering one memory, the index brought up to date by the server,
	# beside git add && git commit of one file in the same repository.
	$h --export-json "$d/remember.json" \
		"sh -c 'mira-remember \"bench note \$(date +%s%N)\" >/dev/null'" \
		"sh -c 'mkdir -p $MIRA_HOME/other; f=$MIRA_HOME/other/bench-\$(date +%s%N).md; echo x > \$f && git -C $MIRA_HOME add \$f && git -C $MIRA_HOME commit -q -m bench'" >/dev/null
	remr=$(rss mira-remember "bench note rss")
	gitr=$(rss sh -c "f=$MIRA_HOME/other/rss-\$(date +%s%N).md; echo x > \$f && git -C $MIRA_HOME add \$f && git -C $MIRA_HOME commit -q -m bench")
	# The MCP server, the index warm in it, before the server goes.
	mcpline=
	if [ "$n" -lt 100000 ]; then
		nq=$(wc -l < "$d/queries.txt")
		mcpline=$("$work/mcpbench" -rss -bin "$root/bin/mira-mcp" -home "$MIRA_HOME" -k 10 \
			-rounds $(( (SERVED_RUNS + nq - 1) / nq )) "$d/queries.txt")
	fi
	stop_server
	# No change: what every command without a server checks first. Wait
	# out the 2 s in which a just-written file is looked at again.
	MIRA_SERVE=0 mira-index update; sleep 3
	$h --export-json "$d/fresh.json" "mira-index update" "git -C $MIRA_HOME status --porcelain" >/dev/null
	updr=$(rss mira-index update)
	gstr=$(rss git -C "$MIRA_HOME" status --porcelain)
	echo
	echo "| $n entries (p50, peak RSS) | mira | other | ratio |"
	echo "|---|---|---|---|"
	row "$n" "recall (default: served) vs sqlite3 FTS5 query" "$d/recall.json" "$recr" "$sqr"
	row "$n" "the same, each of the $(wc -l < "$d/queries.txt") generated queries" "$d/served-all.json" "$recr" "$sqr"
	row "$n" "recall, hybrid vs --mode lexical (served)" "$d/modes.json" "$recr" "$lexr"
	row "$n" "recall in its own process (MIRA_SERVE=0) vs sqlite3 FTS5 query" "$d/cold.json" "$coldr" "$sqr"
	row "$n" "recall (served) vs rg -l -w" "$d/rg.json" "$recr" "$rgr"
	row "$n" "remember 1 entry vs git add && git commit" "$d/remember.json" "$remr" "$gitr"
	row "$n" "no-change freshness (mira-index update) vs git status" "$d/fresh.json" "$updr" "$gstr"
	served=$(p50 "$d/recall.json" | cut -d' ' -f1)
	printf '| %s | %s ms (%s MB) | %s ms (%s MB) | %s |\n' "first recall, which starts the server (its peak RSS), vs the next (served)" \
		"$ft" "$srvr" "$served" "$recr" "$(python3 -c "print('%.1f' % ($ft/$served))")"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "first recall, starting the server, vs the next" "$ft" "$served" "$srvr" "$recr" >> "$rows"
	printf '| %s | %s MB peak, %s MB after the recalls, %s MB idle | | |\n' "the server's RSS" "$srvr" "$srvbusy" "$srvidle"
	for r in "index rebuild from nothing vs FTS5 table load|$bt|$s2t|$br|$s2r" "load (remember --jsonl, one commit) vs FTS5 table load|$lt|$st|$lr|$sr" \
		"first recall after the load (the server builds the index) vs index rebuild from nothing|$it|$bt|$itr|$br"; do
		IFS='|' read -r label a b ra rb <<<"$r"
		printf '| %s | %s ms (%s MB) | %s ms (%s MB) | %s |\n' "$label" "$a" "$ra" "$b" "$rb" "$(python3 -c "print('%.1f' % ($a/$b))")"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$label" "$a" "$b" "$ra" "$rb" >> "$rows"
	done
	if [ -n "$mcpline" ]; then
		echo
		echo "$mcpline"
	fi
done
if [ -s "$rows" ]; then
	cp "$rows" "${BENCH_TSV:-$root/docs/bench.tsv}"
	# The sizes side by side, as the README shows them.
	echo
	python3 scripts/benchtable.py "$rows" | tee "${BENCH_TABLE:-$root/docs/bench-table.md}"
	python3 scripts/benchchart.py "$rows" > "${BENCH_SVG:-$root/docs/bench.svg}"
	echo
	echo "chart: ${BENCH_SVG:-docs/bench.svg}"
fi

[ "${STORES_ONLY:-0}" = 1 ] && exit 0

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
ratio_row "plan, heavy mode (full bodies) vs counting every text" "$work/ctx-heavy.json"
ratio_row "plan, light mode (cards) vs counting every text" "$work/ctx-light.json"

# --- mira-proxy under load: 50 conversations × 5 turns, half streamed,
# against a local fake upstream, on a store of 10k entries; every turn
# stored exactly once, the store clean, and the time the proxy adds over
# calling the upstream directly (cmd/internal/proxy/load_test.go).
echo
echo "## mira-proxy: 50 conversations × 5 turns on 10k entries"
# Once against an upstream that answers at once (a saturation test), once
# against one that takes 100 ms, as a model takes at least to its first
# token.
# With 100 ms, once in lockstep (every conversation sends at once) and
# once with the conversations' arrivals spread over the round trip.
# Each 100 ms run again with the proxy passing the calls through
# (X-Mira: off): the hop alone under the same load, on the same machine.
for run in 0s,0,0 100ms,0,0 100ms,0,1 100ms,1,0 100ms,1,1; do
	IFS=, read -r delay spread off <<<"$run"
	MIRA_PROXY_LOAD=${MIRA_PROXY_LOAD:-50,5,10000} MIRA_PROXY_LOAD_DELAY=$delay MIRA_PROXY_LOAD_SPREAD=$spread MIRA_PROXY_LOAD_OFF=$off \
		go test -count=1 -run '^TestLoad$' -v ./cmd/internal/proxy/ | sed -n 's/^ *load_test.go:[0-9]*: //p'
done
# The proxy's own work for one request with nothing else running.
go test -run '^$' -bench '^BenchmarkInject$' -benchtime 300x ./cmd/internal/proxy/ | grep '^Benchmark'
# A burst and a kill -9 in the middle of it: 64 conversations calling as
# fast as an instant upstream answers for 10 s, then SIGKILL. The answered
# turns not yet stored at peak, the proxy's peak RSS, and the answered
# calls whose answer the kill lost, with the age of the oldest
# (scripts/proxyburst).
echo
echo "## mira-proxy: a burst, then kill -9"
go build -o "$work/proxyburst" ./scripts/proxyburst
"$work/proxyburst" -bin "$root/bin/mira-proxy" -clients 64 -for 10s

# --- The code index (mira-code) on the Go toolchain's own sources, about
# 10k files, beside universal-ctags over the same tree in the same run:
# whole-process wall and CPU time (user + sys) and peak RSS from
# /usr/bin/time, one run each (a build takes tens of seconds). The fresh
# build's phases come from the same run, from the JSON record mira-code
# index prints: the definitions phase (walk, read, parse; the parsers take
# the references in the same pass) is the one to set against ctags, which
# finds definitions only; the references (the call graph), the ranking
# model, the history and the save are the rest of the build. Then a
# no-change update, a one-file change made visible to a query, warm
# touchpoints and the open index's heap (Go benchmarks, code/bench_test.go),
# and localization quality when the histories are given (scripts/codeloc.sh).
need ctags universal-ctags
echo
code_src=$(go env GOROOT)/src
if [ -d "$code_src" ]; then
	echo "## code index: GOROOT/src ($(find "$code_src" -type f | wc -l) files)"
	# timed LABEL CMD...: "wall cpu rss" (s, s, MB) of one run of CMD; its
	# output goes to $work/code-LABEL.out.
	timed() {
		/usr/bin/time -f '%e %U %S %M' -o "$work/code-time" "${@:2}" >"$work/code-$1.out" 2>"$work/code-$1.err" </dev/null || {
			echo "$1 failed:" >&2; tail -5 "$work/code-$1.err" >&2; }
		read -r w u s m < <(tail -1 "$work/code-time")
		python3 -c "print('%.2f %.2f %.1f' % ($w, $u + $s, $m / 1024))"
	}
	code_dir=$work/code-index
	code_q="parse a duration string with units"
	read -r cw cc cr <<<"$(timed index mira-code --project-root "$code_src" --index-dir "$code_dir" --no-memory index)"
	read -r tw tc tr <<<"$(timed ctags ctags -R --output-format=json -f - "$code_src")"
	read -r uw uc ur <<<"$(timed update mira-code --project-root "$code_src" --index-dir "$code_dir" --no-memory index)"
	read -r qw qc qr <<<"$(timed query mira-code --project-root "$code_src" --index-dir "$code_dir" --no-memory touchpoints -k 8 "$code_q")"
	echo
	echo "| GOROOT/src | wall | CPU | peak RSS | against ctags -R (wall, CPU) |"
	echo "|---|---|---|---|---|"
	printf '| mira-code index (fresh index), whole process | %s s | %s s | %s MB | %s, %s |\n' "$cw" "$cc" "$cr" \
		"$(python3 -c "print('%.2f' % ($cw/$tw))")" "$(python3 -c "print('%.2f' % ($cc/$tc))")"
	# The phases of that same build, from its JSON record.
	python3 - "$work/code-index.out" "$tw" "$tc" <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
tw, tc = float(sys.argv[2]), float(sys.argv[3])
label = {"definitions": "definitions: walk, read, parse", "references": "references: call graph",
         "ranking": "ranking: words into the model", "history": "history: git log", "save": "save"}
for p in rec.get("phases") or []:
    w, c = p.get("wall_ms", 0) / 1e3, p.get("cpu_ms", 0) / 1e3
    vs = "%.2f, %.2f" % (w / tw, c / tc) if p["name"] == "definitions" and tw > 0 and tc > 0 else ""
    print("| &nbsp;&nbsp;phase %s | %.2f s | %.2f s | | %s |" % (label.get(p["name"], p["name"]), w, c, vs))
PY
	printf '| ctags -R --output-format=json | %s s | %s s | %s MB | 1 |\n' "$tw" "$tc" "$tr"
	printf '| mira-code index, nothing changed | %s s | %s s | %s MB | |\n' "$uw" "$uc" "$ur"
	printf '| mira-code touchpoints in a fresh process (open, update, query) | %s s | %s s | %s MB | |\n' "$qw" "$qc" "$qr"
	python3 - "$work/code-index.out" "$tw" <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
d = [p for p in rec.get("phases") or [] if p["name"] == "definitions"]
if d and float(sys.argv[2]) > 0:
    r = d[0].get("wall_ms", 0) / 1e3 / float(sys.argv[2])
    print()
    print("The definitions phase took %.2f times ctags' wall time: %s." % (r, "faster than ctags" if r <= 1 else "slower than ctags"))
PY
	echo
	echo "Go benchmarks (code/bench_test.go, a copy of the same tree; cpu-ms/op is CPU):"
	go test ./code -run '^$' -bench 'IndexGoroot|UpdateNoChange|OneFileChange|Touchpoints|OpenGoroot' -benchtime 1x -benchmem |
		grep -E '^Benchmark' | sed 's/^/    /'
	go test ./code -run '^$' -bench 'Touchpoints' -benchtime 30x | grep -E '^Benchmark' | sed 's/^/    /'
else
	echo "GOROOT/src not found at $code_src; skipping the code index" >&2
fi
echo
echo "## code localization (scripts/codeloc.sh)"
if [ -n "${MIRA_CODELOC_COBRA:-}${MIRA_CODELOC_FLASK:-}${MIRA_CODELOC_HELDOUT:-}" ]; then
	scripts/codeloc.sh
else
	echo "skipped: set MIRA_CODELOC_COBRA and MIRA_CODELOC_FLASK to bare git directories of spf13/cobra"
	echo "and pallets/flask (git clone --bare), and MIRA_CODELOC_HELDOUT for more; see scripts/codeloc.sh."
fi
