//go:build !unix

package mem

import "os"

func readFile(path string, size int64) ([]byte, error) { return os.ReadFile(path) }
