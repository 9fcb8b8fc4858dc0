package index

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// factStore is a conversation of three turns, none of which says "support
// group" or names a vehicle in words, and a fact extracted from the first.
// The embedder sees topics (topicEmbedder): the first turn is about a cat,
// the fact about a car.
func factStore(t *testing.T) (f *fakeSource, o Options, turn1, turn2, fact string) {
	t.Helper()
	f = newFake(t)
	turn1 = f.writeDoc(t, fdoc{id: "T1", kind: "turn", scope: "chat", created: t0, text: "Caroline: I went there yesterday with my kitten, it was so powerful"})
	turn2 = f.writeDoc(t, fdoc{id: "T2", kind: "turn", scope: "chat", created: t0.Add(time.Minute), text: "Melanie: Wow, that sounds great, tell me more about the database"})
	f.writeDoc(t, fdoc{id: "T3", kind: "turn", scope: "chat", created: t0.Add(2 * time.Minute), text: "Caroline: My kitten and I are fine"})
	fact = f.writeDoc(t, fdoc{id: "F1", kind: "fact", scope: "chat", created: t0.Add(time.Hour), from: []string{"T1"},
		text: "Caroline attended a support group and drove there in her automobile"})
	o = opts(nil)
	o.Embedder = topicEmbedder{}
	return f, o, turn1, turn2, fact
}

// turnsFound returns the ids of the turns a search for text finds in mode,
// turns only, in order.
func turnsFound(t *testing.T, ix *Index, text, mode string) []string {
	t.Helper()
	hits, err := ix.Search(Query{Text: text, Mode: mode, Kinds: []string{"turn"}, Scopes: []string{"chat"}, Now: t0})
	if err != nil {
		t.Fatalf("Search(%q, %s): %v", text, mode, err)
	}
	return ids(hits)
}

