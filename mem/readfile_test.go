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
		// Twice (the second read reuses a pooled buffer), with the size
		// unknown, known, and known but stale (the file grew or shrank
		// since it was seen): the whole file each time.
		for _, size := range []int64{-1, -1, int64(n), int64(n), int64(n) / 2, int64(n) + 5} {
			got, err := readFile(p, size)
			if err != nil {
				t.Fatalf("%d bytes, size %d: %v", n, size, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes, size %d: read %d bytes, not the file's", n, size, len(got))
			}
		}
	}
	_, err := readFile(filepath.Join(dir, "missing.md"), -1)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want not exist", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "missing.md") {
		t.Errorf("missing file: %v does not name the file", err)
	}
	if _, err := readFile(dir, -1); err == nil {
		t.Error("reading a directory succeeded")
	}
}

func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.md")
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Skip("cannot make a FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := readFile(p, -1); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Log("an empty FIFO with no writer reads as empty") // Linux: open succeeds, read sees EOF
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO with no writer waits forever")
	}
}
