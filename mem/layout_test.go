package mem

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParsePath(t *testing.T) {
	const name = "20261121T100000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md"
	const stamp, id = "20261121T100000Z", "01JD3ZK4Q8V6N2M7T5R9W1X0YB"
	for _, tc := range []struct {
		path string
		want EntryPath
	}{
		{"entries/global/facts/" + name,
			EntryPath{Scope: "global", KindDir: "facts", Kind: KindFact, Name: name, Stamp: stamp, ID: id}},
		{"entries/shop/decisions/" + name,
			EntryPath{Scope: "shop", KindDir: "decisions", Kind: KindDecision, Name: name, Stamp: stamp, ID: id}},
		{"entries/c1/turns/user/" + name,
			EntryPath{Scope: "c1", KindDir: "turns", Kind: KindTurn, Role: "user", Name: name, Stamp: stamp, ID: id}},
		{"entries/c1/turns/tool/" + name,
			EntryPath{Scope: "c1", KindDir: "turns", Kind: KindTurn, Role: "tool", Name: name, Stamp: stamp, ID: id}},
		{"entries/c1/summaries/L2/" + name,
			EntryPath{Scope: "c1", KindDir: "summaries", Kind: KindSummary, Level: "L2", Name: name, Stamp: stamp, ID: id}},
		{"entries/global/deleted/facts/" + name,
			EntryPath{Scope: "global", Deleted: true, KindDir: "facts", Kind: KindFact, Name: name, Stamp: stamp, ID: id}},
		{"entries/c1/deleted/turns/assistant/" + name,
			EntryPath{Scope: "c1", Deleted: true, KindDir: "turns", Kind: KindTurn, Role: "assistant", Name: name, Stamp: stamp, ID: id}},
		// Hand-placed files: right in the scope, in deleted/, in turns/,
		// in a directory that names no kind, in a shard; names without
		// a stamp or an id.
		{"entries/global/idea.md", EntryPath{Scope: "global", Name: "idea.md"}},
		{"entries/global/deleted/idea.md", EntryPath{Scope: "global", Deleted: true, Name: "idea.md"}},
		{"entries/c1/turns/x__A.md", EntryPath{Scope: "c1", KindDir: "turns", Kind: KindTurn, Name: "x__A.md", Stamp: "x", ID: "A"}},
		{"entries/global/stuff/a/b.md", EntryPath{Scope: "global", KindDir: "stuff", Shard: "a", Name: "b.md"}},
		{"entries/global/facts/2026-11/x.md", EntryPath{Scope: "global", KindDir: "facts", Kind: KindFact, Shard: "2026-11", Name: "x.md"}},
		{"entries/global/facts/deleted/x.md", EntryPath{Scope: "global", KindDir: "facts", Kind: KindFact, Shard: "deleted", Name: "x.md"}},
		{"entries/c1/turns/user/2026/11/x.md", EntryPath{Scope: "c1", KindDir: "turns", Kind: KindTurn, Role: "user", Shard: "2026/11", Name: "x.md"}},
		{"entries/c1/turns/system/x.md", EntryPath{Scope: "c1", KindDir: "turns", Kind: KindTurn, Role: "system", Name: "x.md"}},
		{"entries/global/deleted.md", EntryPath{Scope: "global", Name: "deleted.md"}},
		{"entries/Odd Scope/notes/__.md", EntryPath{Scope: "Odd Scope", KindDir: "notes", Kind: KindNote, Name: "__.md"}},
	} {
		got, err := ParsePath(tc.path)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tc.path, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParsePath(%q) (-want +got):\n%s", tc.path, diff)
		}
		if s := got.String(); s != tc.path {
			t.Errorf("ParsePath(%q).String() = %q", tc.path, s)
		}
	}
}

func TestParsePathRejects(t *testing.T) {
	for _, p := range []string{
		"",
		"entries",
		"entries/",
		"entries/x.md",                           // no scope
		"entries/global",                         // a directory
		"entries/global/facts",                   // a directory
		"entries/global/facts/",                  // a directory
		"entries/global/facts/x.txt",             // not Markdown
		"entries/global/facts/x.md.tmp",          // a temporary file
		"entries/global/facts/.x.md",             // an editor's file
		"entries/global/.git/x.md",               // a hidden directory
		"entries/.hidden/facts/x.md",             // a hidden scope
		"entries/deleted/facts/x.md",             // "deleted" is not a scope
		"entries/deleted/x.md",                   //
		"entries/../facts/x.md",                  // escapes entries/
		"entries/global/../../x.md",              //
		"entries/global/./facts/x.md",            //
		"entries//facts/x.md",                    // empty scope
		"entries/global/facts//x.md",             //
		"/entries/global/facts/x.md",             // absolute
		"./entries/global/facts/x.md",            //
		"artifacts/global/x.md",                  // not an entry
		"Entries/global/facts/x.md",              // case matters
		"entries\\global\\facts\\x.md",           // not slash-separated
		"plans/20261121T100000Z__01J.md",         //
		"entries/global/facts/20261121T100000Z/", //
	} {
		got, err := ParsePath(p)
		if err == nil {
			t.Errorf("ParsePath(%q) = %+v, want an error", p, got)
			continue
		}
		if !errors.Is(err, ErrNotEntryPath) {
			t.Errorf("ParsePath(%q) error %v does not wrap ErrNotEntryPath", p, err)
		}
		if want := p + ": "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("ParsePath(%q) error %q does not start with the path", p, err)
		}
	}
}

