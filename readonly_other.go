//go:build !unix

package mira

// writable assumes a directory can be written where access(2) is missing;
// a write that fails still reports why.
func writable(string) bool { return true }
