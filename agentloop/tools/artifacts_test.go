package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLargeOutputBecomesArtifact(t *testing.T) {
	f := newFixture(t)
	key := fakeAWSKey(11)
	var want strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&want, "row %d\n", i)
		if i == 500 {
			want.WriteString("aws_access_key_id=" + key + "\n")
		}
	}
	f.write(t, "rows.txt", want.String())
	res := f.call(t, "bash", obj{"command": "cat rows.txt"})
	if diff := cmp.Diff([]string{"artifacts/conv1/01TEST0001.txt", "artifacts/conv1/01TEST0001.meta.json"}, res.Artifacts); diff != "" {
		t.Fatalf("artifacts diff (-want +got):\n%s", diff)
	}
	wantContains(t, "note", res.Content,
		"[The output was too long (1002 lines, ", "its first 20 and last 20 lines are shown",
		"artifact://01TEST0001", `read_file {"path": "artifact://01TEST0001", "offset": 21, "limit": 200}`,
		"row 1\n", "row 20\n", "[… 962 lines omitted …]\nrow 982\n", "row 1000\n[exit code 0]")
	if strings.Contains(res.Content, "row 21\n") {
		t.Errorf("the note shows more than the head: %s", res.Content)
	}
	if len(res.Content) > 4<<10 {
		t.Errorf("the note is %d bytes", len(res.Content))
	}

	// The stored artifact holds the whole output, redacted.
	stored, err := os.ReadFile(filepath.Join(f.store, "artifacts", "conv1", "01TEST0001.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), key) {
		t.Error("the artifact holds the secret")
	}
	wantStored := strings.Replace(want.String(), key, "[REDACTED:aws-access-key-id]", 1) + "[exit code 0]"
	if string(stored) != wantStored {
		t.Errorf("artifact differs from the redacted output: %d bytes, want %d", len(stored), len(wantStored))
	}

	// read_file pages through it.
	page := f.call(t, "read_file", obj{"path": "artifact://01TEST0001", "offset": 499, "limit": 3})
	wantPage := "   499\trow 499\n   500\trow 500\n   501\taws_access_key_id=[REDACTED:aws-access-key-id]\n[Lines 499-501 of 1002. To read on, call read_file with offset 502.]"
	if page.Content != wantPage || page.IsError {
		t.Errorf("read_file artifact = %q\nwant %q", page.Content, wantPage)
	}
	if len(page.Artifacts) != 0 {
		t.Errorf("reading an artifact stored another: %v", page.Artifacts)
	}
	// A read longer than a result may be is not stored again.
	whole := f.call(t, "read_file", obj{"path": "artifact://01TEST0001"})
	if len(whole.Artifacts) != 0 || !strings.HasSuffix(whole.Content, "  1002\t[exit code 0]") {
		t.Errorf("read_file of a whole artifact: artifacts %v, content ends %q", whole.Artifacts, whole.Content[max(0, len(whole.Content)-100):])
	}
	// grep searches it.
	g := f.call(t, "grep", obj{"pattern": "^row 77$", "path": "artifact://01TEST0001", "output_mode": "content"})
	if g.Content != "artifact://01TEST0001:77:row 77" {
		t.Errorf("grep artifact = %q", g.Content)
	}
	// An artifact from another scope is found by its id.
	other := &Artifacts{Store: f.store, Scope: "other", NewID: func() string { return "01OTHER" }}
	if _, _, err := other.Save("from elsewhere\n", "txt"); err != nil {
		t.Fatal(err)
	}
	if got := f.call(t, "read_file", obj{"path": "artifact://01OTHER"}).Content; got != "     1\tfrom elsewhere" {
		t.Errorf("read_file of another scope's artifact = %q", got)
	}
}

func TestLongLinesBecomeArtifact(t *testing.T) {
	f := newFixture(t)
	res := f.call(t, "bash", obj{"command": "head -c 20000 /dev/zero | tr '\\0' y; echo"})
	if len(res.Artifacts) != 2 {
		t.Fatalf("artifacts = %v, want one and its description", res.Artifacts)
	}
	if len(res.Content) > 5<<10 {
		t.Errorf("note is %d bytes", len(res.Content))
	}
	wantContains(t, "note", res.Content, "(1 line, 19.5 KiB)", "[exit code 0]")
}

func TestLargeOutputWithoutStore(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Artifacts = nil })
	res := f.call(t, "bash", obj{"command": "seq 1 500"})
	if len(res.Artifacts) != 0 {
		t.Errorf("artifacts = %v without a store", res.Artifacts)
	}
	wantContains(t, "content", res.Content, "the rest is lost", "\n1\n", "[… 461 lines omitted …]", "\n500\n[exit code 0]")
	if r := f.call(t, "read_file", obj{"path": "artifact://01X"}); !strings.Contains(r.Content, "this session stores no artifacts") {
		t.Errorf("read_file artifact without a store = %q", r.Content)
	}
}

func TestSmallOutputStaysInline(t *testing.T) {
	f := newFixture(t)
	res := f.call(t, "bash", obj{"command": "seq 1 150"})
	if len(res.Artifacts) != 0 || strings.Contains(res.Content, "artifact://") {
		t.Errorf("150 short lines became an artifact: %v", res.Artifacts)
	}
	if ents, _ := os.ReadDir(filepath.Join(f.store, "artifacts")); len(ents) != 0 {
		t.Errorf("store has artifacts: %v", ents)
	}
}

func TestArtifactsSave(t *testing.T) {
	store := t.TempDir()
	tests := []struct {
		name  string
		a     Artifacts
		ext   string
		valid bool
	}{
		{"default id", Artifacts{Store: store, Scope: "global"}, "txt", true},
		{"bad scope", Artifacts{Store: store, Scope: "../x"}, "txt", false},
		{"empty scope", Artifacts{Store: store}, "txt", false},
		{"bad ext", Artifacts{Store: store, Scope: "global"}, "t/x", false},
		{"bad id", Artifacts{Store: store, Scope: "global", NewID: func() string { return "../../x" }}, "txt", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, rel, err := tt.a.Save("x", tt.ext)
			if (err == nil) != tt.valid {
				t.Fatalf("Save error = %v, want valid %v", err, tt.valid)
			}
			if !tt.valid {
				return
			}
			if rel != "artifacts/global/"+id+".txt" {
				t.Errorf("rel = %q", rel)
			}
			if p, err := tt.a.Path(id); err != nil || p != filepath.Join(store, filepath.FromSlash(rel)) {
				t.Errorf("Path(%s) = %q, %v", id, p, err)
			}
		})
	}
}

func TestDefaultIDSortsByTime(t *testing.T) {
	var ids []string
	for range 3 {
		ids = append(ids, defaultID())
		time.Sleep(2 * time.Millisecond)
	}
	if !slices.IsSorted(ids) {
		t.Errorf("ids %v are not in time order", ids)
	}
	for _, id := range ids {
		if len(id) != 26 || !validName(id) || strings.Trim(id, crockford) != "" {
			t.Errorf("id %q is not a ULID", id)
		}
	}
	if ids[0] == ids[1] {
		t.Error("ids repeat")
	}
}