func TestEntryPathCreated(t *testing.T) {
	p, _ := ParsePath("entries/global/facts/20261121T100102Z__01J.md")
	if got, ok := p.Created(); !ok || !got.Equal(time.Date(2026, 11, 21, 10, 1, 2, 0, time.UTC)) {
		t.Errorf("Created() = %v, %v", got, ok)
	}
	for _, name := range []string{"idea.md", "1__A.md", "2026-11-21__A.md"} {
		p, _ := ParsePath("entries/global/facts/" + name)
		if got, ok := p.Created(); ok {
			t.Errorf("%s: Created() = %v, true; want false", name, got)
		}
	}
}

func TestLayoutBuildersMatchParsePath(t *testing.T) {
	created := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, e := range []*Entry{
		{Scope: "global", Kind: KindFact, ID: "A", CreatedAt: created},
		{Scope: "shop", Kind: KindPreference, ID: "B", CreatedAt: created},
		{Scope: "c1", Kind: KindTurn, Role: "assistant", ID: "C", CreatedAt: created},
		{Scope: "c1", Kind: KindSummary, Level: "L3", ID: "D", CreatedAt: created},
	} {
		rel := RelPath(e)
		p, err := ParsePath(rel)
		if err != nil {
			t.Errorf("ParsePath(RelPath) = %v", err)
			continue
		}
		got := []string{p.Scope, p.Kind, p.Role, p.Level, p.ID, p.Shard}
		want := []string{e.Scope, e.Kind, e.Role, e.Level, e.ID, ""}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParsePath(%q) (-want +got):\n%s", rel, diff)
		}
		if c, ok := p.Created(); !ok || !c.Equal(created) {
			t.Errorf("ParsePath(%q).Created() = %v, %v", rel, c, ok)
		}
		d, err := ParsePath(DeletedPath(rel))
		if err != nil || !d.Deleted || d.Scope != e.Scope || d.Kind != e.Kind || d.Role != e.Role || d.Level != e.Level {
			t.Errorf("ParsePath(DeletedPath(%q)) = %+v, %v", rel, d, err)
		}
	}
	for got, want := range map[string]string{
		ScopeDir("shop"):             "entries/shop",
		KindDir("shop", KindFact):    "entries/shop/facts",
		KindDir("shop", KindTurn):    "entries/shop/turns",
		TurnDir("c1", "user"):        "entries/c1/turns/user",
		TurnDir("c1", ""):            "entries/c1/turns",
		SummaryDir("c1", "L1"):       "entries/c1/summaries/L1",
		DeletedDir("shop"):           "entries/shop/deleted",
		KindDir("shop", KindSummary): "entries/shop/summaries",
	} {
		if got != want {
			t.Errorf("built %q, want %q", got, want)
		}
	}
}

func TestDeletedPathOutsideTheLayout(t *testing.T) {
	for _, p := range []string{
		"entries/global/x.md",            // in no kind's directory
		"entries/global/deleted/facts/x", // not an entry
		"artifacts/global/x.md",
		"entries/global/.facts/x.md",
	} {
		if got := DeletedPath(p); got != p {
			t.Errorf("DeletedPath(%q) = %q, want it unchanged", p, got)
		}
	}
	if got, want := DeletedPath("entries/global/stuff/x.md"), "entries/global/deleted/stuff/x.md"; got != want {
		t.Errorf("DeletedPath of a hand-made directory = %q, want %q", got, want)
	}
}

func TestIsLiveDir(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want bool
	}{
		{"entries", true},
		{"entries/global", true},
		{"entries/global/facts", true},
		{"entries/c1/turns/user", true},
		{"entries/global/facts/deleted", true}, // a shard, not the tombstones
		{"entries/global/deleted", false},
		{"entries/global/deleted/facts", false},
		{"entries/deleted", false},
		{"entries/.git", false},
		{"entries/global/.cache", false},
		{"entries/global/../x", false},
		{"entries//x", false},
		{"entries/", false},
		{"", false},
		{".", false},
		{"plans", false},
		{"artifacts/global", false},
	} {
		if got := IsLiveDir(tc.dir); got != tc.want {
			t.Errorf("IsLiveDir(%q) = %v, want %v", tc.dir, got, tc.want)
		}
	}
}

func TestParseFillsFromHandPlacedPaths(t *testing.T) {
	for _, tc := range []struct{ path, id, kind, scope string }{
		{"entries/shop/idea.md", "", KindNote, "shop"},
		{"entries/shop/stuff/x__A.md", "A", KindNote, "shop"},
		{"entries/shop/deleted/tasks/x__B.md", "B", KindTask, "shop"},
		{"entries/shop/turns/user/2026/x__C.md", "C", KindTurn, "shop"},
		{"import/x__D.md", "D", KindNote, DefaultScope}, // outside the layout: the name still gives the id
	} {
		e, err := Parse(tc.path, []byte("---\nid: X\n---\ntext\n"))
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind != tc.kind || e.Scope != tc.scope {
			t.Errorf("Parse(%q): kind %q scope %q, want %q %q", tc.path, e.Kind, e.Scope, tc.kind, tc.scope)
		}
		if tc.id == "" {
			continue
		}
		e, err = Parse(tc.path, []byte("---\ntags: [x]\n---\ntext\n"))
		if err != nil {
			t.Fatalf("Parse(%q) without front matter: %v", tc.path, err)
		}
		if e.ID != tc.id {
			t.Errorf("Parse(%q) id %q, want %q", tc.path, e.ID, tc.id)
		}
	}
}
