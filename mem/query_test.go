package mem

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// queryStore is a store written by Tx, with the hand-made files a person
// browsing it might leave: a broken entry, a file right in a scope, an
// editor's swap file, a temporary file, directories that are no scope,
// and an empty scope.
type queryStore struct {
	st    *Store
	paths map[string]string // name given in the test → path
}

func newQueryStore(t *testing.T) *queryStore {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	q := &queryStore{st: st, paths: map[string]string{}}
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	lock, err := st.Lock(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tx := st.Begin(false)
	add := func(name string, sec int, e *Entry) *Entry {
		e.CreatedAt = base.Add(time.Duration(sec) * time.Second)
		if e.Body == "" {
			e.Body = name
		}
		if err := tx.Add(e); err != nil {
			t.Fatal(err)
		}
		q.paths[name] = e.Path
		return e
	}
	// A conversation whose turns interleave across the role directories.
	add("u1", 1, &Entry{Scope: "chat", Kind: KindTurn, Role: "user"})
	add("a2", 2, &Entry{Scope: "chat", Kind: KindTurn, Role: "assistant"})
	add("t3", 3, &Entry{Scope: "chat", Kind: KindTurn, Role: "tool"})
	add("a4", 4, &Entry{Scope: "chat", Kind: KindTurn, Role: "assistant"})
	add("u5", 5, &Entry{Scope: "chat", Kind: KindTurn, Role: "user"})
	add("s6", 6, &Entry{Scope: "chat", Kind: KindSummary, Level: "L1"})
	add("f7", 7, &Entry{Scope: "chat", Kind: KindFact})
	// The global scope: facts, a decision, and a fact forgotten below.
	add("g1", 1, &Entry{Scope: DefaultScope, Kind: KindFact})
	gone := add("g2", 2, &Entry{Scope: DefaultScope, Kind: KindFact})
	add("g3", 3, &Entry{Scope: DefaultScope, Kind: KindDecision})
	add("g4", 4, &Entry{Scope: DefaultScope, Kind: KindFact})
	if _, err := tx.Commit("remember: test entries"); err != nil {
		t.Fatal(err)
	}
	tx = st.Begin(false)
	if err := tx.Tombstone(gone, "test", ""); err != nil {
		t.Fatal(err)
	}
	q.paths["g2 tombstone"] = gone.Path
	if _, err := tx.Commit("forget: g2"); err != nil {
		t.Fatal(err)
	}
	lock.Unlock()

	write := func(rel, data string) {
		t.Helper()
		abs := filepath.Join(st.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q.paths["broken"] = "entries/global/facts/20261121T100005Z__BROKEN.md"
	write(q.paths["broken"], "---\ntags: [unclosed\n---\nbroken\n")
	q.paths["idea"] = "entries/global/idea.md"
	write(q.paths["idea"], "---\nid: IDEA1\n---\nan idea put here by hand\n")
	write("entries/global/facts/.20261121T100009Z__SWAP.md.swp", "x")
	write("entries/global/facts/.20261121T100009Z__HIDDEN.md", "---\n---\nx\n")
	write("entries/global/facts/20261121T100009Z__TMP.md.tmp", "x")
	write("entries/global/facts/notes.txt", "x")
	write("entries/global/.cache/20261121T100009Z__C.md", "---\n---\nx\n")
	write("entries/deleted/facts/20261121T100009Z__D.md", "---\n---\nx\n")
	write("entries/Bad Scope/facts/20261121T100009Z__E.md", "---\n---\nx\n")
	write("entries/stray.md", "---\n---\nx\n")
	if err := os.MkdirAll(filepath.Join(st.Root, "entries", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	return q
}

func (q *queryStore) get(names ...string) []string {
	out := []string{}
	for _, n := range names {
		out = append(out, q.paths[n])
	}
	return out
}

func TestQueryListings(t *testing.T) {
	q := newQueryStore(t)
	st := q.st
	// Readers never wait for the writer lock.
	lock, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()

	scopes, err := st.Scopes()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"chat", "empty", "global"}, scopes); diff != "" {
		t.Errorf("Scopes() (-want +got):\n%s", diff)
	}
	for scope, want := range map[string]bool{"chat": true, "empty": true, "global": true, "nope": false, "deleted": false, "Bad Scope": false, "../entries/chat": false, "": false} {
		if got := st.HasScope(scope); got != want {
			t.Errorf("HasScope(%q) = %v, want %v", scope, got, want)
		}
	}

	for _, tc := range []struct {
		name string
		list func() ([]string, error)
		want []string
	}{
		{"Paths(global, fact)", func() ([]string, error) { return st.Paths("global", KindFact) },
			q.get("g1", "g4", "broken")},
		{"Paths(global, decision)", func() ([]string, error) { return st.Paths("global", KindDecision) },
			q.get("g3")},
		{"Paths(global, \"\")", func() ([]string, error) { return st.Paths("global", "") },
			q.get("g1", "g3", "g4", "broken", "idea")},
		{"Paths(global, note)", func() ([]string, error) { return st.Paths("global", KindNote) }, nil},
		{"Paths(chat, turn)", func() ([]string, error) { return st.Paths("chat", KindTurn) },
			q.get("u1", "a2", "t3", "a4", "u5")},
		{"Paths(chat, summary)", func() ([]string, error) { return st.Paths("chat", KindSummary) },
			q.get("s6")},
		{"Paths(chat, \"\")", func() ([]string, error) { return st.Paths("chat", "") },
			q.get("u1", "a2", "t3", "a4", "u5", "s6", "f7")},
		{"TurnPaths(chat)", func() ([]string, error) { return st.TurnPaths("chat") },
			q.get("u1", "a2", "t3", "a4", "u5")},
		{"TurnPaths(chat, user)", func() ([]string, error) { return st.TurnPaths("chat", "user") },
			q.get("u1", "u5")},
		{"TurnPaths(chat, user, assistant)", func() ([]string, error) { return st.TurnPaths("chat", "assistant", "user", "assistant") },
			q.get("u1", "a2", "a4", "u5")},
		{"Tombstones(global, \"\")", func() ([]string, error) { return st.Tombstones("global", "") },
			q.get("g2 tombstone")},
		{"Tombstones(global, fact)", func() ([]string, error) { return st.Tombstones("global", KindFact) },
			q.get("g2 tombstone")},
		{"Tombstones(global, decision)", func() ([]string, error) { return st.Tombstones("global", KindDecision) }, nil},
		{"Tombstones(chat, \"\")", func() ([]string, error) { return st.Tombstones("chat", "") }, nil},
		// An empty scope, and one that does not exist, have nothing.
		{"Paths(empty, \"\")", func() ([]string, error) { return st.Paths("empty", "") }, nil},
		{"TurnPaths(empty)", func() ([]string, error) { return st.TurnPaths("empty") }, nil},
		{"Tombstones(empty, \"\")", func() ([]string, error) { return st.Tombstones("empty", "") }, nil},
		{"Paths(nope, fact)", func() ([]string, error) { return st.Paths("nope", KindFact) }, nil},
	} {
		got, err := tc.list()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if q.paths["g2 tombstone"] != DeletedPath(q.paths["g2"]) {
		t.Errorf("tombstone at %s, want %s", q.paths["g2 tombstone"], DeletedPath(q.paths["g2"]))
	}
}

func TestQueryRejectsBadArguments(t *testing.T) {
	st := newQueryStore(t).st
	for name, call := range map[string]func() error{
		"Paths(deleted)":       func() error { _, err := st.Paths("deleted", ""); return err },
		"Paths(..)":            func() error { _, err := st.Paths("..", ""); return err },
		"Paths(a/b)":           func() error { _, err := st.Paths("global/facts", ""); return err },
		"Paths(kind bogus)":    func() error { _, err := st.Paths("global", "bogus"); return err },
		"Entries(kind facts)":  func() error { _, err := st.Entries("global", "facts", nil); return err },
		"TurnPaths(system)":    func() error { _, err := st.TurnPaths("chat", "system"); return err },
		"TurnPaths(bad scope)": func() error { _, err := st.TurnPaths("Bad Scope", "user"); return err },
		"Tombstones(deleted)":  func() error { _, err := st.Tombstones("deleted", ""); return err },
		"TurnBefore(fact)":     func() error { _, err := st.TurnBefore("entries/chat/facts/20261121T100000Z__X.md"); return err },
		"TurnAfter(tombstone)": func() error {
			_, err := st.TurnAfter("entries/chat/deleted/turns/user/20261121T100000Z__X.md")
			return err
		},
		"TurnAfter(not entry)": func() error { _, err := st.TurnAfter("entries/chat/turns/user/x.txt"); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTurnNeighbours(t *testing.T) {
	q := newQueryStore(t)
	st := q.st
	turns := q.get("u1", "a2", "t3", "a4", "u5")
	for i, p := range turns {
		before, err := st.TurnBefore(p)
		if err != nil {
			t.Fatal(err)
		}
		after, err := st.TurnAfter(p)
		if err != nil {
			t.Fatal(err)
		}
		wantBefore, wantAfter := "", ""
		if i > 0 {
			wantBefore = turns[i-1]
		}
		if i+1 < len(turns) {
			wantAfter = turns[i+1]
		}
		if before != wantBefore || after != wantAfter {
			t.Errorf("%s: before %q after %q, want %q and %q", p, before, after, wantBefore, wantAfter)
		}
	}
	// Turns not written yet: at the end, in the middle, at the start.
	for _, tc := range []struct{ turn, before, after string }{
		{"entries/chat/turns/user/20261121T100009Z__NEW.md", q.paths["u5"], ""},
		{"entries/chat/turns/assistant/20261121T100003Z__ZZZ.md", q.paths["t3"], q.paths["a4"]},
		{"entries/chat/turns/tool/20261121T100000Z__FIRST.md", "", q.paths["u1"]},
		{"entries/empty/turns/user/20261121T100000Z__ONLY.md", "", ""},
	} {
		before, err1 := st.TurnBefore(tc.turn)
		after, err2 := st.TurnAfter(tc.turn)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if before != tc.before || after != tc.after {
			t.Errorf("%s: before %q after %q, want %q and %q", tc.turn, before, after, tc.before, tc.after)
		}
	}
}

func TestEntriesReportsBrokenFilesAndGoesOn(t *testing.T) {
	q := newQueryStore(t)
	var bad []error
	es, err := q.st.Entries("global", KindFact, func(err error) { bad = append(bad, err) })
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, e := range es {
		bodies = append(bodies, e.Body)
	}
	if diff := cmp.Diff([]string{"g1", "g4"}, bodies); diff != "" {
		t.Errorf("Entries(global, fact) bodies (-want +got):\n%s", diff)
	}
	var pe *ParseError
	if len(bad) != 1 || !errors.As(bad[0], &pe) || pe.Path != q.paths["broken"] {
		t.Errorf("reported %v, want one *ParseError for %s", bad, q.paths["broken"])
	}

	// Without a callback the broken file is skipped all the same; a file
	// that vanished is skipped without a report.
	es = q.st.ReadAll(append(q.get("broken", "g1"), "entries/global/facts/20261121T100000Z__GONE.md"), nil)
	if len(es) != 1 || es[0].Body != "g1" {
		t.Errorf("ReadAll without bad = %v", es)
	}
	bad = nil
	q.st.ReadAll([]string{"entries/global/facts/20261121T100000Z__GONE.md"}, func(err error) { bad = append(bad, err) })
	if len(bad) != 0 {
		t.Errorf("a missing file was reported: %v", bad)
	}

	// Everything in a scope, hand-placed files included.
	bad = nil
	es, err = q.st.Entries("global", "", func(err error) { bad = append(bad, err) })
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range es {
		kinds = append(kinds, e.Kind+":"+e.Body)
	}
	want := []string{"fact:g1", "decision:g3", "fact:g4", "note:an idea put here by hand"}
	if diff := cmp.Diff(want, kinds); diff != "" || len(bad) != 1 {
		t.Errorf("Entries(global, \"\") (-want +got):\n%s\nreported %v", diff, bad)
	}
}

func TestListingGoesOnPastAnUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	q := newQueryStore(t)
	dir := filepath.Join(q.st.Root, "entries", "global", "decisions")
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	got, err := q.st.Paths("global", "")
	if err == nil || !strings.Contains(err.Error(), "entries/global/decisions") {
		t.Errorf("error %v, want one naming the directory", err)
	}
	if want := q.get("g1", "g4", "broken", "idea"); !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}

func TestComparePaths(t *testing.T) {
	paths := []string{
		"entries/c/turns/user/20261121T100002Z__B.md",
		"entries/c/turns/tool/20261121T100001Z__A.md",
		"entries/c/turns/assistant/20261121T100002Z__B.md",
		"entries/c/turns/user/20261121T100001Z__C.md",
	}
	slices.SortFunc(paths, ComparePaths)
	want := []string{
		"entries/c/turns/tool/20261121T100001Z__A.md",
		"entries/c/turns/user/20261121T100001Z__C.md",
		"entries/c/turns/assistant/20261121T100002Z__B.md",
		"entries/c/turns/user/20261121T100002Z__B.md",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
}
