package mem

import (
	"maps"
	"strings"
	"testing"
	"time"
)

const mergePath = "entries/global/facts/20260101T000000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md"

func entryFile(fields, body string) []byte {
	return []byte("---\nid: 01JD3ZK4Q8V6N2M7T5R9W1X0YB\nkind: fact\nscope: global\ncreated_at: 2026-01-01T00:00:00Z\n" + fields + "---\n" + body + "\n")
}

func group(base, ours, theirs []byte, ot, tt time.Time) MergeGroup {
	m := func(b []byte) map[string][]byte {
		if b == nil {
			return map[string][]byte{}
		}
		return map[string][]byte{mergePath: b}
	}
	return MergeGroup{ID: "01JD3ZK4Q8V6N2M7T5R9W1X0YB", Paths: []string{mergePath}, Base: m(base), Ours: m(ours), Theirs: m(theirs), OursTime: ot, TheirsTime: tt}
}

// swap exchanges the sides of a group.
func swap(g MergeGroup) MergeGroup {
	g.Ours, g.Theirs = g.Theirs, g.Ours
	g.OursTime, g.TheirsTime = g.TheirsTime, g.OursTime
	return g
}

func TestMergeRules(t *testing.T) {
	t1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	base := entryFile("", "Deploys happen on Tuesday")
	for _, tc := range []struct {
		name          string
		ours, theirs  []byte
		rule          string // "" for no decision
		live          string // the text at the id
		copyText      string // the text of the tombstoned copy, "" for none
		fieldsContain []string
	}{
		{"one side", entryFile("", "Deploys happen on Friday"), base, "", "Deploys happen on Friday", "", nil},
		{"different fields", entryFile("pin: sticky\n", "Deploys happen on Tuesday"), entryFile("", "Deploys happen on Monday"), "", "Deploys happen on Monday", "", []string{"pin: sticky"}},
		{"both texts", entryFile("", "Deploys happen on Wednesday"), entryFile("", "Deploys happen on Thursday"), "edit-edit", "Deploys happen on Thursday", "Deploys happen on Wednesday", nil},
		{"tags joined", entryFile("tags: [a]\n", "Deploys happen on Tuesday"), entryFile("tags: [b]\n", "Deploys happen on Tuesday"), "fields", "Deploys happen on Tuesday", "", []string{"tags: [b, a]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := group(base, tc.ours, tc.theirs, t1, t2) // theirs is newer
			r, err := Merge(g)
			if err != nil {
				t.Fatal(err)
			}
			r2, err := Merge(swap(g))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(r.Files, r2.Files, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Errorf("the result depends on which side is ours:\n%q\n%q", r.Files, r2.Files)
			}
			if got := ""; r.Decision != nil {
				got = r.Decision.Rule
				if got != tc.rule {
					t.Errorf("rule = %q, want %q", got, tc.rule)
				}
			} else if tc.rule != "" {
				t.Errorf("no decision, want rule %q", tc.rule)
			}
			live, err := Parse(mergePath, r.Files[mergePath])
			if err != nil {
				t.Fatalf("result at the id: %v", err)
			}
			if live.Body != tc.live {
				t.Errorf("text at the id = %q, want %q", live.Body, tc.live)
			}
			for _, f := range tc.fieldsContain {
				if !strings.Contains(string(r.Files[mergePath]), f) {
					t.Errorf("result lacks %q:\n%s", f, r.Files[mergePath])
				}
			}
			var copies []*Entry
			for p, d := range r.Files {
				if p == mergePath {
					continue
				}
				e, err := Parse(p, d)
				if err != nil {
					t.Fatal(err)
				}
				copies = append(copies, e)
			}
			switch {
			case tc.copyText == "" && len(copies) > 0:
				t.Errorf("unexpected copies %v", copies)
			case tc.copyText != "" && (len(copies) != 1 || copies[0].Body != tc.copyText || copies[0].ReplacedBy != live.ID || !copies[0].Deleted()):
				t.Errorf("copies = %+v, want one tombstone of %q replaced by %s", copies, tc.copyText, live.ID)
			}
		})
	}
}

