package rank

import (
	"slices"
	"testing"

	"github.com/miramem/mira/internal/text"
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

// A Preparer that starts its numbers again while files it prepared
// before wait to be merged, and files merged out of the order they were
// prepared in: the model is still the one Put gives, byte for byte.
func TestPreparedAcrossForgetting(t *testing.T) {
	defer func(n int) { maxIdentCache = n }(maxIdentCache)
	maxIdentCache = 8 // forget every file or two
	docs := tiny()
	for range 3 {
		docs = append(docs, docs...)
	}
	serial := New()
	merged := New()
	preps := []*Preparer{NewPreparer(), NewPreparer()}
	var ready []*Prepared
	for i, d := range docs {
		ready = append(ready, preps[i%2].prepare(d))
	}
	// Merged newest first within each group of three, against Put in
	// the same order.
	var order []int
	for i := 0; i < len(ready); i += 3 {
		for j := min(i+2, len(ready)-1); j >= i; j-- {
			order = append(order, j)
		}
	}
	for _, i := range order {
		serial.put(docs[i])
		merged.PutPrepared(ready[i])
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

// A Preparer's terms of an identifier are those of the function terms,
// in order, whether it met the identifier's parts before or not.
func TestPreparerTerms(t *testing.T) {
	ids := []string{"ExecuteC", "HTTPServer", "utf8String", "parse_flag_set", "x", "Go", "theEnd", "IfElse",
		"ReturnType", "a1b2c3", "__init__", "getHTTPResponseCode", "ÜberGröße", "naïveMatch", "XMLHttpRequest",
		"the", "func", "useUsedUsing", "ID", "iD", "TCPConn", "v2Beta", "mp3Player", "Über", "FuncType", "Do_es", "WasN", "A_b"}
	for range 2 {
		p := NewPreparer()
		for _, id := range ids {
			var want []string
			terms(id, text.Stem, func(s string) { want = append(want, s) })
			off := uint32(len(p.arena))
			p.terms(id)
			var got []string
			for _, n := range p.arena[off:] {
				got = append(got, p.words[n])
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: terms %q, want %q", id, got, want)
			}
		}
		slices.Reverse(ids)
	}
}

// A Preparer that added files to one model opened from its encoding must
// not lend the numbers it learnt there to another opened model: each
// decoded model numbers its terms and names afresh (Model.epoch).
func TestPreparedAcrossOpenedModels(t *testing.T) {
	docs := tiny()
	encode := func(in []input) []byte {
		m := New()
		for _, d := range in {
			m.put(d)
		}
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	open := func(b []byte) *Model {
		m := New()
		if err := m.UnmarshalBinary(slices.Clone(b)); err != nil {
			t.Fatal(err)
		}
		return m
	}
	x, y := encode(docs[:1]), encode(docs[1:2])
	p := NewPreparer()
	a, b := open(x), open(y)
	a.PutPrepared(p.prepare(docs[2]))
	b.PutPrepared(p.prepare(docs[2]))
	want := open(y)
	want.put(docs[2])
	got, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, w) {
		t.Fatalf("second opened model differs from Put's: %d bytes against %d", len(got), len(w))
	}
}
