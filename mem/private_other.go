//go:build !unix

package mem

import "os"

// Permission bits mean nothing here: a store is as private as its
// directory's access control list makes it.
const unixModes = false

func ownedBySelf(os.FileInfo) bool { return false }