// TestFactKeysTurn: a turn is found by the words and the vector of the
// fact taken from it, first, while the fact stays an entry of its own and
// the turn's own words still find it.
func TestFactKeysTurn(t *testing.T) {
	f, o, _, _, _ := factStore(t)
	ix := mustOpen(t, f, o)
	for _, mode := range []string{ModeLexical, ModeVector, ModeHybrid} {
		text := "support group"
		if mode == ModeVector {
			text = "car" // a topic of the fact alone
		}
		if got := turnsFound(t, ix, text, mode); len(got) == 0 || got[0] != "T1" {
			t.Errorf("%s: turns found by the fact's words %v, want T1 first", mode, got)
		}
	}
	hits, err := ix.Search(Query{Text: "support group", Mode: ModeLexical, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Contains(got, "F1") || !slices.Contains(got, "T1") {
		t.Errorf("all kinds: %v, want the fact and its turn", got)
	}
	if got := turnsFound(t, ix, "powerful", ModeLexical); !slices.Equal(got, []string{"T1"}) {
		t.Errorf("by the turn's own words: %v, want [T1]", got)
	}
	if got := turnsFound(t, ix, "kitten", ModeLexical); len(got) != 2 {
		t.Errorf("kitten: %v, want the two turns that say it", got)
	}
}

// TestFactKeysOtherScope: a fact in a scope the search does not cover
// never moves a turn.
func TestFactKeysOtherScope(t *testing.T) {
	f, o, _, _, fact := factStore(t)
	f.remove(t, fact)
	f.writeDoc(t, fdoc{id: "F1", kind: "fact", scope: "elsewhere", created: t0.Add(time.Hour), from: []string{"T1"},
		text: "Caroline attended a support group and drove there in her automobile"})
	ix := mustOpen(t, f, o)
	for _, mode := range []string{ModeLexical, ModeVector} {
		if got := turnsFound(t, ix, "support group car", mode); slices.Contains(got, "T1") {
			t.Errorf("%s: %v, a fact of another scope keyed T1", mode, got)
		}
	}
}

// TestFactKeysFollowChanges: the turns a fact names follow it as it is
// added, edited by hand to name another turn, replaced, and forgotten;
// a fact naming a turn that is not there is harmless. Each step is seen by
// the update an open runs and by the watcher alike (both go through
// refresh), and by a rebuild.
func TestFactKeysFollowChanges(t *testing.T) {
	f, o, _, _, fact := factStore(t)
	f.remove(t, fact)
	var w warnings
	o.Warn = w.warn
	check := func(step string, want map[string]bool) {
		t.Helper()
		for _, rebuild := range []bool{false, true} {
			if rebuild {
				if _, err := Rebuild(f, o); err != nil {
					t.Fatal(err)
				}
			}
			ix := mustOpen(t, f, o)
			for _, mode := range []string{ModeLexical, ModeVector} {
				text := "support group"
				if mode == ModeVector {
					text = "car"
				}
				got := turnsFound(t, ix, text, mode)
				for _, id := range []string{"T1", "T2"} {
					if slices.Contains(got, id) != want[id] {
						t.Errorf("%s (rebuilt %v), %s: turns %v, want %v", step, rebuild, mode, got, want)
					}
				}
			}
			ix.Close()
		}
		if len(w.got) > 0 {
			t.Errorf("%s: warnings %v", step, w.got)
			w.reset()
		}
	}
	check("no fact", nil)

	fact = f.writeDoc(t, fdoc{id: "F1", kind: "fact", scope: "chat", created: t0.Add(time.Hour), from: []string{"T1"},
		text: "Caroline attended a support group and drove there in her automobile"})
	f.commit(fact)
	check("added", map[string]bool{"T1": true})

	// A hand edit of extracted_from alone: same size, another time.
	edited := fdoc{id: "F1", kind: "fact", scope: "chat", created: t0.Add(time.Hour), from: []string{"T2"},
		text: "Caroline attended a support group and drove there in her automobile"}
	f.writeFile(t, fact, edited.encode(), oldTime.Add(time.Minute))
	check("edited to name T2", map[string]bool{"T2": true})

	// Replaced: the old fact goes, a new one names T1 again.
	f.remove(t, fact)
	fact = f.writeDoc(t, fdoc{id: "F2", kind: "fact", scope: "chat", created: t0.Add(2 * time.Hour), from: []string{"T1"},
		text: "Caroline goes to a support group by automobile"})
	f.commit(fact)
	check("replaced", map[string]bool{"T1": true})

	f.remove(t, fact)
	f.commit(fact)
	check("forgotten", nil)

	missing := f.writeDoc(t, fdoc{id: "F3", kind: "fact", scope: "chat", created: t0.Add(3 * time.Hour), from: []string{"GONE", "T1", "T1"},
		text: "Caroline attended a support group and drove there in her automobile"})
	f.commit(missing)
	check("naming a missing turn", map[string]bool{"T1": true})

	ix := mustOpen(t, f, o)
	defer ix.Close()
	hits, err := ix.Search(Query{Text: "support group", Now: t0})
	if err != nil || !slices.Contains(ids(hits), "F3") {
		t.Errorf("the fact itself: %v, %v", ids(hits), err)
	}
}

// TestFactKeysKilledUpdate: a writer killed after appending a fact's row
// to the vector log but before it wrote the manifest and the meta leaves
// an index whose next open brings the fact's row, and so its turn's key,
// up to date: once, without a warning.
func TestFactKeysKilledUpdate(t *testing.T) {
	for _, step := range []string{"add", "forget"} {
		t.Run(step, func(t *testing.T) {
			f, o, _, _, fact := factStore(t)
			if step == "add" {
				f.remove(t, fact)
			}
			var w warnings
			o.Warn = w.warn
			ix := mustOpen(t, f, o)
			gen := ix.gen
			ix.Close()
			saved := map[string][]byte{}
			ents, err := os.ReadDir(gen)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), vecPrefix) {
					b, err := os.ReadFile(filepath.Join(gen, e.Name()))
					if err != nil {
						t.Fatal(err)
					}
					saved[e.Name()] = b
				}
			}
			if step == "add" {
				f.writeDoc(t, fdoc{id: "F1", kind: "fact", scope: "chat", created: t0.Add(time.Hour), from: []string{"T1"},
					text: "Caroline attended a support group and drove there in her automobile"})
			} else {
				f.remove(t, fact)
			}
			mustOpen(t, f, o).Close()
			// The kill: the log has the update, the manifest and the
			// meta do not.
			for name, b := range saved {
				if err := os.WriteFile(filepath.Join(gen, name), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ix = mustOpen(t, f, o)
			defer ix.Close()
			want := step == "add"
			for _, mode := range []string{ModeLexical, ModeVector} {
				text := "support group"
				if mode == ModeVector {
					text = "car"
				}
				got := turnsFound(t, ix, text, mode)
				if slices.Contains(got, "T1") != want {
					t.Errorf("%s after the next open: %v, want T1 %v", mode, got, want)
				}
				if n := countOf(got, "T1"); n > 1 {
					t.Errorf("%s: T1 found %d times", mode, n)
				}
			}
			if len(w.got) > 0 {
				t.Errorf("warnings %v", w.got)
			}
		})
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestFactRowsRoundTrip: the ids a row names survive the log, a
// compaction into a new base, and a rebuild.
func TestFactRowsRoundTrip(t *testing.T) {
	d := vecDoc{path: "entries/chat/facts/x.md", id: "F", kind: "fact", scope: "chat", from: []string{"T1", "T2"}, flen: 3}
	b := appendRow(nil, &d, false)
	if len(b) > maxRowSize(&d) {
		t.Errorf("row of %d bytes, bound %d", len(b), maxRowSize(&d))
	}
	vs := newVecStore("x", 4)
	rr := rowReader{src: string(b)}
	row, _ := rr.row(vs)
	if rr.err != nil || rr.off != len(b) || !slices.Equal(rr.from, d.from) {
		t.Fatalf("read back: %v, off %d of %d, from %v", rr.err, rr.off, len(b), rr.from)
	}
	row.linked = vs.setFrom(0, rr.from)
	vs.rows = append(vs.rows, row)
	if got := vs.doc(0).from; !slices.Equal(got, d.from) {
		t.Errorf("doc: from %v", got)
	}
	// A count past the row is damage, not a huge allocation.
	bad := slices.Clone(b)
	bad = bad[:len(bad)-len("T1")-len("T2")-3]
	bad = append(bad, 0xff, 0xff, 0x7f)
	rr = rowReader{src: string(bad)}
	rr.row(vs)
	if rr.err == nil {
		t.Error("a bad id count was read")
	}
}

// TestFactKeysWatch: under a watcher, a fact written, edited by hand to
// name another turn, and removed moves its turns' key with each event,
// and readers that trust the watcher see it.
func TestFactKeysWatch(t *testing.T) {
	f, o, _, _, fact := factStore(t)
	f.remove(t, fact)
	w := startWatch(t, f, o)
	w.waitFor(t, "the initial catch-up", func(e Event) bool { return e.Full && e.Err == nil && e.Stats.Docs == 3 })
	found := func(step string, want string) {
		t.Helper()
		ix := mustOpen(t, f, o)
		defer ix.Close()
		for _, mode := range []string{ModeLexical, ModeVector} {
			text := "support group"
			if mode == ModeVector {
				text = "car"
			}
			got := turnsFound(t, ix, text, mode)
			if want == "" && len(got) > 0 || want != "" && (len(got) == 0 || got[0] != want) {
				t.Errorf("%s, %s: turns %v, want %q first", step, mode, got, want)
			}
		}
	}
	// mark counts the events so far; after waits for one past them.
	mark := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.events)
	}
	after := func(before int, what string, ok func(Event) bool) {
		t.Helper()
		i := 0
		w.waitFor(t, what, func(e Event) bool { i++; return i > before && ok(e) })
	}
	d := fdoc{id: "F1", kind: "fact", scope: "chat", created: t0.Add(time.Hour), from: []string{"T1"},
		text: "Caroline attended a support group and drove there in her automobile"}
	m := mark()
	fact = f.writeDoc(t, d)
	after(m, "the fact", func(e Event) bool { return e.Err == nil && e.Stats.Docs == 4 })
	found("written", "T1")

	d.from = []string{"T2"}
	m = mark()
	f.writeFile(t, fact, d.encode(), oldTime.Add(time.Minute))
	after(m, "the hand edit", func(e Event) bool { return e.Err == nil && e.Stats.Indexed >= 1 && e.Stats.Docs == 4 })
	found("edited", "T2")

	m = mark()
	f.remove(t, fact)
	after(m, "the removal", func(e Event) bool { return e.Err == nil && e.Stats.Docs == 3 })
	found("removed", "")
}

// TestFactKeysCompacted: the ids a fact names survive the log being
// folded into a new base file.
func TestFactKeysCompacted(t *testing.T) {
	f, o, _, _, fact := factStore(t)
	f.remove(t, fact)
	ix := mustOpen(t, f, o)
	seq := ix.meta.VecSeq
	ix.Close()
	for i := range compactMin + 20 {
		from := []string{"T3"}
		if i == 7 {
			from = []string{"T1"}
		}
		text := fmt.Sprintf("filler fact number %d", i)
		if i == 7 {
			text = "Caroline attended a support group and drove there in her automobile"
		}
		f.writeDoc(t, fdoc{id: fmt.Sprintf("F%03d", i), kind: "fact", scope: "chat", created: t0.Add(time.Hour), from: from, text: text})
	}
	mustOpen(t, f, o).Close()
	ix = mustOpen(t, f, o)
	defer ix.Close()
	if ix.meta.VecSeq == seq {
		t.Fatalf("the log was not compacted (sequence %d)", seq)
	}
	for _, mode := range []string{ModeLexical, ModeVector} {
		text := "support group"
		if mode == ModeVector {
			text = "car"
		}
		if got := turnsFound(t, ix, text, mode); len(got) == 0 || got[0] != "T1" {
			t.Errorf("%s after the compaction: %v, want T1 first", mode, got)
		}
	}
}
