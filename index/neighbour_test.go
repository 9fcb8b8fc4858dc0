package index

import (
	"slices"
	"testing"
	"time"
)

func TestTurnOrder(t *testing.T) {
	u := func(name string) string { return "entries/chat/turns/user/" + name + ".md" }
	a := func(name string) string { return "entries/chat/turns/assistant/" + name + ".md" }
	paths := []string{
		a("20260101T100002Z__B"), u("20260101T100001Z__A"), u("20260101T100003Z__C"),
		"entries/other/turns/user/20260101T100000Z__X.md", // another scope
		"entries/chat/facts/20260101T100000Z__F.md",       // not a turn
	}
	o := NewTurnOrder(paths)
	for _, tc := range []struct{ p, want string }{
		{u("20260101T100001Z__A"), ""},
		{a("20260101T100002Z__B"), u("20260101T100001Z__A")},
		{u("20260101T100003Z__C"), a("20260101T100002Z__B")},
		{a("20260101T100009Z__D"), u("20260101T100003Z__C")}, // not listed yet
		{"entries/other/turns/user/20260101T100005Z__Y.md", "entries/other/turns/user/20260101T100000Z__X.md"},
		{"entries/chat/facts/20260101T100001Z__G.md", ""},
	} {
		if got := o.Previous(tc.p); got != tc.want {
			t.Errorf("Previous(%s) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestAddDependents(t *testing.T) {
	u := func(name string) string { return "entries/chat/turns/user/" + name + ".md" }
	man := manifest{
		u("1__A"): {size: 1}, u("2__B"): {size: 1}, u("3__C"): {size: 1}, u("4__D"): {size: 1, broken: "bad"},
		"entries/chat/facts/1__F.md": {size: 1},
	}
	paths := func(ch changes) []string {
		var out []string
		for _, o := range ch.load {
			out = append(out, o.Path)
		}
		slices.Sort(out)
		return out
	}
	// A changed turn: the one after it is loaded again.
	ch := changes{load: []obs{{FileStat: FileStat{Path: u("1__A")}}}}
	addDependents(&ch, man, 0)
	if got, want := paths(ch), []string{u("1__A"), u("2__B")}; !slices.Equal(got, want) {
		t.Errorf("changed A: load %v, want %v", got, want)
	}
	// A removed turn: the next one that stays is loaded again, so the
	// removed text leaves its context.
	ch = changes{remove: []string{u("2__B")}}
	addDependents(&ch, man, 0)
	if got, want := paths(ch), []string{u("3__C")}; !slices.Equal(got, want) {
		t.Errorf("removed B: load %v, want %v", got, want)
	}
	// A new turn in the middle (an import) changes the context of the
	// one after it; a broken successor is not loaded.
	ch = changes{load: []obs{{FileStat: FileStat{Path: u("3a__N")}}}}
	addDependents(&ch, man, 0)
	if got, want := paths(ch), []string{u("3a__N")}; !slices.Equal(got, want) {
		t.Errorf("new N before broken D: load %v, want %v", got, want)
	}
	// Other kinds have no context.
	ch = changes{load: []obs{{FileStat: FileStat{Path: "entries/chat/facts/1__F.md"}}}}
	addDependents(&ch, man, 0)
	if len(ch.load) != 1 {
		t.Errorf("a fact made %v load", paths(ch))
	}
}

func TestTurnKey(t *testing.T) {
	for _, tc := range []struct {
		path, scope, key string
	}{
		{"entries/chat/turns/user/1__A.md", "chat", "1__A.md"},
		{"entries/chat/turns/tool/20260101T100001Z__A.md", "chat", "20260101T100001Z__A.md"},
		{"entries/chat/turns/x.md", "", ""},              // in no role's directory
		{"entries/chat/turns/user/2026/x.md", "", ""},    // sharded
		{"entries/chat/deleted/turns/user/x.md", "", ""}, // a tombstone
		{"entries/chat/facts/x.md", "", ""},              // not a turn
		{"entries/chat/turns/user/.x.md", "", ""},        // an editor's file
		{"entries/chat/turns/user/x.md.tmp", "", ""},     // a temporary file
		{"entries/deleted/turns/user/x.md", "", ""},      // no scope
		{"artifacts/chat/turns/user/x.md", "", ""},       // not an entry
	} {
		scope, key, ok := TurnKey(tc.path)
		if scope != tc.scope || key != tc.key || ok != (tc.scope != "") {
			t.Errorf("TurnKey(%q) = %q, %q, %v", tc.path, scope, key, ok)
		}
	}
}

// TestOwnTextWeighs: of two turns with the same words, one in its own
// text and one only in the turn before it, the first ranks first, though
// the other is newer; the text searched is still both.
func TestOwnTextWeighs(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", kind: "turn", created: t0.Add(-time.Hour), text: "Mel: the walrus sang at the pier", context: "Caro: how was the weekend"})
	b := f.writeDoc(t, fdoc{id: "B", kind: "turn", created: t0, text: "Caro: how was the weekend", context: "Mel: the walrus sang at the pier"})
	ix := mustOpen(t, f, opts(nil))
	for _, mode := range []string{ModeLexical, ModeHybrid} {
		hits, err := ix.Search(Query{Text: "walrus pier", Mode: mode, Now: t0})
		if err != nil || len(hits) != 2 || hits[0].Path != a || hits[1].Path != b {
			t.Errorf("%s: %+v, %v; want %s, then %s", mode, hits, err, a, b)
		}
	}
	// The turn before is searched: its words find the turn after it.
	hits, err := ix.Search(Query{Text: "weekend", Mode: ModeLexical, Now: t0})
	if err != nil || len(hits) != 2 {
		t.Errorf("weekend: %+v, %v; want both", hits, err)
	}
}
