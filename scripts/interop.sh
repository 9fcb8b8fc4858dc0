#!/usr/bin/env bash
# make interop: drive bin/mira-mcp with a client the project did not write,
# the official TypeScript MCP SDK, over stdio and Streamable HTTP
# (scripts/interop/mcp.mjs). The SDK is installed from npm once per version
# into a cache outside the repository and reused from there.
#
#   MIRA_INTEROP_SDK=1.32.2   the @modelcontextprotocol/sdk version to use
set -euo pipefail
version=${MIRA_INTEROP_SDK:-1.32.2}

for tool in node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "interop: skipped: $tool not found"
		exit 0
	fi
done
cd "$(dirname "$0")/.."
if [ ! -x bin/mira-mcp ]; then
	echo "interop: bin/mira-mcp not built (run make build)" >&2
	exit 1
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/mira-interop/$version
if [ ! -f "$cache/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
	echo "interop: installing @modelcontextprotocol/sdk@$version into $cache"
	mkdir -p "$(dirname "$cache")"
	# Install beside the cache and move it into place, so that an
	# interrupted install is never taken for a complete one.
	tmp=$(mktemp -d "$cache.partial.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	npm install --prefix "$tmp" --no-audit --no-fund --save-exact "@modelcontextprotocol/sdk@$version"
	rm -rf "$cache"
	mv "$tmp" "$cache"
fi

# ES modules ignore NODE_PATH: mcp.mjs imports the SDK from this directory
# by absolute path, through the package's export map.
MIRA_INTEROP_MODULES=$cache/node_modules MIRA_MCP=$PWD/bin/mira-mcp node scripts/interop/mcp.mjs
