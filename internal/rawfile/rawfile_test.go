//go:build unix

package rawfile

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
			got, err := ReadSized(p, size)
			if err != nil {
				t.Fatalf("%d bytes, size %d: %v", n, size, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes, size %d: read %d bytes, not the file's", n, size, len(got))
			}
		}
	}
	_, err := ReadSized(filepath.Join(dir, "missing.md"), -1)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want not exist", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "missing.md") {
		t.Errorf("missing file: %v does not name the file", err)
	}
	if _, err := ReadSized(dir, -1); err == nil {
		t.Error("reading a directory succeeded")
	}
}

func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.md")
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Skip("cannot make a FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadSized(p, -1); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Log("an empty FIFO with no writer reads as empty") // Linux: open succeeds, read sees EOF
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO with no writer waits forever")
	}
}

func TestOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	n, err := f.ReadAt(b, 1)
	if string(b[:n]) != "ello" {
		t.Errorf("ReadAt: %q, %v", b[:n], err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 5 || f.Name() != p {
		t.Errorf("Stat: %v, %v; name %q", fi, err, f.Name())
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	_, err = Open(p + ".missing")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != p+".missing" {
		t.Errorf("missing file: %v", err)
	}
	if got, err := Read(p); string(got) != "hello" || err != nil {
		t.Errorf("Read: %q, %v", got, err)
	}
}

// ReadStatWith reads the whole file and gives the size and time Lstat
// gives; a missing file is fs.ErrNotExist with Size -1.
func TestReadStatWith(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 16 << 10, 16<<10 + 1, 300 << 10} {
		want := bytes.Repeat([]byte("abcdefg\n"), n/8+1)[:n]
		p := filepath.Join(dir, "f.md")
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Unix(1700000000, 123456789)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		var got []byte
		st, err := ReadStatWith(p, -1, func(b []byte) error { got = append([]byte(nil), b...); return nil })
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
		fi, _ := os.Lstat(p)
		if st.Size != fi.Size() || st.ModTime != fi.ModTime().UnixNano() {
			t.Fatalf("%d bytes: stat %+v, want size %d time %d", n, st, fi.Size(), fi.ModTime().UnixNano())
		}
		if n > 10 {
			var tl *TooLargeError
			st, err := ReadStatWith(p, 10, func([]byte) error { return nil })
			if !errors.As(err, &tl) || st.Size != int64(n) {
				t.Fatalf("%d bytes, limit 10: %+v, %v", n, st, err)
			}
		}
	}
	st, err := ReadStatWith(filepath.Join(dir, "missing.md"), -1, func([]byte) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) || st.Size != -1 {
		t.Errorf("missing file: %+v, %v", st, err)
	}
}
