package mem

import (
	"reflect"
	"testing"
	"time"
)

// TestSlabKeepsEntries: an entry kept in the slab equals the one given,
// and stays so when the original changes and when many more are kept.
func TestSlabKeepsEntries(t *testing.T) {
	var s Slab
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var orig []Entry
	var kept []*Entry
	for i := range 3000 {
		e := &Entry{ID: "01ABC", Kind: KindNote, Scope: "proj", Body: "text of a memory", Tags: []string{"a", "b"},
			Project: "p", Source: "cli", CreatedAt: at.Add(time.Duration(i)), Extra: map[string]any{"k": i}}
		o := *e
		o.Tags = append([]string(nil), e.Tags...)
		orig = append(orig, o)
		kept = append(kept, s.Keep(e))
		e.Body, e.Tags[0] = "changed", "changed"
	}
	for i, k := range kept {
		if !reflect.DeepEqual(*k, orig[i]) {
			t.Fatalf("entry %d kept as %+v, want %+v", i, *k, orig[i])
		}
	}
}
