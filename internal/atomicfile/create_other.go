//go:build !linux

package atomicfile

import "os"

func create(name string, data []byte, perm os.FileMode) (os.FileInfo, error) {
	return createFile(name, data, perm)
}
