//go:build unix

package mem

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 16 << 10, 16<<10 + 1, 70 << 10, 300 << 10} {
		want := bytes.Repeat([]byte("abcdefg\n"), n/8+1)[:n]
		p := filepath.Join(dir, "f.md")
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second read reuses a pooled buffer
			got, err := readFile(p)
			if err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes: read %d bytes, not the file's", n, len(got))
			}
		}
	}
	_, err := readFile(filepath.Join(dir, "missing.md"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want not exist", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "missing.md") {
		t.Errorf("missing file: %v does not name the file", err)
	}
	if _, err := readFile(dir); err == nil {
		t.Error("reading a directory succeeded")
	}
}

func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.md")
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Skip("cannot make a FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := readFile(p); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Log("an empty FIFO with no writer reads as empty") // Linux: open succeeds, read sees EOF
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO with no writer waits forever")
	}
}
