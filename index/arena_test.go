package index

import (
	"testing"
	"time"

	"github.com/miramem/mira/internal/arena"
)

// TestArenaVecInput: a document kept in the arena is the document
// newVecInput makes, its creation time in UTC (a location is a pointer).
func TestArenaVecInput(t *testing.T) {
	var a, terms arena.Arena
	zone := time.FixedZone("X", 3600)
	d := Doc{Path: "entries/p/note/01A.md", ID: "01A", Kind: "note", Scope: "p", Text: "some words",
		Hash: "abc", Tags: []string{"t1"}, From: []string{"01B"}, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, zone)}
	lx := lexOf(&d, nil)
	in := arenaVecInput(&a, d, lx, &terms)
	want := newVecInput(d, lx)
	if in.path != want.path || in.id != want.id || in.text != want.text || in.content != want.content ||
		!in.created.Equal(want.created) || in.created.Location() != time.UTC || string(in.terms) != string(want.terms) ||
		len(in.tags) != 1 || in.tags[0] != "t1" || len(in.from) != 1 || in.from[0] != "01B" || in.lsum != want.lsum {
		t.Errorf("vecInput in the arena differs:\n got %+v\nwant %+v", in.vecDoc, want.vecDoc)
	}
}
