package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestWriteReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	for _, durable := range []bool{true, false} {
		for _, data := range []string{"first version\n", "second, longer version\n", ""} {
			if err := Write(name, []byte(data), 0o640, durable); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(name)
			if err != nil || string(got) != data {
				t.Fatalf("ReadFile = %q, %v; want %q", got, err, data)
			}
			if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640", fi.Mode().Perm())
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

func TestWriteWithFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := Write(name, []byte("old"), 0o644, true); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteWith(name, 0o644, true, func(w io.Writer) error {
		w.Write([]byte("half of the new"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteWith error = %v, want boom", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "old" {
		t.Errorf("after a failed write the file holds %q, want the old content", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	if err := Write(filepath.Join(dir, "missing", "f"), nil, 0o644, true); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

// BenchmarkWriteSmall writes a file of the size of a memory, as a bulk load
// writes a hundred thousand of them; its B/op shows the cost of buffering.
func BenchmarkWriteSmall(b *testing.B) {
	name := filepath.Join(b.TempDir(), "f")
	data := make([]byte, 600)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(name, data, 0o644, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCreate: Create makes a new file with the data, refuses an existing
// one without touching it, and returns the stat data a later stat finds,
// which a commit records in git's index in place of that stat.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "new.md")
	fi, err := Create(name, []byte("hello\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Name() != st.Name() || fi.Size() != st.Size() || fi.Mode() != st.Mode() || !fi.ModTime().Equal(st.ModTime()) || fi.IsDir() {
		t.Errorf("Create's stat: %s %d %v %v; Lstat: %s %d %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime(), st.Name(), st.Size(), st.Mode(), st.ModTime())
	}
	if !reflect.DeepEqual(fi.Sys(), st.Sys()) {
		t.Errorf("Create's system stat %+v, Lstat's %+v", fi.Sys(), st.Sys())
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if _, err := Create(name, []byte("other\n"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over an existing file: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "hello\n" {
		t.Errorf("the existing file became %q", got)
	}
	empty := filepath.Join(dir, "empty.md")
	if fi, err := Create(empty, nil, 0o600); err != nil || fi.Size() != 0 {
		t.Errorf("Create of an empty file: %v, %v", fi, err)
	}
	if _, err := Create(filepath.Join(dir, "missing", "x.md"), []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Create in a missing directory: %v, want fs.ErrNotExist", err)
	}
}
