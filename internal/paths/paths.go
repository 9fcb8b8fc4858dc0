// Package paths finds Mira's files: the configuration file and the store.
// It is shared by the full commands and by mira-recall's small client,
// which must find the same store without loading the rest of Mira.
package paths

import (
	"os"
	"path/filepath"
	"strings"
)

// ConfigFile returns the configuration file to read ($MIRA_CONFIG, else
// $XDG_CONFIG_HOME/mira/config.yaml, else ~/.config/mira/config.yaml) and
// whether it was named explicitly: a missing explicit file is an error, a
// missing default one is not.
func ConfigFile(getenv func(string) string) (string, bool) {
	if p := getenv("MIRA_CONFIG"); p != "" {
		return p, true
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		dir = filepath.Join(h, ".config")
	}
	return filepath.Join(dir, "mira", "config.yaml"), false
}

// DefaultHome is the store when nothing names one: $XDG_DATA_HOME/mira,
// i.e. ~/.local/share/mira.
func DefaultHome(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "mira")
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(h, ".local", "share", "mira")
}

// ExpandHome turns a store directory as written by the user (~/ allowed,
// relative to the working directory) into an absolute path.
func ExpandHome(p string) (string, error) {
	if len(p) >= 2 && p[:2] == "~/" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(h, p[2:])
	}
	return filepath.Abs(p)
}

// Home returns the store directory as the user wrote it, by the rule every
// command, the library and mira-recall's client share: the --home flag's
// value, else $MIRA_HOME, else the configuration file's home (configHome,
// called only when needed; nil means none), else DefaultHome. Empty values
// count as unset. The result is not expanded (see ExpandHome): a client
// that asks another process to run its command must know whether it is
// relative.
func Home(flag string, getenv func(string) string, configHome func() (string, error)) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if v := getenv("MIRA_HOME"); v != "" {
		return v, nil
	}
	if configHome != nil {
		h, err := configHome()
		if err != nil || h != "" {
			return h, err
		}
	}
	return DefaultHome(getenv), nil
}

// StoreMarker is the file that says a directory is a Mira store (see
// mem.Marker).
const StoreMarker = ".mira-store"

// StoreIgnoreHead is the first line of the .gitignore Mira writes into
// every store: it recognises the stores made before the marker existed.
const StoreIgnoreHead = "# Derived or transient; never committed.\n"

// IsStore reports whether root is a Mira store: a git repository with the
// marker, or with the .gitignore Mira writes. A client that must not
// write into someone's repository checks this before anything else.
func IsStore(root string) bool {
	if _, err := os.Stat(filepath.Join(root, ".git", "HEAD")); err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(root, StoreMarker)); err == nil {
		return true
	}
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	return err == nil && strings.HasPrefix(string(b), StoreIgnoreHead)
}

// CacheHome is where Mira keeps what it can rebuild: $XDG_CACHE_HOME/mira,
// else the system's user cache directory (~/.cache on Linux) with mira
// appended.
func CacheHome(getenv func(string) string) (string, error) {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "mira"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mira"), nil
}
