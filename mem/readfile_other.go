//go:build !unix

package mem

import "os"

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
