// Package version tells which build of Mira is running, from what the Go
// toolchain recorded in the binary: the module's version and the VCS
// revision it was built from. It imports nothing else of Mira, so that
// the small clients (package relay) can answer --version themselves.
package version

import (
	"runtime/debug"
	"strings"
)

// Version returns the module version (a tag such as v1.2.0, or the
// pseudo-version the go command derives from the commit), else the VCS
// revision, else "dev".
func Version() string {
	v, rev, _ := info()
	switch {
	case v != "":
		return v
	case rev != "":
		return "dev-" + short(rev)
	}
	return "dev"
}

// Line is what --version prints for command: its name, Version, and the
// revision with its "modified" mark and the Go version, when the build
// recorded them.
func Line(command string) string {
	v, rev, modified := info()
	if v == "" {
		v = "dev"
	}
	var b strings.Builder
	b.WriteString(command + " " + v)
	var extra []string
	if rev != "" {
		r := "revision " + rev
		if modified {
			r += ", modified"
		}
		extra = append(extra, r)
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.GoVersion != "" {
		extra = append(extra, bi.GoVersion)
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return b.String()
}

// info reads the build information: the module version ("" for a
// development build without one), the VCS revision and whether the
// working tree had changes.
func info() (v, rev string, modified bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", "", false
	}
	if bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return v, rev, modified
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Requested reports whether args ask for the version: --version before
// any "--". A command answers it before anything else.
func Requested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--version":
			return true
		}
	}
	return false
}
