#!/usr/bin/env bash
# The MCP Inspector's CLI mode against bin/mira-mcp over stdio: tools/list
# (nine tools, no union of types in any schema), remember with tags,
# recall, resources/list, resources/read and forget, and the code tools
# in a small project (the Inspector converts their integer and boolean
# arguments by the schema), one line per check.
# Run by scripts/interop.sh (make interop), which checks node and npm;
# the Inspector is installed once per version into the cache outside the
# repository, as `npx @modelcontextprotocol/inspector` would fetch it.
#
#   MIRA_INTEROP_INSPECTOR=0.15.0   the @modelcontextprotocol/inspector version
#   MIRA_MCP=bin/mira-mcp           the server
#
# 0.15.0 is the newest release that runs on Node.js 20; later ones need
# Node.js 22 (their package says so), and take the same CLI flags.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${MIRA_INTEROP_INSPECTOR:-0.15.0}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mira-interop/inspector-$version
. scripts/interop/npmcache.sh
npm_cached @modelcontextprotocol/inspector "$version" "$cache"
inspector=$cache/node_modules/.bin/mcp-inspector
server=${MIRA_MCP:-$PWD/bin/mira-mcp} # the server binary

# A store of its own, and nothing of the user's configuration.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/none.yaml"
export MIRA_HOME=$work/home MIRA_CONFIG=$work/none.yaml MIRA_PROJECT=interop MIRA_SERVE=0
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

failures=0
# inspect ARGS... runs the Inspector's CLI with mira-mcp and keeps its
# output (JSON) in $work/out.json.
inspect() {
	if ! "$inspector" --cli "$server" "$@" >"$work/out.json" 2>"$work/err"; then
		echo "inspector: mcp-inspector --cli $server $* failed:" >&2
		cat "$work/err" >&2
	fi
}
# check WHAT EXPR prints ok or FAIL: EXPR is JavaScript over r, the
# output of the last inspect.
check() {
	if node -e 'const fs = require("fs"); let r; try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")) } catch (e) { process.exit(1) } process.exit(eval(process.argv[2]) ? 0 : 1)' "$work/out.json" "$2"; then
		echo "ok   inspector: $1"
	else
		echo "FAIL inspector: $1"
		head -c 2000 "$work/out.json" "$work/err"
		failures=$((failures + 1))
	fi
}
# value EXPR prints the JavaScript EXPR over r.
value() {
	node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(eval(process.argv[2]))' "$work/out.json" "$1" 2>/dev/null || true
}

inspect --method tools/list
check "tools/list lists the nine tools" 'r.tools.map(t => t.name).sort().join() === "code_map,code_search,code_symbol,context,forget,list,pin,recall,remember"'
check "no schema has a union of types" '!/"type":\[/.test(JSON.stringify(r.tools))'

inspect --method tools/call --tool-name remember --tool-arg "text=We chose PostgreSQL for the shop database" --tool-arg 'tags=["db","interop"]'
check "remember with tags" '!r.isError && r.structuredContent.memories[0].tags.join() === "db,interop"'
id=$(value 'r.structuredContent.memories[0].id')

inspect --method tools/call --tool-name recall --tool-arg query=PostgreSQL --tool-arg k=5 --tool-arg 'tags=["db"]'
check "recall finds it" "!r.isError && r.structuredContent.memories[0].id === '$id'"

inspect --method resources/list
check "resources/list gives it" "r.resources[0].uri === 'mira://memory/$id' && r.resources[0].mimeType === 'text/markdown' && r.resources[0].title.startsWith('We chose PostgreSQL')"

inspect --method resources/read --uri "mira://memory/$id"
check "resources/read reads it" "r.contents[0].text.includes('id: $id') && r.contents[0].text.includes('We chose PostgreSQL')"

inspect --method tools/call --tool-name forget --tool-arg 'ids=["'"$id"'"]' --tool-arg reason=interop
check "forget" "!r.isError && r.structuredContent.forgotten[0].id === '$id'"

inspect --method resources/list
check "resources/list no longer gives it" 'r.resources.length === 0'

# The code tools answer about the project mira-mcp runs in, with an index
# in a cache of their own.
mkdir -p "$work/proj/billing" "$work/proj/cmd"
printf 'module example.com/shop\n' >"$work/proj/go.mod"
printf 'package billing\n\n// ExportInvoices writes the invoices as CSV.\nfunc ExportInvoices() error {\n\treturn nil\n}\n' >"$work/proj/billing/export.go"
printf 'package main\n\nimport "example.com/shop/billing"\n\nfunc main() { billing.ExportInvoices() }\n' >"$work/proj/cmd/main.go"
export XDG_CACHE_HOME=$work/cache
cd "$work/proj"
inspect --method tools/call --tool-name code_search --tool-arg "query=export invoices" --tool-arg k=3 --tool-arg excerpts=true
check "code_search finds the definition" '!r.isError && r.structuredContent.touchpoints[0].name === "ExportInvoices" && r.structuredContent.touchpoints[0].excerpt.includes("return nil")'
inspect --method tools/call --tool-name code_symbol --tool-arg ref=ExportInvoices --tool-arg show=callers --tool-arg depth=1
check "code_symbol gives its caller" '!r.isError && r.structuredContent.calls[0].from.name === "main" && r.structuredContent.calls[0].path === "cmd/main.go"'
inspect --method tools/call --tool-name code_map --tool-arg budget=300
check "code_map within its budget" '!r.isError && r.structuredContent.text.includes("billing/") && r.structuredContent.tokens <= 300'

if [ "$failures" -gt 0 ]; then
	echo "inspector: $failures checks failed" >&2
	exit 1
fi
