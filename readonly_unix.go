//go:build unix

package mira

import "golang.org/x/sys/unix"

// writable reports whether this process may create files in dir (false on
// a read-only mount, or without the permission).
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }
