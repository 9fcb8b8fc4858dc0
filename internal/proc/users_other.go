//go:build !linux

package proc

// GitAt cannot tell here: known is false, and a git lock file then ends
// only by its age.
func GitAt(path string, dirs ...string) (using, known bool) { return false, false }
