# npm_cached PACKAGE VERSION DIR installs PACKAGE@VERSION from npm into DIR
# (a cache outside the repository) unless it is there already. It installs
# beside DIR and moves the result into place, so that an interrupted
# install is never taken for a complete one. Sourced by scripts/interop.sh
# and scripts/interop/inspector.sh.
npm_cached() {
	local pkg=$1 version=$2 dir=$3
	if [ -f "$dir/node_modules/$pkg/package.json" ]; then
		return 0
	fi
	echo "interop: installing $pkg@$version into $dir"
	mkdir -p "$(dirname "$dir")"
	npm_cached_tmp=$(mktemp -d "$dir.partial.XXXXXX")
	trap 'rm -rf "$npm_cached_tmp"' EXIT
	npm install --prefix "$npm_cached_tmp" --no-audit --no-fund --save-exact "$pkg@$version"
	rm -rf "$dir"
	mv "$npm_cached_tmp" "$dir"
	trap - EXIT
}
