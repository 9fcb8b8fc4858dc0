#!/usr/bin/env bash
# make interop: drive bin/mira-mcp with a client the project did not write,
# the official TypeScript MCP SDK, over stdio and Streamable HTTP
# (scripts/interop/mcp.mjs), and bin/mira-proxy with the official openai
# npm package, plain and streamed, in front of a fake upstream
# (scripts/interop/proxy.mjs). The packages are installed from npm once per
# version into a cache outside the repository and reused from there.
#
# Then the MCP Inspector's CLI mode (the command line of the official
# debugging tool, which converts each --tool-arg by the tool's schema)
# lists the tools, remembers with tags, recalls, lists the resources,
# reads one and forgets over stdio (scripts/interop/inspector.sh).
#
#   MIRA_INTEROP_SDK=1.32.2      the @modelcontextprotocol/sdk version to use
#   MIRA_INTEROP_OPENAI=5.23.2   the openai version to use
#   MIRA_INTEROP_INSPECTOR=0.15.0  the @modelcontextprotocol/inspector version
set -euo pipefail
version=${MIRA_INTEROP_SDK:-1.32.2}

for tool in node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "interop: skipped: $tool not found"
		exit 0
	fi
done
cd "$(dirname "$0")/.."
for b in mira-mcp mira-proxy mira-remember; do
	if [ ! -x bin/$b ]; then
		echo "interop: bin/$b not built (run make build)" >&2
		exit 1
	fi
done

. scripts/interop/npmcache.sh
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mira-interop/$version
npm_cached @modelcontextprotocol/sdk "$version" "$cache"

# ES modules ignore NODE_PATH: mcp.mjs imports the SDK from this directory
# by absolute path, through the package's export map.
MIRA_INTEROP_MODULES=$cache/node_modules MIRA_MCP=$PWD/bin/mira-mcp node scripts/interop/mcp.mjs

openai_version=${MIRA_INTEROP_OPENAI:-5.23.2}
ocache=${XDG_CACHE_HOME:-$HOME/.cache}/mira-interop/openai-$openai_version
npm_cached openai "$openai_version" "$ocache"
MIRA_INTEROP_MODULES=$ocache/node_modules MIRA_PROXY=$PWD/bin/mira-proxy node scripts/interop/proxy.mjs

scripts/interop/inspector.sh
