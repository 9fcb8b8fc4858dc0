package mira

import (
	"testing"

	"github.com/miramem/mira/mem"
)

func TestExtractSubject(t *testing.T) {
	adds := []mem.Op{{Op: "add", Kind: "fact", ID: "A"}, {Op: "update", Kind: "fact", ID: "B"}, {Op: "add", Kind: "goal", ID: "C"}}
	tests := []struct {
		ops    []mem.Op
		counts map[string]int
		turns  int
		want   string
	}{
		{adds, map[string]int{"add": 2, "update": 1}, 0, "extract: 2 memories (1 fact, 1 goal); 1 updated"},
		{adds[:1], map[string]int{"add": 1, "delete": 2}, 3, "extract: fact A; 2 deleted, 3 turns read"},
		{nil, map[string]int{"none": 2}, 4, "extract: nothing new; 4 turns read"},
		{nil, nil, 1, "extract: nothing new; 1 turn read"},
	}
	for _, tt := range tests {
		if got := extractSubject(tt.ops, tt.counts, tt.turns); got != tt.want {
			t.Errorf("extractSubject(%v) = %q, want %q", tt.counts, got, tt.want)
		}
	}
}
