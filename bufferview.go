package mira

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/mem"
)

// bufferViewDir holds, per conversation, which of its turns an agent no
// longer shows its model (plans/buffer/<scope>.json). Like the plan log
// it is not committed: it changes what the model sees, never what the
// store keeps.
const bufferViewDir = "plans/buffer"

// bufferViewMax bounds the file read back.
const bufferViewMax = 4 << 20

// BufferView returns what an agent recorded about the turns of a
// conversation its model no longer sees, nil when nothing was.
func (m *Memory) BufferView(scope string) ([]byte, error) {
	if err := mem.ValidScope(scope); err != nil {
		return nil, &InvalidError{Err: err}
	}
	name := filepath.Join(m.home, filepath.FromSlash(bufferViewDir), scope+".json")
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if fi.Size() > bufferViewMax {
		return nil, fmt.Errorf("%s: %d bytes, more than a buffer view holds", name, fi.Size())
	}
	return os.ReadFile(name)
}

// SetBufferView records data as the conversation's buffer view, replacing
// the last one atomically; nil removes it.
func (m *Memory) SetBufferView(scope string, data []byte) error {
	if err := mem.ValidScope(scope); err != nil {
		return &InvalidError{Err: err}
	}
	dir := filepath.Join(m.home, filepath.FromSlash(bufferViewDir))
	name := filepath.Join(dir, scope+".json")
	if data == nil {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(dir, mem.DirMode); err != nil {
		return err
	}
	return atomicfile.Write(name, data, mem.FileMode, true)
}
