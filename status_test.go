package mira

import (
	"testing"

	"github.com/miramem/mira/mem"
)

// A new goal or task is open unless it says otherwise, whichever front end
// stores it; other kinds get no status.
func TestRememberOpensGoalsAndTasks(t *testing.T) {
	m := open(t, false)
	entries := []*mem.Entry{
		{Kind: mem.KindGoal, Body: "ship the importer"},
		{Kind: mem.KindTask, Body: "write the importer's man page"},
		{Kind: mem.KindTask, Body: "an old task", Status: "done"},
		{Kind: mem.KindNote, Body: "the importer reads CSV"},
	}
	res, err := m.Remember(t.Context(), entries, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"open", "open", "done", ""}
	for i, it := range res.Items {
		e, err := m.st.FindID(it.Entry.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != want[i] {
			t.Errorf("%s %q: status %q, want %q", e.Kind, e.Body, e.Status, want[i])
		}
	}
}