// TestMergeEditForget: an edit beats a forget on the other side.
func TestMergeEditForget(t *testing.T) {
	base := entryFile("", "Deploys happen on Tuesday")
	tomb := "entries/global/deleted/facts/20260101T000000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md"
	g := MergeGroup{ID: "01JD3ZK4Q8V6N2M7T5R9W1X0YB", Paths: []string{tomb, mergePath},
		Base:   map[string][]byte{mergePath: base},
		Ours:   map[string][]byte{mergePath: entryFile("", "Deploys happen on Friday")},
		Theirs: map[string][]byte{tomb: entryFile("deleted_at: 2026-03-01T00:00:00Z\ndeleted_reason: obsolete\n", "Deploys happen on Tuesday")},
	}
	for _, g := range []MergeGroup{g, swap(g)} {
		r, err := Merge(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 1 || !strings.Contains(string(r.Files[mergePath]), "Friday") || r.Decision == nil || r.Decision.Rule != "edit-forget" {
			t.Errorf("got %q, decision %+v", r.Files, r.Decision)
		}
	}
}

// TestMergeNotes: what a decision says names what happened: an entry
// replaced (not merely forgotten) on one side, and the fields both sides
// changed beside a text both edited.
func TestMergeNotes(t *testing.T) {
	t1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	base := entryFile("", "Deploys happen on Tuesday")
	tomb := "entries/global/deleted/facts/20260101T000000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md"
	g := MergeGroup{ID: "01JD3ZK4Q8V6N2M7T5R9W1X0YB", Paths: []string{tomb, mergePath},
		Base: map[string][]byte{mergePath: base},
		Ours: map[string][]byte{mergePath: entryFile("", "Deploys happen on Friday")},
		Theirs: map[string][]byte{tomb: entryFile("deleted_at: 2026-03-01T00:00:00Z\ndeleted_reason: superseded\nreplaced_by: 01JD3ZK4Q8V6N2M7T5R9W1X0YC\n",
			"Deploys happen on Tuesday")},
	}
	r, err := Merge(g)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision == nil || !strings.Contains(r.Decision.Note, "replaced by 01JD3ZK4Q8V6N2M7T5R9W1X0YC on the other") {
		t.Errorf("decision %+v, want a note naming the replacement", r.Decision)
	}

	g = group(base, entryFile("source: here\n", "Deploys happen on Wednesday"), entryFile("source: there\n", "Deploys happen on Thursday"), t1, t1.Add(time.Hour))
	if r, err = Merge(g); err != nil {
		t.Fatal(err)
	}
	if r.Decision == nil || r.Decision.Rule != "edit-edit" || !strings.HasSuffix(r.Decision.Note, "; fields source from the newer") {
		t.Fatalf("decision %+v, want edit-edit naming the field source", r.Decision)
	}
	if d := r.Decision; d.Path != mergePath || d.Kind != KindFact || d.Scope != DefaultScope {
		t.Errorf("decision at %q, kind %q, scope %q; want %s, fact, global", d.Path, d.Kind, d.Scope, mergePath)
	}
	if !strings.Contains(string(r.Files[mergePath]), "source: there") {
		t.Errorf("the newer side's source did not stand:\n%s", r.Files[mergePath])
	}
	// The texts alone: no fields named.
	g = group(base, entryFile("", "Deploys happen on Wednesday"), entryFile("", "Deploys happen on Thursday"), t1, t1.Add(time.Hour))
	if r, err = Merge(g); err != nil {
		t.Fatal(err)
	}
	if r.Decision == nil || strings.Contains(r.Decision.Note, "fields") {
		t.Errorf("decision %+v, want a note naming no fields", r.Decision)
	}
}

// TestMergeMovedOneSide: a file moved on one side only (here to another
// scope) keeps its new place, with the other side's edit.
func TestMergeMovedOneSide(t *testing.T) {
	t1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	moved := "entries/team/facts/20260101T000000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md"
	base := entryFile("", "Deploys happen on Tuesday")
	ours := []byte(strings.Replace(string(base), "scope: global", "scope: team", 1))
	g := MergeGroup{ID: "01JD3ZK4Q8V6N2M7T5R9W1X0YB", Paths: []string{mergePath, moved},
		Base:     map[string][]byte{mergePath: base},
		Ours:     map[string][]byte{moved: ours},
		Theirs:   map[string][]byte{mergePath: entryFile("", "Deploys happen on Friday")},
		OursTime: t1, TheirsTime: t1.Add(time.Hour)}
	for _, g := range []MergeGroup{g, swap(g)} {
		r, err := Merge(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 1 || !strings.Contains(string(r.Files[moved]), "Friday") {
			t.Errorf("files %q, want the edit at the moved place %s", r.Files, moved)
		}
	}
}

// TestMergeRemovedByHand: an entry one side removed without a tombstone
// (a plain git rm) and the other left alone becomes a tombstone of its
// last version, with deleted_at the removing side's time and a reason
// saying where it was removed; an entry edited on the other side stays
// live, and a tombstone removed by hand stays removed.
func TestMergeRemovedByHand(t *testing.T) {
	t1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	base := entryFile("tags: [ops]\n", "Deploys happen on Tuesday")
	tomb := "entries/global/deleted/facts/20260101T000000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md"
	for _, tc := range []struct {
		name  string
		g     MergeGroup
		where string
		at    time.Time
	}{
		{"on the remote", group(base, base, nil, t1, t2), "on the remote", t2},
		{"in this store", group(base, nil, base, t1, t2), "in this store", t1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Merge(tc.g)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Files) != 1 || r.Files[tomb] == nil {
				t.Fatalf("files = %q, want only the tombstone %s", r.Files, tomb)
			}
			e, err := Parse(tomb, r.Files[tomb])
			if err != nil {
				t.Fatal(err)
			}
			if !e.Deleted() || !e.DeletedAt.Equal(tc.at) || e.Body != "Deploys happen on Tuesday" || e.ID != "01JD3ZK4Q8V6N2M7T5R9W1X0YB" ||
				!strings.Contains(e.DeletedReason, "removed "+tc.where+" without a tombstone") || !strings.Contains(string(r.Files[tomb]), "tags: [ops]") {
				t.Errorf("tombstone:\n%s", r.Files[tomb])
			}
			if r.Decision == nil || r.Decision.Rule != "remove" || r.Decision.Path != tomb || !strings.Contains(r.Decision.Note, tc.where) {
				t.Errorf("decision = %+v", r.Decision)
			}
		})
	}
	// An edit on the other side wins over the removal, as before.
	r, err := Merge(group(base, entryFile("", "Deploys happen on Friday"), nil, t1, t2))
	if err != nil || len(r.Files) != 1 || !strings.Contains(string(r.Files[mergePath]), "Friday") {
		t.Errorf("edit against removal: %q, %v", r.Files, err)
	}
	// A tombstone removed by hand is a purge: it stays removed.
	dead := entryFile("deleted_at: 2026-01-02T00:00:00Z\ndeleted_reason: obsolete\n", "Deploys happen on Tuesday")
	g := MergeGroup{ID: "01JD3ZK4Q8V6N2M7T5R9W1X0YB", Paths: []string{tomb}, Base: map[string][]byte{tomb: dead}, Ours: map[string][]byte{tomb: dead}, Theirs: map[string][]byte{}}
	if r, err := Merge(g); err != nil || len(r.Files) != 0 {
		t.Errorf("tombstone removed by hand: %q, %v", r.Files, err)
	}
}
