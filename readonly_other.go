//go:build !unix

package mira

import "os"

// writable assumes a directory can be written where access(2) is missing;
// a write that fails still reports why.
func writable(string) bool { return true }

// privateDir makes dir when asked to; its access control list, not
// permission bits, keeps it private here.
func privateDir(dir string, _ int, create bool) error {
	if create {
		return os.MkdirAll(dir, 0o700)
	}
	return nil
}

// ownDir reports whether dir is a directory: its access control list says
// who may write it.
func ownDir(dir string, _ int) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
