//go:build !linux

package index

import "os"

// openUnnamed cannot make a file without a name here: rebuilds spill
// their vectors (see vecSpill).
func openUnnamed(string) (*os.File, error) { return nil, errNoPlacer }

func nameUnnamed(*os.File, string) error { return errNoPlacer }
