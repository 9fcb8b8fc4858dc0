package mem

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadStatUse: entries handed over one after another in the same room
// are those ReadStat returns, and what a reader copied out of one (the
// strings, the tags, the extra fields) stays as it was while the next
// files' front matter is read into the same nodes.
func TestReadStatUse(t *testing.T) {
	st := newTestStore(t)
	files := map[string]string{
		"entries/global/fact/a.md": "---\nid: A1\nkind: fact\nscope: global\ntags: [red, green]\nextracted_from: T1\n---\nfirst body\n",
		"entries/global/note/b.md": "---\nid: B2\nkind: note\nscope: global\nproject: other\ntags: [blue]\n---\nsecond body\n",
		"entries/global/note/c.md": "---\nid: C3\nkind: note\nscope: global\nnote: \"quoted, so the YAML parser reads it\"\n---\nthird\n",
		"entries/global/fact/d.md": "---\nid: D4\nkind: fact\nscope: global\nextracted_from: [T2, T3]\nstatus: active\n---\nfourth body\n",
	}
	order := []string{"entries/global/fact/a.md", "entries/global/note/b.md", "entries/global/note/c.md", "entries/global/fact/d.md"}
	for rel, text := range files {
		p := filepath.Join(st.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type seen struct {
		id, kind, project, body string
		tags                    []string
		fields                  map[string]any
	}
	of := func(e *Entry) seen {
		return seen{e.ID, e.Kind, e.Project, e.Body, e.Tags, e.Fields()}
	}
	var got []seen
	for round := 0; round < 2; round++ { // the second round reuses a room
		for _, rel := range order {
			fi, err := st.ReadStatUse(rel, func(e *Entry) error {
				got = append(got, of(e))
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if fi.Size != int64(len(files[rel])) || fi.ModTime == 0 {
				t.Errorf("%s: stat %+v", rel, fi)
			}
		}
	}
	for i, rel := range append(order, order...) {
		e, _, err := st.ReadStat(rel)
		if err != nil {
			t.Fatal(err)
		}
		if want := of(e); !reflect.DeepEqual(got[i], want) {
			t.Errorf("%s (read %d): got %+v, want %+v", rel, i, got[i], want)
		}
	}
	// A broken file is an error and use is not called.
	bad := filepath.Join(st.Root, "entries", "global", "note", "e.md")
	if err := os.WriteFile(bad, []byte("---\nkind: [\n---\nx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadStatUse("entries/global/note/e.md", func(*Entry) error {
		t.Error("use called for a broken file")
		return nil
	}); err == nil {
		t.Error("a broken file read without error")
	}
}
