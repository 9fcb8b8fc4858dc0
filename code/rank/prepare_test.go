package rank

import (
	"slices"
	"testing"
)

// Files prepared by several Preparers, each with its own cache, and merged
// in one order give the model Put gives in that order, byte for byte.
func TestPreparedEqualsPut(t *testing.T) {
	docs := tiny()
	docs = append(docs, docs[1], docs[3])
	serial := New()
	for _, d := range docs {
		serial.put(d)
	}
	merged := New()
	preps := []*Preparer{NewPreparer(), NewPreparer()}
	var ready []*Prepared
	for i, d := range docs {
		ready = append(ready, preps[i%2].prepare(d))
	}
	for _, p := range ready {
		merged.PutPrepared(p)
	}
	a, err := serial.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := merged.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Fatalf("prepared model differs from Put's: %d bytes against %d", len(b), len(a))
	}
}
